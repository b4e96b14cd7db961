package approvals

import (
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/store"
)

// Exclusion names one reason a proposal is individual-only: it may be
// decided only on its own, never in a selection of several
// (docs/contracts.md §6).
type Exclusion string

// The exclusions, in the order the page lists them.
const (
	// ExclusionUnregistered: the live registry has no such action.
	ExclusionUnregistered Exclusion = "unregistered"
	// ExclusionDisabled: the firm switched the action off (or its
	// configuration cannot be read).
	ExclusionDisabled Exclusion = "disabled"
	// ExclusionFloor: the supervision floor is always-confirm or
	// independent (or unknown).
	ExclusionFloor Exclusion = "floor"
	// ExclusionNoImpact: the action's impact is not recorded, so its
	// effect is not known to stay inside the firm.
	ExclusionNoImpact Exclusion = "no-impact"
	// ExclusionExternal: the effect class is not none.
	ExclusionExternal Exclusion = "external"
	// ExclusionConfirm: the approval needs a second confirmation.
	ExclusionConfirm Exclusion = "confirm"
	// ExclusionConflict: the action changes the record's own standing (a
	// posture, a check).
	ExclusionConflict Exclusion = "conflict"
	// ExclusionContested: another pending proposal acts on the same row.
	ExclusionContested Exclusion = "contested"
	// ExclusionMoved: the target row moved (or is gone) since filing.
	ExclusionMoved Exclusion = "moved"
)

// Explain is the sentence the page lists for an exclusion.
func (e Exclusion) Explain() string {
	switch e {
	case ExclusionUnregistered:
		return "Its action is not one Custody defines any more."
	case ExclusionDisabled:
		return "The firm has switched its action off."
	case ExclusionFloor:
		return "Its supervision floor asks for it to be decided on its own."
	case ExclusionNoImpact:
		return "Its action's effect is not recorded, so it is not known to stay inside the firm."
	case ExclusionExternal:
		return "It is an act outside the firm."
	case ExclusionConfirm:
		return "Its approval needs a second confirmation."
	case ExclusionConflict:
		return "It changes the record's own standing (a posture or a check)."
	case ExclusionContested:
		return "Another pending proposal acts on the same record."
	case ExclusionMoved:
		return "The record it acts on changed since it was filed."
	}
	return "It must be decided on its own."
}

// Eligibility is what eligibility is derived from: everything read from
// the store when asked, never from a form or from what a page showed.
type Eligibility struct {
	Proposal *proposals.Proposal
	// Actions is the live registry.
	Actions *proposals.Registry
	// Config is the firm's configuration row of the action (nil: none).
	Config *store.Item
	// Pending are the matter's pending proposals (its inbox rows), this one
	// among them or not.
	Pending []proposals.Summary
	// Target is the target row as read now: the matter row for a matter
	// target; nil when it is gone.
	Target *store.Item
}

// Exclusions returns every reason the proposal is individual-only; none
// means it may be approved in a selection of several (docs/contracts.md
// §6). It fails closed: what cannot be established excludes.
func (in Eligibility) Exclusions() []Exclusion {
	p := in.Proposal
	var out []Exclusion
	var a *proposals.Action
	if in.Actions != nil {
		a, _ = in.Actions.Action(p.Action)
	}
	floor := p.SupervisionFloor
	if a == nil {
		out = append(out, ExclusionUnregistered)
	} else {
		eff := a.Effective(proposals.DecodeConfig(in.Config))
		if !eff.Enabled {
			out = append(out, ExclusionDisabled)
		}
		floor = floor.Max(eff.Floor)
	}
	if floor != proposals.FloorRoutine {
		out = append(out, ExclusionFloor)
	}
	switch {
	case p.Impact == nil || (a != nil && a.Impact == nil):
		out = append(out, ExclusionNoImpact)
	case p.Impact.ExternalEffectClass != proposals.EffectNone || (a != nil && a.EffectClass() != proposals.EffectNone):
		out = append(out, ExclusionExternal)
	}
	if p.ConfirmRequired || (a != nil && a.Confirm) {
		out = append(out, ExclusionConfirm)
	}
	if p.Conflict || (a != nil && a.Conflict) {
		out = append(out, ExclusionConflict)
	}
	if contested(p, in.Pending) {
		out = append(out, ExclusionContested)
	}
	if moved(p, in.Target) {
		out = append(out, ExclusionMoved)
	}
	return out
}

// BatchEligible reports whether the proposal may be approved in a
// selection of several: no exclusion at all.
func (in Eligibility) BatchEligible() bool { return len(in.Exclusions()) == 0 }

// contested reports whether another pending proposal acts on p's target
// row. A matter target is not exclusive (an action that adds a row to the
// matter conflicts with no other addition: docs/decisions.md "Governed
// writes"); a pending row whose target is unknown contests every target.
func contested(p *proposals.Proposal, pending []proposals.Summary) bool {
	if p.Target.Kind == proposals.TargetMatter {
		return false
	}
	for _, s := range pending {
		if s.ID == p.ID {
			continue
		}
		if s.Target.Kind == "" || (s.Target.Kind == p.Target.Kind && s.Target.ID == p.Target.ID) {
			return true
		}
	}
	return false
}

// moved reports whether p's target row (as read now; nil when gone) has
// moved since p was filed. A matter target's row must exist, but its
// version is not compared: an action that adds a row to a matter does not
// act on the matter row, and what does change there (the team, the
// screens: records.Screen moves the version) is judged by re-reading both
// people's reach. Any other target must be at the version filed against.
func moved(p *proposals.Proposal, target *store.Item) bool {
	if target == nil {
		return true
	}
	return p.Target.Kind != proposals.TargetMatter && target.Version != p.Target.Version
}

// confirmRequired reports whether approving p needs a second confirmation
// with a nonce: its action asks for one, or its floor is above routine (a
// floor of "always-confirm" says so by its name, and an independent
// approval is at least that).
func confirmRequired(p *proposals.Proposal, a *proposals.Action, floor proposals.Floor) bool {
	return p.ConfirmRequired || (a != nil && a.Confirm) || floor != proposals.FloorRoutine
}
