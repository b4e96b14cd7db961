package attest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/attest"
)

func TestTimeIsWrittenInOneFixedWidthLayout(t *testing.T) {
	east := time.FixedZone("UTC+2", 2*3600)
	for _, tc := range []struct {
		name string
		in   time.Time
		want string
	}{
		{"whole seconds keep three zeros", time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), `"2026-11-30T12:00:00.000Z"`},
		{"a trailing zero is kept", time.Date(2026, 7, 18, 2, 25, 28, 260_000_000, time.UTC), `"2026-07-18T02:25:28.260Z"`},
		{"nanoseconds are truncated, never rounded up", time.Date(2026, 7, 18, 2, 25, 28, 999_999_999, time.UTC), `"2026-07-18T02:25:28.999Z"`},
		{"another zone is written in UTC", time.Date(2026, 1, 1, 1, 0, 0, 5_000_000, east), `"2025-12-31T23:00:00.005Z"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(attest.At(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("Marshal(%v) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
			var back attest.Time
			if err := json.Unmarshal(got, &back); err != nil || !back.Time().Equal(tc.in.Truncate(time.Millisecond)) {
				t.Errorf("Unmarshal(%s) = %v, %v; want %v", got, back.Time(), err, tc.in.Truncate(time.Millisecond))
			}
		})
	}
	if got, _ := json.Marshal(struct {
		At *attest.Time `json:"at"`
	}{attest.AtPtr(nil)}); string(got) != `{"at":null}` {
		t.Errorf("a nil time = %s, want null", got)
	}
	if _, err := json.Marshal(attest.At(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))); err == nil {
		t.Error("a time past year 9999 was written, want an error")
	}
}
