package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
)

// decodeDoc decodes arguments for validation, numbers as json.Number: a
// number stays as written (1e400 overflows a float64 but is valid JSON),
// and the validator compares json.Number exactly.
func decodeDoc(raw json.RawMessage) (any, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the arguments")
	}
	return doc, nil
}

// decodeArgs decodes validated arguments into a tool's input type. The
// schema has already accepted them, so what can still fail is Go's side: an
// integer written as 2.0 or 1e3 (an integer in JSON Schema 2020-12 §6.1.1,
// "a number with a zero fractional part") or one beyond the int range. Such
// a top-level field is rewritten as a plain integer, clamped to the int
// range (the tools clamp their own bounds further), and decoding is
// retried; only the fields json names in a type error are touched. It
// returns the JSON name of the field the final failure names ("" when
// unknown).
func decodeArgs(args json.RawMessage, v any) (field string, err error) {
	err = json.Unmarshal(args, v)
	if err == nil {
		return "", nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(args, &fields) != nil {
		return "", err
	}
	for range len(fields) {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return "", err
		}
		// te.Field is a path through Go's embedded structs (Paging.limit):
		// its last element is the JSON name.
		name := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
		raw, top := fields[name]
		fixed, ok := integral(raw)
		if !top || !ok || !strings.HasPrefix(te.Value, "number") {
			return name, err
		}
		fields[name] = fixed
		rewritten, merr := json.Marshal(fields)
		if merr != nil {
			return te.Field, err
		}
		if err = json.Unmarshal(rewritten, v); err == nil {
			return "", nil
		}
	}
	return "", err
}

// integral returns a JSON number with a zero fractional part as a plain
// integer literal within the int range; ok is false for anything else.
func integral(raw json.RawMessage) (json.RawMessage, bool) {
	f, _, err := big.ParseFloat(strings.TrimSpace(string(raw)), 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return nil, false
	}
	switch {
	case f.Cmp(big.NewFloat(math.MaxInt)) >= 0:
		return json.RawMessage(big.NewInt(math.MaxInt).String()), true
	case f.Cmp(big.NewFloat(math.MinInt)) <= 0:
		return json.RawMessage(big.NewInt(math.MinInt).String()), true
	}
	i, _ := f.Int(nil)
	return json.RawMessage(i.String()), true
}
