package proposals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Config is a firm's configuration of one action: disabled, or its floor
// raised. A firm never lowers a floor: the effective floor is the higher
// of the registry's and the configured one (Effective).
type Config struct {
	Action   string `json:"action"`
	Disabled bool   `json:"disabled"`
	// Floor, when set, raises the action's supervision floor.
	Floor     Floor     `json:"floor,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ConfigKey is the configuration row of action in tenant.
func ConfigKey(tenant, action string) store.Key {
	return store.Key{PK: keyspace.TenantPK(tenant), SK: skConfig + action}
}

// DecodeConfig reads a configuration row; nil (no row) is the registry's
// own configuration. A row that cannot be read disables the action: an
// unreadable configuration fails closed.
func DecodeConfig(it *store.Item) Config {
	if it == nil {
		return Config{}
	}
	var c Config
	if err := json.Unmarshal(it.Bytes(AttrData), &c); err != nil || (c.Floor != "" && !c.Floor.Valid()) {
		return Config{Disabled: true}
	}
	return c
}

// Effective is what an action is in a firm: enabled or not, and its floor.
type Effective struct {
	Enabled bool
	Floor   Floor
}

// Effective applies the firm's configuration c to action a.
func (a *Action) Effective(c Config) Effective {
	f := a.SupervisionFloor
	if c.Floor != "" {
		f = f.Max(c.Floor)
	}
	return Effective{Enabled: !c.Disabled, Floor: f}
}

// BatchEligible is the registry's static answer to whether a proposal of
// action a, so configured, could be approved in a multi-select
// (docs/contracts.md §6): floor routine, effect class none (an unavailable
// impact is not), no confirmation, no conflict, enabled. The approval page
// re-derives it at decision time, with the live registry, the other
// pending proposals on the target and the target's version.
func (a *Action) BatchEligible(e Effective) bool {
	return e.Enabled && e.Floor == FloorRoutine && a.Internal() && !a.Confirm && !a.Conflict
}

// ErrFloorLowered reports a configured floor below the registry's.
var ErrFloorLowered = errors.New("proposals: an action's floor can be raised, never lowered")

// SetConfig stores a firm's configuration of a registered action. A floor
// below the action's own is refused ErrFloorLowered; an unknown action or
// floor is an error.
func SetConfig(ctx context.Context, st store.Store, reg *Registry, tenant string, c Config, now time.Time) error {
	a, ok := reg.Action(c.Action)
	if !ok {
		return fmt.Errorf("configure action %q: no such action", c.Action)
	}
	if c.Floor != "" {
		if !c.Floor.Valid() {
			return fmt.Errorf("configure action %q: unknown floor %q", c.Action, c.Floor)
		}
		if c.Floor.rank() < a.SupervisionFloor.rank() {
			return fmt.Errorf("configure action %q: floor %s is below %s: %w", c.Action, c.Floor, a.SupervisionFloor, ErrFloorLowered)
		}
	}
	c.UpdatedAt = now.UTC()
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("configure action %q: %w", c.Action, err)
	}
	k := ConfigKey(tenant, c.Action)
	if err := st.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{AttrData: data}}); err != nil {
		return fmt.Errorf("configure action %q: %w", c.Action, err)
	}
	return nil
}

func marshalDecision(d *Decision) ([]byte, error) {
	d2 := *d
	d2.DecidedAt = d2.DecidedAt.UTC()
	return json.Marshal(d2)
}
