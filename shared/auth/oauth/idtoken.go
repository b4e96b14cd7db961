package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// ErrInvalidIDToken: an OpenID Connect ID token that is malformed, badly
// signed, expired, issued before its time, of another issuer or client, or
// without the nonce the sign-in sent, or that names no resolvable principal.
// IDTokenVerifier.Verify's refusals wrap it (and never ErrInvalidToken, so a
// caller cannot mistake one kind of token's refusal for the other's).
var ErrInvalidIDToken = errors.New("oauth: invalid ID token")

// IDTokenVerifier verifies the ID tokens the configured issuer returns to
// one OpenID Connect client at the end of its code flow (the approval page's
// sign-in, shared/approvals). It shares the Verifier's cached key set, so
// the issuer's JWKS is fetched once for both kinds of token, and its
// principal mapping (TenantClaim or Tenant, UserClaim), so a person is the
// same principal whether they sign in or their agent presents a token.
type IDTokenVerifier struct {
	v        *Verifier
	clientID string
}

// IDTokens returns the verifier of ID tokens issued to clientID.
func (v *Verifier) IDTokens(clientID string) *IDTokenVerifier {
	return &IDTokenVerifier{v: v, clientID: clientID}
}

// ClientID is the client whose ID tokens are verified: their audience.
func (iv *IDTokenVerifier) ClientID() string { return iv.clientID }

// IDClaims are what a verified ID token says of the person who signed in.
type IDClaims struct {
	// Tenant and User are the principal (the configured claims).
	Tenant, User string
	// Subject is "sub", the issuer's own id of the person.
	Subject string
	// ExpiresAt is "exp".
	ExpiresAt time.Time
}

// Verify verifies an ID token at now (OpenID Connect Core 1.0 §3.1.3.7):
// the checks every token of the issuer gets (the package doc: an
// asymmetric signature by the issuer's key set, no "crit", "iss" exactly
// the issuer), "typ" absent or JWT (an access token, at+jwt, is refused:
// RFC 9068 §4), "aud" containing the client id, "azp" equal to it when
// present and required when there are several audiences, "exp" not passed
// and "iat" not in the future (with Leeway), "sub" present, and "nonce"
// equal to the nonce the sign-in sent (§3.1.2.1; compared in constant time).
// The principal comes from the configured tenant and user claims, each a
// well-formed id. Refusals wrap ErrInvalidIDToken; an unreachable key set
// is ErrUnavailable. No error quotes the token.
func (iv *IDTokenVerifier) Verify(ctx context.Context, token, nonce string, now time.Time) (IDClaims, error) {
	std, extra, err := iv.v.verifySigned(ctx, token, now, idTokenTypes)
	if err != nil {
		return IDClaims{}, asIDTokenError(err)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: iv.v.cfg.Issuer, AnyAudience: jwt.Audience{iv.clientID}, Time: now}, Leeway); err != nil {
		return IDClaims{}, invalidID("%v", err)
	}
	switch {
	case std.Expiry == nil:
		return IDClaims{}, invalidID("no exp")
	case std.IssuedAt == nil:
		return IDClaims{}, invalidID("no iat")
	case std.Subject == "":
		return IDClaims{}, invalidID("no sub")
	case std.AZP != "" && std.AZP != iv.clientID:
		return IDClaims{}, invalidID("azp names another client")
	case len(std.Audience) > 1 && std.AZP == "":
		return IDClaims{}, invalidID("several audiences and no azp")
	case !slices.Contains(std.Audience, iv.clientID):
		return IDClaims{}, invalidID("not issued to this client")
	}
	got, _ := extra["nonce"].(string)
	if nonce == "" || subtle.ConstantTimeCompare([]byte(got), []byte(nonce)) != 1 {
		return IDClaims{}, invalidID("the nonce is not the sign-in's")
	}
	tenant, user, err := iv.v.tenantAndUser(extra)
	if err != nil {
		return IDClaims{}, asIDTokenError(err)
	}
	return IDClaims{Tenant: tenant, User: user, Subject: std.Subject, ExpiresAt: std.Expiry.Time().UTC()}, nil
}

// asIDTokenError turns the shared checks' invalid-token refusal into the ID
// token's own; ErrUnavailable passes unchanged.
func asIDTokenError(err error) error {
	var r *refusal
	if errors.As(err, &r) && r.kind == ErrInvalidToken {
		return &refusal{op: "verify ID token", kind: ErrInvalidIDToken, detail: r.detail}
	}
	return err
}

func invalidID(format string, args ...any) error {
	return &refusal{op: "verify ID token", kind: ErrInvalidIDToken, detail: fmt.Sprintf(format, args...)}
}
