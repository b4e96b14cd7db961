package clamd_test

import (
	"testing"

	"github.com/custodymcp/custody/shared/scan/clamd"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"100M", 100 << 20, false},
		{"64m", 64 << 20, false},
		{"512K", 512 << 10, false},
		{"2048", 2048, false},
		{"0", 0, false},
		{"", 0, true},
		{"M", 0, true},
		{"1G", 0, true},
		{"-1M", 0, true},
		{"1.5M", 0, true},
		{"100 M", 0, true},
	}
	for _, tc := range tests {
		got, err := clamd.ParseSize(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		o       clamd.Options
		wantMax int64
		wantErr bool
	}{
		{"an address alone takes the 100M default max", clamd.Options{Addr: "127.0.0.1:3310"}, clamd.DefaultMax, false},
		{"a max is kept", clamd.Options{Addr: "127.0.0.1:3310", Max: 64 << 20}, 64 << 20, false},
		{"no address is refused", clamd.Options{}, 0, true},
		{"an address without a port is refused", clamd.Options{Addr: "127.0.0.1"}, 0, true},
		{"a negative max is refused", clamd.Options{Addr: "127.0.0.1:3310", Max: -1}, 0, true},
		{"a max of 4 GiB is refused (clamd's stream limit is below it)", clamd.Options{Addr: "127.0.0.1:3310", Max: 4 << 30}, 0, true},
		{"negative attempts are refused", clamd.Options{Addr: "127.0.0.1:3310", Attempts: -1}, 0, true},
		{"a negative timeout is refused", clamd.Options{Addr: "127.0.0.1:3310", IOTimeout: -1}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := clamd.New(tc.o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New() error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && e.MaxBytes() != tc.wantMax {
				t.Errorf("MaxBytes() = %d, want %d", e.MaxBytes(), tc.wantMax)
			}
		})
	}
}
