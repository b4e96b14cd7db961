package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// RefusedError is Readmit's answer for a reference that no longer admits
// anything: Reason says why, in a plain sentence that names no secret (the
// task worker fails the task with it, docs/decisions.md "Identity and
// binding").
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "gate: re-admission refused: " + e.Reason }

// Reasons of a refused re-admission.
const (
	ReasonRevoked          = "the credential that created this work was revoked"
	ReasonUnknown          = "the credential that created this work no longer exists"
	ReasonPrincipalRemoved = "the person the credential belongs to is no longer at the firm"
	ReasonFrozen           = "the firm's access is switched off (kill switch)"
	ReasonExpired          = "the access token that created this work has expired"
)

// Readmit admits again the credential a stored reference names, for work
// that outlives its request (a task worker, the sweeper, an approval
// executing a proposal): the second way to admit beside Admit (issue 9).
// Nothing about authority is taken from the stored work: an API key is
// re-read by its credential id (its tenant-listing row, then in one batch
// read the credential row, its owner's principal row and the tenant row);
// an OAuth token, which has no row, is rebuilt from the claims its
// reference recorded and honoured until the expiry it carried, with its
// owner's principal and tenant re-read the same way.
//
// Refusals are a *RefusedError with the reason: revoked, unknown, the
// owner removed from the firm, the tenant frozen (its row's Frozen or the
// gate's configured kill switch), or an OAuth token past its exp. A store
// failure is any other error (wrapping store.ErrUnavailable). The
// Admission has no session and an allowed, uncounted rate decision: such
// work does not charge the rate limit, and commits with Count 0.
func (g *Gate) Readmit(ctx context.Context, ref auth.Reference, now time.Time) (*mcp.Admission, error) {
	adm, _, err := g.ReadmitWith(ctx, ref, now, ReadmitOptions{})
	return adm, err
}

// ReadmitOptions are the optional inputs of ReadmitWith.
type ReadmitOptions struct {
	// KeyHash is the API key's hash (auth.Credential.KeyHash) as the work
	// stored it beside its reference: the credential row is then read in
	// the one batch read, without the credential-id lookup first. It is a
	// pointer, not authority: the row found must still name the
	// reference's credential, tenant and owner, and not be revoked.
	KeyHash string
	// Also are further rows to read in the same batch read (a download
	// reads the matter, the document and its version with the credential).
	Also []store.Key
}

// ReadmitWith is Readmit reading opts.Also in its batch read, and
// returning those rows aligned with opts.Also (nil where absent). With
// opts.KeyHash an API key costs that one batch read, as an OAuth reference
// always does; without it, the credential-id lookup first.
func (g *Gate) ReadmitWith(ctx context.Context, ref auth.Reference, now time.Time, opts ReadmitOptions) (*mcp.Admission, []*store.Item, error) {
	if err := ref.Validate(); err != nil {
		return nil, nil, &RefusedError{Reason: ReasonUnknown}
	}
	if g.frozen[ref.Tenant] {
		return nil, nil, &RefusedError{Reason: ReasonFrozen}
	}
	var cred *auth.Credential
	keys := []store.Key{records.PrincipalKey(ref.Tenant, ref.Owner), records.TenantKey(ref.Tenant)}
	switch ref.Type {
	case auth.RefAPIKey:
		hash := opts.KeyHash
		if hash == "" {
			dir, err := g.store.Get(ctx, auth.DirectoryKey(ref.Tenant, ref.CredentialID))
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil, &RefusedError{Reason: ReasonUnknown}
			}
			if err != nil {
				return nil, nil, fmt.Errorf("readmit: %w", err)
			}
			hash = dir.String("key_hash")
		}
		keys = append(keys, auth.CredentialKey(hash))
	case auth.RefOAuth:
		if !now.Before(ref.ExpiresAt) {
			return nil, nil, &RefusedError{Reason: ReasonExpired}
		}
		// The id is derived from the claims (oauth.CredentialID): a
		// reference whose claims do not give its id names no credential.
		id, hash := oauth.CredentialID(ref.Issuer, ref.Tenant, ref.Subject, ref.ClientID, ref.Class)
		if id != ref.CredentialID {
			return nil, nil, &RefusedError{Reason: ReasonUnknown}
		}
		cred = &auth.Credential{ID: id, Tenant: ref.Tenant, Owner: ref.Owner, KeyHash: hash,
			Scopes: auth.ClassScopes(ref.Class, ref.Scopes), Class: ref.Class, Label: "oauth",
			OAuth: &auth.OAuthClaims{Issuer: ref.Issuer, Subject: ref.Subject, ClientID: ref.ClientID, ExpiresAt: ref.ExpiresAt}}
	}
	own := len(keys)
	rows, err := g.store.BatchGet(ctx, append(keys, opts.Also...))
	if err != nil {
		return nil, nil, fmt.Errorf("readmit: %w", err)
	}
	if rows[0] == nil {
		return nil, nil, &RefusedError{Reason: ReasonPrincipalRemoved}
	}
	if rows[1] != nil {
		var t records.Tenant
		if err := records.DecodeRow(*rows[1], &t); err != nil {
			return nil, nil, fmt.Errorf("readmit: %w", err)
		}
		if t.Frozen {
			return nil, nil, &RefusedError{Reason: ReasonFrozen}
		}
	}
	if ref.Type == auth.RefAPIKey {
		if rows[2] == nil {
			return nil, nil, &RefusedError{Reason: ReasonUnknown}
		}
		if cred, err = auth.DecodeCredential(*rows[2]); err != nil {
			return nil, nil, fmt.Errorf("readmit: %w", err)
		}
		if cred.ID != ref.CredentialID || cred.Tenant != ref.Tenant {
			return nil, nil, &RefusedError{Reason: ReasonUnknown}
		}
		if cred.Revoked {
			return nil, nil, &RefusedError{Reason: ReasonRevoked}
		}
	}
	if cred.Owner != ref.Owner {
		return nil, nil, &RefusedError{Reason: ReasonUnknown}
	}
	return &mcp.Admission{Credential: cred, Rate: ratelimit.Decision{Allowed: true},
		State: &admitted{now: now, keyHash: cred.KeyHash}}, rows[own:], nil
}
