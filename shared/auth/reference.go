package auth

import (
	"errors"
	"fmt"
	"time"
)

// Reference names the credential behind durable work — a task, a
// proposal, an upload — so that the work can be re-admitted long after its
// request ended (docs/contracts.md §6, requested_by). It is a reference, not
// a capability snapshot: an API key is named by its credential id and
// re-read from the store, so a key revoked since is refused. An OAuth token
// has no row to re-read; its reference records what the verified token
// carried (issuer, subject, client, class, scopes) and its expiry, and the
// work is honoured only until that expiry — Custody cannot revoke a token,
// so it trusts one no longer than the token itself asks.
type Reference struct {
	// Type is "api_key" or "oauth".
	Type         string `json:"type"`
	Tenant       string `json:"tenant"`
	CredentialID string `json:"credential_id"`
	// Owner is the principal acting through the credential.
	Owner string `json:"owner"`
	// The OAuth token's claims (Type "oauth" only).
	Issuer    string    `json:"issuer,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	ClientID  string    `json:"client_id,omitempty"`
	Class     Class     `json:"class,omitempty"`
	Scopes    []Scope   `json:"scopes,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Reference types.
const (
	RefAPIKey = "api_key"
	RefOAuth  = "oauth"
)

// OAuthClaims are what a verified OAuth access token said of itself, kept
// on its Credential for references.
type OAuthClaims struct {
	Issuer, Subject, ClientID string
	ExpiresAt                 time.Time
}

// Reference returns the stored reference to c.
func (c *Credential) Reference() Reference {
	ref := Reference{Type: RefAPIKey, Tenant: c.Tenant, CredentialID: c.ID, Owner: c.Owner}
	if c.OAuth != nil {
		ref.Type = RefOAuth
		ref.Issuer, ref.Subject, ref.ClientID = c.OAuth.Issuer, c.OAuth.Subject, c.OAuth.ClientID
		ref.Class, ref.Scopes, ref.ExpiresAt = c.Class, c.Scopes, c.OAuth.ExpiresAt
	}
	return ref
}

// Validate reports whether the reference is complete for its type.
func (r Reference) Validate() error {
	if r.Tenant == "" || r.CredentialID == "" || r.Owner == "" {
		return errors.New("auth: a credential reference names a tenant, a credential id and an owner")
	}
	switch r.Type {
	case RefAPIKey:
		return nil
	case RefOAuth:
		if r.Issuer == "" || r.Subject == "" || r.ExpiresAt.IsZero() {
			return errors.New("auth: an OAuth reference names the issuer, the subject and the expiry")
		}
		return nil
	}
	return fmt.Errorf("auth: unknown credential reference type %q", r.Type)
}
