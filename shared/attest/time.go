package attest

import (
	"fmt"
	"time"
)

// TimeLayout is the one layout of a timestamp on the wire: RFC 3339 in UTC
// with exactly three fractional digits, trailing zeros kept
// ("2026-07-18T02:25:28.260Z", docs/contracts.md §1). Every time of an answer
// has this fixed width, so times compare and sort as text; precision below
// a millisecond is dropped (truncated, never rounded into the future).
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time is a timestamp as answers carry it: encoded in TimeLayout. The zero
// Time encodes as the zero instant; a time that may be absent is a *Time
// (null).
type Time time.Time

// At returns t as a wire timestamp.
func At(t time.Time) Time { return Time(t) }

// AtPtr returns t as a wire timestamp, or nil when t is nil.
func AtPtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	w := Time(*t)
	return &w
}

// Time returns the timestamp as a time.Time.
func (t Time) Time() time.Time { return time.Time(t) }

// String returns the timestamp in TimeLayout.
func (t Time) String() string { return time.Time(t).UTC().Format(TimeLayout) }

// MarshalJSON encodes the timestamp as a JSON string in TimeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	u := time.Time(t).UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("attest: time %v has no RFC 3339 year", u)
	}
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = u.AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON decodes any RFC 3339 timestamp (a client or test reading an
// answer back).
func (t *Time) UnmarshalJSON(b []byte) error {
	var u time.Time
	if err := u.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = Time(u)
	return nil
}
