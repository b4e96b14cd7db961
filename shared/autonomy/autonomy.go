// Package autonomy holds a firm's autonomy settings: how far an agent's
// governed write may go on its own (docs/decisions.md "Autonomy"). A
// setting exists per (tenant, tool or action), with a tenant default; an
// absent setting is L2.
//
//	level  effect none              effect external    propose_action
//	L0     denied AUTONOMY_DENIED   denied             denied
//	L1     pending_approval         pending_approval   pending_approval
//	L2–L4  executed                 pending_approval   pending_approval
//
// The invocation core reads a write tool's settings in the same batch as
// its matter and refuses L0 before the handler runs (docs/architecture.md
// "The request path", step 9); the handler applies the rest of the table
// (shared/writetools). No level lets an agent cause an external effect:
// propose_action is capped at L1 whatever the setting, and an external
// action is always a proposal.
//
// Rows: `T#<tenant>` / `AUTONOMY#<tool or action>`, and `AUTONOMY#*` for
// the tenant default, with the level as the string "L0" … "L4". A row whose
// level cannot be read counts as L0: an unreadable setting fails closed.
package autonomy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Level is an autonomy level, L0 (no side effects) to L4.
type Level int

// The levels (docs/decisions.md "Autonomy").
const (
	// L0: no side effects; every governed write is refused AUTONOMY_DENIED.
	L0 Level = iota
	// L1: every write is a proposal a person approves.
	L1
	// L2, the default: internal writes are carried out; external effects
	// are proposals.
	L2
	// L3: as L2 (Custody offers no veto window over MCP).
	L3
	// L4: as L2; still no external effect without approval.
	L4
)

// Default is the level of a tool or action with no setting and no tenant
// default.
const Default = L2

// DefaultName names the tenant default setting.
const DefaultName = "*"

// ErrInvalid reports a level or a setting name that is not one.
var ErrInvalid = errors.New("autonomy: invalid setting")

// String is the level as stored and shown: "L0" … "L4".
func (l Level) String() string { return fmt.Sprintf("L%d", int(l)) }

// ParseLevel parses "L0" … "L4" (case-insensitive).
func ParseLevel(s string) (Level, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "L0":
		return L0, nil
	case "L1":
		return L1, nil
	case "L2":
		return L2, nil
	case "L3":
		return L3, nil
	case "L4":
		return L4, nil
	}
	return L0, fmt.Errorf("level %q: want L0, L1, L2, L3 or L4: %w", s, ErrInvalid)
}

// ValidName reports whether name can name a setting: DefaultName or an id
// (keyspace.ValidID).
func ValidName(name string) bool { return name == DefaultName || keyspace.ValidID(name) }

const skPrefix = "AUTONOMY#"

// Key is the row of the setting name (a tool, an action, or DefaultName).
func Key(tenant, name string) store.Key {
	return store.Key{PK: keyspace.TenantPK(tenant), SK: skPrefix + name}
}

// Keys are the rows a call governed by names reads: one per name, then the
// tenant default. Resolve takes the rows read, aligned with these keys.
func Keys(tenant string, names ...string) []store.Key {
	keys := make([]store.Key, 0, len(names)+1)
	for _, n := range names {
		keys = append(keys, Key(tenant, n))
	}
	return append(keys, Key(tenant, DefaultName))
}

// Resolve is the level of a call governed by names, from rows read at
// Keys(tenant, names...) (nil where absent): for each name its own setting,
// else the tenant default, else Default; the call obeys the lowest of them
// (a tool set to L1 keeps every action it files at L1 or below, and an
// action set to L0 is refused whichever tool reaches it). A row whose
// level cannot be read counts as L0.
func Resolve(names []string, rows []*store.Item) Level {
	fallback := Default
	if len(rows) > len(names) && rows[len(names)] != nil {
		fallback = levelOf(rows[len(names)])
	}
	level := L4
	for i := range names {
		l := fallback
		if i < len(rows) && rows[i] != nil {
			l = levelOf(rows[i])
		}
		level = min(level, l)
	}
	if len(names) == 0 {
		return fallback
	}
	return level
}

func levelOf(it *store.Item) Level {
	l, err := ParseLevel(it.String("level"))
	if err != nil {
		return L0
	}
	return l
}

// Setting is one stored setting.
type Setting struct {
	// Name is the tool or action, or DefaultName.
	Name      string    `json:"name"`
	Level     Level     `json:"-"`
	LevelText string    `json:"level"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Set stores the setting name at level for tenant, replacing any.
func Set(ctx context.Context, st store.Store, tenant, name string, level Level, now time.Time) error {
	if !keyspace.ValidID(tenant) || !ValidName(name) {
		return fmt.Errorf("set autonomy of %q: %w", name, ErrInvalid)
	}
	if level < L0 || level > L4 {
		return fmt.Errorf("set autonomy of %q: level %d: %w", name, level, ErrInvalid)
	}
	k := Key(tenant, name)
	err := st.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{
		"name": name, "level": level.String(), "updated_at": now.UTC().Format(time.RFC3339Nano),
	}})
	if err != nil {
		return fmt.Errorf("set autonomy of %q: %w", name, err)
	}
	return nil
}

// Clear removes the setting name (the call then falls back to the tenant
// default, or Default). Clearing an absent setting succeeds.
func Clear(ctx context.Context, st store.Store, tenant, name string) error {
	if !keyspace.ValidID(tenant) || !ValidName(name) {
		return fmt.Errorf("clear autonomy of %q: %w", name, ErrInvalid)
	}
	if err := st.Delete(ctx, Key(tenant, name)); err != nil {
		return fmt.Errorf("clear autonomy of %q: %w", name, err)
	}
	return nil
}

// List returns the tenant's settings, by name (the default, "*", first),
// from one strongly consistent query of the tenant partition.
func List(ctx context.Context, st store.Store, tenant string) ([]Setting, error) {
	if !keyspace.ValidID(tenant) {
		return nil, fmt.Errorf("list autonomy settings: tenant %q: %w", tenant, ErrInvalid)
	}
	var out []Setting
	q := store.Query{PK: keyspace.TenantPK(tenant), SK: store.SortKeyCondition{Prefix: skPrefix}}
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list autonomy settings of %s: %w", tenant, err)
		}
		for _, it := range page.Items {
			s := Setting{Name: strings.TrimPrefix(it.SK, skPrefix), Level: levelOf(&it), LevelText: it.String("level")}
			s.UpdatedAt, _ = time.Parse(time.RFC3339Nano, it.String("updated_at"))
			out = append(out, s)
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}
