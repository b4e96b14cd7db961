package uploads_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/uploads"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// clock is a settable clock for the engines' expiry.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// firm is the demo firm on a fresh engine, with the keys the tests name.
type firm struct {
	st    store.Store
	clock *clock
	keys  map[string]*auth.Credential
}

// engines returns the demo firm on each engine.
func engines(t *testing.T) map[string]func(*testing.T) *firm {
	return map[string]func(*testing.T) *firm{
		"file": func(t *testing.T) *firm {
			c := &clock{now: epoch}
			fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fs.Close() })
			return newFirm(t, fs, c)
		},
		"dynamodb": func(t *testing.T) *firm {
			c := &clock{now: epoch}
			s, _ := dynamotest.NewStore(t, c.Now)
			return newFirm(t, s, c)
		},
	}
}

func newFirm(t *testing.T, st store.Store, c *clock) *firm {
	t.Helper()
	ctx := context.Background()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Import(ctx, st, fx, epoch.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	f := &firm{st: st, clock: c, keys: map[string]*auth.Credential{}}
	for name, req := range map[string]auth.MintRequest{
		"writer":      {Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}},
		"reader":      {Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeRead}},
		"client_safe": {Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeRead}, Class: auth.ClassClientSafe},
		"paralegal":   {Owner: seed.DemoParalegal, Scopes: []auth.Scope{auth.ScopeWrite}},
		"allow_list":  {Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeWrite}, AllowList: []string{seed.Meridian}},
		"revoked":     {Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeWrite}},
	} {
		req.Tenant = seed.DemoTenant
		_, cred, err := auth.Mint(ctx, st, req, epoch.Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		f.keys[name] = cred
	}
	if err := auth.Revoke(ctx, st, seed.DemoTenant, f.keys["revoked"].ID); err != nil {
		t.Fatal(err)
	}
	// auth.Mint refuses a client-safe key with write (issue 13); a row
	// written before that rule, or by hand, may still hold both: the grant
	// must refuse it too.
	cs := f.keys["client_safe"]
	if _, err := st.Update(ctx, auth.CredentialKey(cs.KeyHash), store.Update{Set: map[string]any{"scopes": "read write"}}, store.Exists()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *firm) mint(key, matter string, edit ...func(*uploads.MintRequest)) (string, uploads.Grant, error) {
	req := uploads.MintRequest{Tenant: seed.DemoTenant, CredentialID: f.keys[key].ID, Matter: matter, By: seed.DemoAdmin}
	for _, e := range edit {
		e(&req)
	}
	return uploads.MintGrant(context.Background(), f.st, req, f.clock.now)
}

// MintGrant's checks (issue 16): --by a firm administrator of the tenant;
// the key live, holding write, of the standard class; its owner reaching
// the matter; a life in [60 s, 7 d] and a sane open-upload cap. Each
// refusal says what is wrong and writes nothing.
func TestMintGrantRefusesWhatTheGrantCouldNotBeUsedFor(t *testing.T) {
	for name, newFirm := range engines(t) {
		t.Run(name, func(t *testing.T) {
			f := newFirm(t)
			for _, c := range []struct {
				name   string
				key    string
				matter string
				edit   func(*uploads.MintRequest)
			}{
				{"minted by an attorney, not a firm administrator", "writer", seed.Alvarez, func(r *uploads.MintRequest) { r.By = seed.DemoAttorney }},
				{"minted by no principal of the firm", "writer", seed.Alvarez, func(r *uploads.MintRequest) { r.By = "p_nobody" }},
				{"for a key of no such id", "writer", seed.Alvarez, func(r *uploads.MintRequest) { r.CredentialID = "cred_unknown" }},
				{"for a revoked key", "revoked", seed.Alvarez, nil},
				{"for a key without the write scope", "reader", seed.Alvarez, nil},
				{"for a client-safe key", "client_safe", seed.Alvarez, nil},
				{"for a key whose owner is screened from the matter", "paralegal", seed.Harbor, nil},
				{"for a matter outside the key's allow-list", "allow_list", seed.Alvarez, nil},
				{"for a matter that does not exist", "writer", "m_nowhere", nil},
				{"for a matter of another firm", "writer", seed.Northwind, nil},
				{"living 59 seconds", "writer", seed.Alvarez, func(r *uploads.MintRequest) { r.TTL = 59 * time.Second }},
				{"living 8 days", "writer", seed.Alvarez, func(r *uploads.MintRequest) { r.TTL = 8 * 24 * time.Hour }},
				{"allowing 17 open uploads", "writer", seed.Alvarez, func(r *uploads.MintRequest) { r.MaxOpen = 17 }},
			} {
				t.Run(c.name, func(t *testing.T) {
					var edits []func(*uploads.MintRequest)
					if c.edit != nil {
						edits = append(edits, c.edit)
					}
					_, _, err := f.mint(c.key, c.matter, edits...)
					if !errors.Is(err, uploads.ErrMint) {
						t.Errorf("MintGrant = %v, want ErrMint", err)
					}
				})
			}
			grants, err := uploads.ListGrants(context.Background(), f.st, seed.DemoTenant)
			if err != nil || len(grants) != 0 {
				t.Errorf("grants after refused mints = %v, %v; want none", grants, err)
			}
		})
	}
}

// A grant's token is cgt_ and 48 hex digits, shown once: only its SHA-256
// is stored, in the grant row and its listing row written together; the
// default life is 24 h and the default cap 3 open uploads.
func TestAMintedGrantStoresOnlyTheTokensDigest(t *testing.T) {
	for name, newFirm := range engines(t) {
		t.Run(name, func(t *testing.T) {
			f := newFirm(t)
			ctx := context.Background()
			token, g, err := f.mint("writer", seed.Alvarez)
			if err != nil {
				t.Fatal(err)
			}
			if !uploads.WellFormedToken(token) || len(token) != 52 || !strings.HasPrefix(token, "cgt_") {
				t.Errorf("token %q is not cgt_ + 48 hex", token)
			}
			if g.Hash != uploads.HashToken(token) || !g.ExpiresAt.Equal(epoch.Add(24*time.Hour)) || g.MaxOpen != 3 {
				t.Errorf("grant = %+v, want the token's digest, 24 h, 3 open", g)
			}
			for _, k := range []store.Key{uploads.GrantKey(g.Hash), uploads.GrantListingKey(seed.DemoTenant, g.ID)} {
				it, err := f.st.Get(ctx, k)
				if err != nil {
					t.Fatalf("Get(%s) = %v", k, err)
				}
				for attr, v := range it.Attrs {
					if s, ok := v.(string); ok && strings.Contains(s, token[4:]) {
						t.Errorf("%s holds the token in %s", k, attr)
					}
				}
			}
		})
	}
}

// grant list shows each grant's state: unspent (with its open uploads),
// revoked, and expired once its row is gone; revoking twice succeeds, an
// unknown id is ErrUnknownGrant, an expired one ErrGrantExpired.
func TestGrantsAreListedWithTheirStateAndRevokedOnce(t *testing.T) {
	for name, newFirm := range engines(t) {
		t.Run(name, func(t *testing.T) {
			f := newFirm(t)
			ctx := context.Background()
			_, live, err := f.mint("writer", seed.Alvarez)
			if err != nil {
				t.Fatal(err)
			}
			_, revoked, err := f.mint("writer", seed.Meridian, func(r *uploads.MintRequest) { r.MaxOpen = 1 })
			if err != nil {
				t.Fatal(err)
			}
			_, short, err := f.mint("writer", seed.Alvarez, func(r *uploads.MintRequest) { r.TTL = time.Minute })
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := uploads.RevokeGrant(ctx, f.st, seed.DemoTenant, revoked.ID, f.clock.now); err != nil {
					t.Errorf("RevokeGrant = %v", err)
				}
			}
			if err := uploads.RevokeGrant(ctx, f.st, seed.DemoTenant, "gnt_0000000000000000", f.clock.now); !errors.Is(err, uploads.ErrUnknownGrant) {
				t.Errorf("RevokeGrant(unknown) = %v, want ErrUnknownGrant", err)
			}
			f.clock.now = f.clock.now.Add(2 * time.Minute)
			if err := uploads.RevokeGrant(ctx, f.st, seed.DemoTenant, short.ID, f.clock.now); !errors.Is(err, uploads.ErrGrantExpired) {
				t.Errorf("RevokeGrant(expired) = %v, want ErrGrantExpired", err)
			}
			grants, err := uploads.ListGrants(ctx, f.st, seed.DemoTenant)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]uploads.GrantState{}
			for _, g := range grants {
				got[g.ID] = g.State
				if g.ID == live.ID && (g.OpenUploads == nil || *g.OpenUploads != 0) {
					t.Errorf("the live grant's open uploads = %v, want 0", g.OpenUploads)
				}
			}
			want := map[string]uploads.GrantState{live.ID: uploads.GrantUnspent, revoked.ID: uploads.GrantRevoked, short.ID: uploads.GrantExpired}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("grant states (-want +got):\n%s", diff)
			}
		})
	}
}
