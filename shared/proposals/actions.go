package proposals

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/custodymcp/custody/shared/records"
)

// Floor is an action's supervision floor: how much review its approval
// needs (docs/contracts.md §6).
type Floor string

// Supervision floors, lowest first.
const (
	// FloorRoutine may be approved in a multi-select when nothing else
	// makes it individual-only.
	FloorRoutine Floor = "routine"
	// FloorAlwaysConfirm is decided one by one.
	FloorAlwaysConfirm Floor = "always-confirm"
	// FloorIndependent is decided one by one by someone other than the
	// requesting key's owner (every external action).
	FloorIndependent Floor = "independent"
)

// rank orders floors; an unknown floor ranks above every known one, so it
// is never taken for a lower one.
func (f Floor) rank() int {
	switch f {
	case FloorRoutine:
		return 0
	case FloorAlwaysConfirm:
		return 1
	case FloorIndependent:
		return 2
	}
	return 3
}

// Valid reports whether f is one of the three floors.
func (f Floor) Valid() bool { return f.rank() < 3 }

// Max is the higher of two floors.
func (f Floor) Max(g Floor) Floor {
	if g.rank() > f.rank() {
		return g
	}
	return f
}

// EffectClass says whether an action's effect stays inside the firm.
type EffectClass string

// Effect classes.
const (
	EffectNone     EffectClass = "none"
	EffectExternal EffectClass = "external"
)

// Impact is what an action does beyond the record. An action whose Impact
// is nil has an unavailable impact: it is never batch-eligible and never
// taken for EffectNone.
type Impact struct {
	ExternalEffectClass EffectClass `json:"external_effect_class"`
}

// BasisKind names the basis an action must carry: the reason, in the
// record's own terms, a person gives for changing the record's standing.
type BasisKind string

// Basis kinds.
const (
	BasisNone BasisKind = ""
	// BasisNote: a note saying why (set_fact_posture).
	BasisNote BasisKind = "note"
	// BasisAuthorityCitation: the authority relied on and the method of
	// the check (record_fact_check).
	BasisAuthorityCitation BasisKind = "authority_citation"
)

// Basis is the basis a proposal carries: kept on the proposal and, once
// approved, on the record (issue 14's executors copy it).
type Basis struct {
	Kind              BasisKind `json:"kind"`
	Note              string    `json:"note,omitempty"`
	AuthorityCitation string    `json:"authority_citation,omitempty"`
	Method            string    `json:"method,omitempty"`
}

// TargetKind names the kind of row an action acts on.
type TargetKind string

// Target kinds: rows of the matter.
const (
	TargetMatter   TargetKind = "matter"
	TargetDocument TargetKind = "document"
	TargetFact     TargetKind = "fact"
)

// Ref names a row of the proposal's matter: its target, or a document it
// cites.
type Ref struct {
	Kind TargetKind `json:"kind"`
	ID   string     `json:"id"`
}

// Target is the row an action acts on, with the version it had when the
// proposal was filed: the approval page refuses TARGET_CHANGED when the
// row has moved since (docs/contracts.md §6). A matter target is the
// matter row itself: an action that adds a row to the matter (a deadline,
// a note) acts on the matter.
type Target struct {
	Ref
	Version int64 `json:"version"`
}

// Args is an action's decoded, validated arguments (a pointer to its input
// type).
type Args any

// Action is one kind of proposal. Build one with Define.
type Action struct {
	// Name is the action as propose_action names it.
	Name string
	// DeliverableNoun is what the approval produces, as the approval page
	// and the receipt name it ("deadline").
	DeliverableNoun string
	// Description is one sentence for list_actions.
	Description string
	// Impact is nil for an action whose impact is unavailable.
	Impact *Impact
	// SupervisionFloor is the registry's floor; a firm may only raise it
	// (Config).
	SupervisionFloor Floor
	// Confirm requires a second confirmation with a nonce at approval.
	Confirm bool
	// Conflict marks an action that changes the record's own standing (a
	// posture, a check): always individual-only.
	Conflict bool
	// Basis is the basis the action must carry (BasisNone: none).
	Basis BasisKind

	input  reflect.Type
	decode func(json.RawMessage) (Args, error)
	target func(Args) Ref
	cites  func(Args) []Ref
	basis  func(Args) *Basis
	render func(Args, records.Matter) string
}

// Spec describes an action for Define.
type Spec[T any] struct {
	Name, DeliverableNoun, Description string
	Impact                             *Impact
	SupervisionFloor                   Floor
	Confirm, Conflict                  bool
	Basis                              BasisKind
	// Target names the row the action acts on (a row of the matter).
	Target func(*T) Ref
	// Cites, when set, names further rows of the matter the args refer to
	// (documents), each of which must exist and be visible to the
	// requester.
	Cites func(*T) []Ref
	// BasisOf returns the basis carried in the args (required when Basis
	// is set).
	BasisOf func(*T) *Basis
	// WhatWillHappen renders, from validated args and the matter, the one
	// paragraph the approver reads: built by the server, never text the
	// agent wrote about itself.
	WhatWillHappen func(*T, records.Matter) string
}

// Define builds an action over its input type T.
func Define[T any](s Spec[T]) Action {
	a := Action{
		Name: s.Name, DeliverableNoun: s.DeliverableNoun, Description: s.Description, Impact: s.Impact,
		SupervisionFloor: s.SupervisionFloor, Confirm: s.Confirm, Conflict: s.Conflict, Basis: s.Basis,
		input: reflect.TypeFor[T](),
	}
	a.decode = func(raw json.RawMessage) (Args, error) {
		var v T
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("decode %s args: %w", s.Name, err)
		}
		return &v, nil
	}
	a.target = func(x Args) Ref { return s.Target(x.(*T)) }
	if s.Cites != nil {
		a.cites = func(x Args) []Ref { return s.Cites(x.(*T)) }
	}
	if s.BasisOf != nil {
		a.basis = func(x Args) *Basis { return s.BasisOf(x.(*T)) }
	}
	a.render = func(x Args, m records.Matter) string { return s.WhatWillHappen(x.(*T), m) }
	return a
}

// Input is the action's input type, the source of its args schema.
func (a *Action) Input() reflect.Type { return a.input }

// Decode decodes validated args (canonical JSON) into the input type.
func (a *Action) Decode(raw json.RawMessage) (Args, error) { return a.decode(raw) }

// TargetOf is the row the args act on.
func (a *Action) TargetOf(x Args) Ref { return a.target(x) }

// CitesOf are the further rows of the matter the args name.
func (a *Action) CitesOf(x Args) []Ref {
	if a.cites == nil {
		return nil
	}
	return a.cites(x)
}

// BasisOf is the basis the args carry (nil for an action without one).
func (a *Action) BasisOf(x Args) *Basis {
	if a.basis == nil || a.Basis == BasisNone {
		return nil
	}
	return a.basis(x)
}

// WhatWillHappen renders what approving the args would do in matter m.
func (a *Action) WhatWillHappen(x Args, m records.Matter) string { return a.render(x, m) }

// EffectClass is the action's effect class, or "" when its impact is
// unavailable.
func (a *Action) EffectClass() EffectClass {
	if a.Impact == nil {
		return ""
	}
	return a.Impact.ExternalEffectClass
}

// Internal reports whether the action's impact is known to stay inside
// the firm (EffectNone). An unavailable impact is not internal.
func (a *Action) Internal() bool {
	return a.Impact != nil && a.Impact.ExternalEffectClass == EffectNone
}

// Registry is a set of actions, by name.
type Registry struct {
	actions map[string]*Action
	names   []string
}

// ErrReservedKey reports an action whose input declares a reserved args
// key (Reserved): an agent's override, scope or confirmation field could
// then not be told from the action's own.
var ErrReservedKey = errors.New("proposals: an action declares a reserved args key")

// NewRegistry checks and collects actions: each needs a name, a noun, a
// known floor and a target; none may declare a reserved key (Reserved) at
// any depth of its input type; an action with a Basis needs BasisOf.
func NewRegistry(actions ...Action) (*Registry, error) {
	r := &Registry{actions: map[string]*Action{}}
	for i := range actions {
		a := actions[i]
		switch {
		case a.Name == "" || a.DeliverableNoun == "" || a.decode == nil:
			return nil, fmt.Errorf("action %q: name, noun and input type are required (use Define)", a.Name)
		case !a.SupervisionFloor.Valid():
			return nil, fmt.Errorf("action %q: unknown supervision floor %q", a.Name, a.SupervisionFloor)
		case a.Impact != nil && a.Impact.ExternalEffectClass != EffectNone && a.Impact.ExternalEffectClass != EffectExternal:
			return nil, fmt.Errorf("action %q: unknown effect class %q", a.Name, a.Impact.ExternalEffectClass)
		case a.target == nil:
			return nil, fmt.Errorf("action %q: a target is required", a.Name)
		case a.Basis != BasisNone && a.basis == nil:
			return nil, fmt.Errorf("action %q: basis %q needs BasisOf", a.Name, a.Basis)
		case r.actions[a.Name] != nil:
			return nil, fmt.Errorf("action %q: defined twice", a.Name)
		}
		if path, ok := reservedField(a.input, ""); ok {
			return nil, fmt.Errorf("action %q: field %s: %w", a.Name, path, ErrReservedKey)
		}
		r.actions[a.Name] = &a
		r.names = append(r.names, a.Name)
	}
	slices.Sort(r.names)
	return r, nil
}

// Action returns the action name.
func (r *Registry) Action(name string) (*Action, bool) {
	a, ok := r.actions[name]
	return a, ok
}

// Names returns every action name, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// reservedField finds a JSON field name of t (a struct, at any depth
// through structs, pointers, slices and maps) that Reserved refuses.
func reservedField(t reflect.Type, at string) (string, bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return "", false
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := name
		if at != "" {
			path = at + "." + name
		}
		if Reserved(name) {
			return path, true
		}
		if p, ok := reservedField(f.Type, path); ok {
			return p, true
		}
	}
	return "", false
}
