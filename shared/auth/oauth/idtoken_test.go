package oauth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
)

func TestIDTokensOfTheIssuerForTheClientAreVerified(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss).IDTokens("approvals")
	const nonce = "n-0S6_WzA2Mj"
	valid := iss.IDToken(now, "approvals", "firm", "u_attorney", nonce)
	got, err := v.Verify(context.Background(), iss.SignIDToken(t, valid), nonce, now)
	if err != nil {
		t.Fatalf("Verify() error = %v", err)
	}
	want := oauth.IDClaims{Tenant: "firm", User: "u_attorney", Subject: "u_attorney", ExpiresAt: now.Add(time.Hour)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Verify() (-want +got):\n%s", diff)
	}
	t.Run("several audiences with azp naming the client", func(t *testing.T) {
		c := valid.With("aud", []string{"approvals", "other"}).With("azp", "approvals")
		if _, err := v.Verify(context.Background(), iss.SignIDToken(t, c), nonce, now); err != nil {
			t.Errorf("Verify() error = %v", err)
		}
	})
}

func TestIDTokenRefusals(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss).IDTokens("approvals")
	const nonce = "n-0S6_WzA2Mj"
	valid := iss.IDToken(now, "approvals", "firm", "u_attorney", nonce)
	sign := func(c oauthtest.Claims) func(t *testing.T) string {
		return func(t *testing.T) string { return iss.SignIDToken(t, c) }
	}
	for _, c := range []struct {
		name  string
		token func(t *testing.T) string
		nonce string
	}{
		{"another client's", sign(valid.With("aud", "other")), nonce},
		{"azp naming another client", sign(valid.With("azp", "other")), nonce},
		{"several audiences without azp", sign(valid.With("aud", []string{"approvals", "other"})), nonce},
		{"another issuer's", sign(valid.With("iss", "https://evil.example")), nonce},
		{"expired", sign(valid.With("exp", now.Add(-time.Minute).Unix())), nonce},
		{"issued in the future", sign(valid.With("iat", now.Add(time.Hour).Unix())), nonce},
		{"without iat", sign(valid.With("iat", nil)), nonce},
		{"without sub", sign(valid.With("sub", nil)), nonce},
		{"without the nonce", sign(valid.With("nonce", nil)), nonce},
		{"with another nonce", sign(valid), "another"},
		{"checked against no nonce", sign(valid), ""},
		{"without a tenant", sign(valid.With(oauth.DefaultTenantClaim, nil)), nonce},
		{"an access token (typ at+jwt)", func(t *testing.T) string { return iss.Sign(t, jose.ES256, oauthtest.ECKeyID, valid) }, nonce},
		{"unsigned", func(t *testing.T) string { return oauthtest.Unsigned(valid) }, nonce},
		{"HS256 keyed with the public key", func(t *testing.T) string { return iss.HS256WithPublicKey(t, valid) }, nonce},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), c.token(t), c.nonce, now)
			if !errors.Is(err, oauth.ErrInvalidIDToken) {
				t.Errorf("Verify() error = %v, want ErrInvalidIDToken", err)
			}
			if errors.Is(err, oauth.ErrInvalidToken) {
				t.Errorf("Verify() error = %v wraps ErrInvalidToken: an ID token's refusal is its own", err)
			}
		})
	}
}

// An ID token the approval page received never opens /mcp: its audience is
// the page's client id, not the resource.
func TestAnIDTokenOfTheApprovalPageIsRefusedAsAnAccessToken(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss)
	c := iss.IDToken(now, "approvals", "firm", "u_attorney", "n").With("scope", "custody:mcp custody:read")
	if _, err := v.Verify(context.Background(), iss.SignIDToken(t, c), now); !errors.Is(err, oauth.ErrInvalidToken) {
		t.Errorf("Verify(an ID token for the approval page's client) error = %v, want ErrInvalidToken", err)
	}
}
