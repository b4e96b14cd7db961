package tools

import (
	"math"
	"testing"
)

func TestDecodeArgsTakesIntegersWrittenAsJSONSchemaAllows(t *testing.T) {
	type in struct {
		CaseID string `json:"case_id"`
		Paging
		Nested struct {
			N int `json:"n"`
		} `json:"nested"`
	}
	for _, tc := range []struct {
		args          string
		limit, offset int
		field         string // "" means the decode succeeds
	}{
		{`{"limit":2}`, 2, 0, ""},
		{`{"limit":2.0}`, 2, 0, ""},
		{`{"limit":1e3,"offset":5.00}`, 1000, 5, ""},
		{`{"limit":1E+2}`, 100, 0, ""},
		{`{"limit":1e23}`, math.MaxInt, 0, ""},
		{`{"offset":9223372036854775808}`, 0, math.MaxInt, ""},
		{`{"offset":-1e30}`, 0, math.MinInt, ""},
		{`{"limit":2.5}`, 0, 0, "limit"},
		{`{"limit":"2"}`, 0, 0, "limit"},
		{`{"nested":{"n":2.0}}`, 0, 0, "n"},
	} {
		var v in
		field, err := decodeArgs([]byte(tc.args), &v)
		if tc.field != "" {
			if err == nil || field != tc.field {
				t.Errorf("%s: field %q, err %v; want a failure naming %q", tc.args, field, err, tc.field)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v (field %q)", tc.args, err, field)
			continue
		}
		if v.Limit != tc.limit || v.Offset != tc.offset {
			t.Errorf("%s: limit %d offset %d, want %d %d", tc.args, v.Limit, v.Offset, tc.limit, tc.offset)
		}
	}
}
