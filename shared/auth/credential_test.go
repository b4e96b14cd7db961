package auth_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
)

func TestPresentedReturnsTheOneCredentialAndRefusesTwo(t *testing.T) {
	a, b := auth.NewKey(), auth.NewKey()
	for _, tc := range []struct {
		name        string
		header      http.Header
		wantToken   string
		wantPresent bool
		wantErr     error
	}{
		{"nothing is not presented", http.Header{}, "", false, nil},
		{"empty headers are not presented", http.Header{"Authorization": {""}, "X-Api-Key": {""}}, "", false, nil},
		{"a bearer key", http.Header{"Authorization": {"Bearer " + a}}, a, true, nil},
		{"the scheme in any case", http.Header{"Authorization": {"bEARER " + a}}, a, true, nil},
		{"an X-API-Key", http.Header{"X-Api-Key": {a}}, a, true, nil},
		{"an opaque bearer token as is", http.Header{"Authorization": {"Bearer eyJ.x.y"}}, "eyJ.x.y", true, nil},
		{"another scheme is presented and empty", http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}, "", true, nil},
		{"the same key both ways is one credential", http.Header{"Authorization": {"Bearer " + a}, "X-Api-Key": {a}}, a, true, nil},
		{"an empty Authorization beside an X-API-Key", http.Header{"Authorization": {""}, "X-Api-Key": {a}}, a, true, nil},
		{"two Authorization lines", http.Header{"Authorization": {"Bearer " + a, "Bearer " + b}}, "", false, auth.ErrTwoCredentials},
		{"one key in two Authorization lines", http.Header{"Authorization": {"Bearer " + a, "Bearer " + a}}, "", false, auth.ErrTwoCredentials},
		{"an empty and a full Authorization line", http.Header{"Authorization": {"", "Bearer " + a}}, "", false, auth.ErrTwoCredentials},
		{"two X-API-Key lines", http.Header{"X-Api-Key": {a, b}}, "", false, auth.ErrTwoCredentials},
		{"Authorization and a different X-API-Key", http.Header{"Authorization": {"Bearer " + a}, "X-Api-Key": {b}}, "", false, auth.ErrTwoCredentials},
		{"another scheme and an X-API-Key", http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}, "X-Api-Key": {a}}, "", false, auth.ErrTwoCredentials},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, present, err := auth.Presented(tc.header)
			if token != tc.wantToken || present != tc.wantPresent || !errors.Is(err, tc.wantErr) {
				t.Errorf("Presented(%v) = %q, %t, %v; want %q, %t, %v", tc.header, token, present, err, tc.wantToken, tc.wantPresent, tc.wantErr)
			}
		})
	}
}
