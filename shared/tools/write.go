package tools

import (
	"context"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/store"
)

// writeStep is step 9 of the request path for a write tool
// (docs/architecture.md "The request path"): after the kill switch, the
// class floor, validation and the rate verdict, and before the handler. In
// one batch read it reads the matter the input names (the funnel's rules
// and answers, as for any tool), the autonomy settings the call obeys (its
// tool's, the names Spec.AutonomyNames adds, the tenant default) and the
// rows Spec.Prefetch names; an L0 setting refuses the call AUTONOMY_DENIED. A
// write tool whose input names no matter still reads its settings (and
// prefetched rows) in one batch. input is a pointer to the decoded input.
func (r *Registry) writeStep(ctx context.Context, c *Call, spec Spec, input any) *Refusal {
	name := spec.Name
	var extra []store.Key
	if spec.Prefetch != nil {
		keys, err := spec.Prefetch(c, input)
		if err != nil {
			return r.refusalFor(ctx, name, err)
		}
		extra = keys
	}
	names := []string{name}
	if spec.AutonomyNames != nil {
		names = append(names, spec.AutonomyNames(input)...)
	}
	akeys := autonomy.Keys(c.Who.Tenant, names...)
	keys := append(akeys, extra...)
	var rows []*store.Item
	matter := ""
	if ms, ok := input.(MatterScoped); ok {
		matter = ms.MatterID()
	}
	if matter != "" {
		m, version, got, err := c.Funnel.MatterWith(ctx, c.Who, matter, keys)
		if err == nil && c.Also != nil {
			// An intersected call reaches a matter only when both do.
			_, err = c.Funnel.Matter(ctx, access.WhoOf(c.Also), matter)
		}
		if err != nil {
			return r.refusalFor(ctx, name, err)
		}
		c.Matter, c.MatterVersion, rows = m, version, got
	} else {
		if r.opts.Store == nil {
			r.opts.Logger.ErrorContext(ctx, "a write tool without a matter needs Options.Store", "tool", name)
			return Refuse(ClassInternal, msgInternal)
		}
		got, err := r.opts.Store.BatchGet(ctx, keys)
		if err != nil {
			return r.refusalFor(ctx, name, err)
		}
		rows = got
	}
	c.Autonomy = autonomy.Resolve(names, rows[:len(akeys)])
	if c.Autonomy == autonomy.L0 {
		return Refuse(ClassAutonomyDenied, msgAutonomyDenied)
	}
	c.Prefetched = rows[len(akeys):]
	return nil
}
