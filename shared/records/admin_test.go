package records_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// engines returns a fresh empty store of each engine.
func engines(t *testing.T) map[string]func(*testing.T) store.Store {
	return map[string]func(*testing.T) store.Store{
		"file": func(t *testing.T) store.Store { return newStore(t) },
		"dynamodb": func(t *testing.T) store.Store {
			s, _ := dynamotest.NewStore(t, nil)
			return s
		},
	}
}

func TestCreateTenantWritesOnceAndNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			tn, err := records.CreateTenant(ctx, s, "acme", "Acme & Partners LLP", importedAt)
			if err != nil {
				t.Fatalf("CreateTenant = %v", err)
			}
			got, err := records.NewRepo(s).Tenant(ctx, "acme")
			if err != nil || got.Name != "Acme & Partners LLP" || !got.CreatedAt.Equal(importedAt) || got != tn {
				t.Errorf("Tenant = %+v, %v; want %+v", got, err, tn)
			}
			if _, err := records.CreateTenant(ctx, s, "acme", "Other", importedAt); !errors.Is(err, store.ErrExists) {
				t.Errorf("second CreateTenant = %v, want ErrExists", err)
			}
			if got, _ := records.NewRepo(s).Tenant(ctx, "acme"); got.Name != "Acme & Partners LLP" {
				t.Errorf("the second create changed the tenant: %+v", got)
			}
			if _, err := records.CreateTenant(ctx, s, "a#b", "x", importedAt); !errors.Is(err, records.ErrInvalid) {
				t.Errorf("CreateTenant(a#b) = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestScreenIsWhatTheFunnelRefuses(t *testing.T) {
	ctx := context.Background()
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if _, err := records.Import(ctx, s, demo(t), importedAt); err != nil {
				t.Fatal(err)
			}
			funnel := access.New(records.NewRepo(s))
			dana := access.Who{Tenant: seed.DemoTenant, Principal: seed.DemoAttorney}
			if _, err := funnel.Matter(ctx, dana, seed.Meridian); err != nil {
				t.Fatalf("before the screen: %v", err)
			}
			before, _ := s.Get(ctx, records.MatterKey(seed.DemoTenant, seed.Meridian))

			m, changed, err := records.Screen(ctx, s, seed.DemoTenant, seed.Meridian, seed.DemoAttorney, true, "conflict check 2026-118")
			if err != nil || !changed || !slices.Contains(m.Screened, seed.DemoAttorney) || m.ScreenReason != "conflict check 2026-118" {
				t.Fatalf("Screen = %+v, %v, %v; want Dana screened with the reason", m, changed, err)
			}
			if _, err := funnel.Matter(ctx, dana, seed.Meridian); !errors.Is(err, access.ErrNoMatter) {
				t.Errorf("after the screen: funnel = %v, want ErrNoMatter", err)
			}
			after, _ := s.Get(ctx, records.MatterKey(seed.DemoTenant, seed.Meridian))
			if after.Version != before.Version+1 {
				t.Errorf("version %d → %d, want +1", before.Version, after.Version)
			}
			// A screen is not record data: as_of must not follow it.
			var was records.Matter
			if err := json.Unmarshal(before.Bytes(records.AttrData), &was); err != nil {
				t.Fatal(err)
			}
			if got, _ := records.NewRepo(s).Matter(ctx, seed.DemoTenant, seed.Meridian); !got.UpdatedAt.Equal(was.UpdatedAt) {
				t.Errorf("updated_at = %v, want %v, unmoved by the screen", got.UpdatedAt, was.UpdatedAt)
			}

			// Again: nothing to do, nothing written.
			if _, changed, err := records.Screen(ctx, s, seed.DemoTenant, seed.Meridian, seed.DemoAttorney, true, ""); err != nil || changed {
				t.Errorf("second Screen = %v, %v; want unchanged", changed, err)
			}
			if again, _ := s.Get(ctx, records.MatterKey(seed.DemoTenant, seed.Meridian)); again.Version != after.Version {
				t.Errorf("an unchanged screen wrote the row (version %d → %d)", after.Version, again.Version)
			}

			// Out again: reachable, reason cleared with the last screen.
			m, changed, err = records.Screen(ctx, s, seed.DemoTenant, seed.Meridian, seed.DemoAttorney, false, "")
			if err != nil || !changed || m.Screened != nil || m.ScreenReason != "" {
				t.Fatalf("unscreen = %+v, %v, %v", m, changed, err)
			}
			if _, err := funnel.Matter(ctx, dana, seed.Meridian); err != nil {
				t.Errorf("after the unscreen: %v", err)
			}

			// Harbor's own screen of the paralegal survives another one.
			m, _, err = records.Screen(ctx, s, seed.DemoTenant, seed.Harbor, seed.DemoAdmin, true, "")
			if err != nil || !slices.Equal(m.Screened, []string{seed.DemoAdmin, seed.DemoParalegal}) {
				t.Errorf("Harbor screens = %v, %v; want the admin and the paralegal", m.Screened, err)
			}
		})
	}
}

func TestScreenRefusesWhatItCannotEnforce(t *testing.T) {
	ctx := context.Background()
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if _, err := records.Import(ctx, s, demo(t), importedAt); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name, matter, principal string
				screened                bool
				want                    error
			}{
				{"a principal the firm does not have", seed.Meridian, "p_dana_whitfeld", true, records.ErrUnknownPrincipal},
				{"a matter the firm does not have", "m_nope", seed.DemoAttorney, true, store.ErrNotFound},
				{"another firm's matter", seed.Northwind, seed.DemoAttorney, true, store.ErrNotFound},
				{"an impossible id", "m#x", seed.DemoAttorney, false, records.ErrInvalid},
			} {
				if _, _, err := records.Screen(ctx, s, seed.DemoTenant, c.matter, c.principal, c.screened, ""); !errors.Is(err, c.want) {
					t.Errorf("%s: Screen = %v, want %v", c.name, err, c.want)
				}
			}
			// Taking out a principal who left the firm still works.
			if _, changed, err := records.Screen(ctx, s, seed.DemoTenant, seed.Harbor, "p_left_long_ago", false, ""); err != nil || changed {
				t.Errorf("unscreen of an absent principal = %v, %v; want unchanged", changed, err)
			}
		})
	}
}

func TestConcurrentScreensAreAllKept(t *testing.T) {
	ctx := context.Background()
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if _, err := records.Import(ctx, s, demo(t), importedAt); err != nil {
				t.Fatal(err)
			}
			principals := []string{seed.DemoAttorney, seed.DemoParalegal, seed.DemoAdmin}
			var wg sync.WaitGroup
			errs := make(chan error, len(principals))
			for _, p := range principals {
				wg.Go(func() {
					_, _, err := records.Screen(ctx, s, seed.DemoTenant, seed.Alvarez, p, true, "")
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("Screen = %v", err)
				}
			}
			m, err := records.NewRepo(s).Matter(ctx, seed.DemoTenant, seed.Alvarez)
			if want := slices.Sorted(slices.Values(principals)); err != nil || !slices.Equal(m.Screened, want) {
				t.Errorf("Screened = %v, %v; want all of %v (no lost update)", m.Screened, err, want)
			}
		})
	}
}
