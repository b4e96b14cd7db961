package proposals

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/custodymcp/custody/shared/records"
)

// The actions' names.
const (
	ActionCreateDeadline    = "create_deadline"
	ActionAddExhibit        = "add_exhibit"
	ActionAddCaseNote       = "add_case_note"
	ActionSetFactPosture    = "set_fact_posture"
	ActionRecordFactCheck   = "record_fact_check"
	ActionServeProduction   = "serve_production"
	ActionSetLitigationHold = "set_litigation_hold"
)

// Bounds of the actions' free text (docs/decisions.md "Time and size
// constants": a note body at most 20,000 characters, a basis 4,000).
const (
	MaxNoteBody = 20000
	MaxBasis    = 4000
)

// CreateDeadline is create_deadline's args: a date the matter must meet.
type CreateDeadline struct {
	Title            string `json:"title" jsonschema:"What must be done by the date." schema:"minLength=1;maxLength=300;pattern=\\S"`
	DueDate          string `json:"due_date" jsonschema:"The due date, YYYY-MM-DD." schema:"format=date"`
	Kind             string `json:"kind" jsonschema:"The kind of deadline." schema:"enum=filing|discovery|hearing|deposition|expert|mediation|trial"`
	Rule             string `json:"rule,omitempty" jsonschema:"The rule or order the date comes from." schema:"maxLength=300"`
	SourceDocumentID string `json:"source_document_id,omitempty" jsonschema:"A document of the matter the date comes from." schema:"minLength=1;maxLength=128"`
	SourcePage       int    `json:"source_page,omitempty" jsonschema:"The page of that document." schema:"minimum=1;maximum=100000"`
}

// AddExhibit is add_exhibit's args: a document of the matter marked as an
// exhibit under a label unique in the matter.
type AddExhibit struct {
	DocumentID  string `json:"document_id" jsonschema:"The document of the matter to mark." schema:"minLength=1;maxLength=128"`
	Label       string `json:"label" jsonschema:"The exhibit label, unique in the matter (PX-12)." schema:"pattern=^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$"`
	Description string `json:"description,omitempty" jsonschema:"What the exhibit shows." schema:"maxLength=500"`
}

// AddCaseNote is add_case_note's args as an action: the note the
// add_case_note tool writes at once at L2, filed for approval at L1.
type AddCaseNote struct {
	Body       string `json:"body" jsonschema:"The note's text." schema:"minLength=1;maxLength=20000;pattern=\\S"`
	DocumentID string `json:"document_id,omitempty" jsonschema:"A document of the matter the note cites." schema:"minLength=1;maxLength=128"`
}

// SetFactPosture is set_fact_posture's args: the posture an attorney
// records for a fact, with the note that is its basis.
type SetFactPosture struct {
	FactID  string `json:"fact_id" jsonschema:"The fact of the matter." schema:"minLength=1;maxLength=128"`
	Posture string `json:"posture" jsonschema:"The posture to record." schema:"enum=undisputed|disputed|admitted|denied|unresolved"`
	Note    string `json:"note" jsonschema:"The basis: why the fact has this posture." schema:"minLength=1;maxLength=4000;pattern=\\S"`
}

// RecordFactCheck is record_fact_check's args: a check of a fact, with the
// authority relied on and the method as its basis.
type RecordFactCheck struct {
	FactID            string `json:"fact_id" jsonschema:"The fact of the matter." schema:"minLength=1;maxLength=128"`
	Result            string `json:"result" jsonschema:"What the check found." schema:"enum=confirmed|refuted"`
	Method            string `json:"method" jsonschema:"What was compared with what." schema:"minLength=1;maxLength=500;pattern=\\S"`
	AuthorityCitation string `json:"authority_citation" jsonschema:"The authority relied on (a record cite, a rule, a case)." schema:"minLength=1;maxLength=4000;pattern=\\S"`
}

// ServeProduction is serve_production's args: documents to produce to a
// party outside the firm. External: Custody records it in the firm's
// outbox once approved and never performs it.
type ServeProduction struct {
	DocumentIDs []string `json:"document_ids" jsonschema:"The documents of the matter to produce." schema:"minItems=1;maxItems=50;items:minLength=1;items:maxLength=128"`
	Recipient   string   `json:"recipient" jsonschema:"Who receives the production." schema:"minLength=1;maxLength=300;pattern=\\S"`
	Method      string   `json:"method" jsonschema:"How it is served." schema:"enum=email|mail|hand|electronic_service"`
	CoverNote   string   `json:"cover_note,omitempty" jsonschema:"The cover note." schema:"maxLength=2000"`
}

// SetLitigationHold is set_litigation_hold's args: a hold notice to
// custodians. External, as ServeProduction.
type SetLitigationHold struct {
	Custodians   []string `json:"custodians" jsonschema:"Who must preserve." schema:"minItems=1;maxItems=50;items:minLength=1;items:maxLength=200"`
	Scope        string   `json:"scope" jsonschema:"What must be preserved." schema:"minLength=1;maxLength=2000;pattern=\\S"`
	Instructions string   `json:"instructions,omitempty" jsonschema:"Instructions to the custodians." schema:"maxLength=4000"`
}

func internal() *Impact { return &Impact{ExternalEffectClass: EffectNone} }
func external() *Impact { return &Impact{ExternalEffectClass: EffectExternal} }

// Actions are Custody's actions (issue 13): three routine internal ones,
// two that change the record's own standing, two external ones.
func Actions() []Action {
	return []Action{
		Define(Spec[CreateDeadline]{
			Name: ActionCreateDeadline, DeliverableNoun: "deadline", Impact: internal(), SupervisionFloor: FloorRoutine,
			Description: "Adds a deadline to the matter.",
			Target:      func(*CreateDeadline) Ref { return Ref{Kind: TargetMatter} },
			Cites: func(a *CreateDeadline) []Ref {
				if a.SourceDocumentID == "" {
					return nil
				}
				return []Ref{{Kind: TargetDocument, ID: a.SourceDocumentID}}
			},
			WhatWillHappen: func(a *CreateDeadline, m records.Matter) string {
				s := fmt.Sprintf("Add the %s deadline %s, due %s, to %s.", a.Kind, quote(a.Title), a.DueDate, matterName(m))
				if a.Rule != "" {
					s += " It comes from " + quote(a.Rule) + "."
				}
				if a.SourceDocumentID != "" {
					s += " Source: document " + a.SourceDocumentID
					if a.SourcePage > 0 {
						s += fmt.Sprintf(", page %d", a.SourcePage)
					}
					s += "."
				}
				return s
			},
		}),
		Define(Spec[AddExhibit]{
			Name: ActionAddExhibit, DeliverableNoun: "exhibit", Impact: internal(), SupervisionFloor: FloorRoutine,
			Description: "Marks a document of the matter as an exhibit under a label unique in the matter.",
			Target:      func(a *AddExhibit) Ref { return Ref{Kind: TargetDocument, ID: a.DocumentID} },
			WhatWillHappen: func(a *AddExhibit, m records.Matter) string {
				s := fmt.Sprintf("Mark document %s of %s as exhibit %s.", a.DocumentID, matterName(m), a.Label)
				if a.Description != "" {
					s += " Description: " + quote(a.Description) + "."
				}
				return s
			},
		}),
		Define(Spec[AddCaseNote]{
			Name: ActionAddCaseNote, DeliverableNoun: "case note", Impact: internal(), SupervisionFloor: FloorRoutine,
			Description: "Adds a work-product case note to the matter, authored by the requesting key's owner.",
			Target:      func(*AddCaseNote) Ref { return Ref{Kind: TargetMatter} },
			Cites: func(a *AddCaseNote) []Ref {
				if a.DocumentID == "" {
					return nil
				}
				return []Ref{{Kind: TargetDocument, ID: a.DocumentID}}
			},
			WhatWillHappen: func(a *AddCaseNote, m records.Matter) string {
				s := fmt.Sprintf("Add a work-product case note of %d characters to %s", utf8.RuneCountInString(a.Body), matterName(m))
				if a.DocumentID != "" {
					s += ", citing document " + a.DocumentID
				}
				return s + ": " + quote(a.Body) + "."
			},
		}),
		Define(Spec[SetFactPosture]{
			Name: ActionSetFactPosture, DeliverableNoun: "fact posture", Impact: internal(), SupervisionFloor: FloorAlwaysConfirm,
			Conflict: true, Basis: BasisNote,
			Description: "Records the posture of a fact of the matter, with the note that is its basis.",
			Target:      func(a *SetFactPosture) Ref { return Ref{Kind: TargetFact, ID: a.FactID} },
			BasisOf:     func(a *SetFactPosture) *Basis { return &Basis{Kind: BasisNote, Note: a.Note} },
			WhatWillHappen: func(a *SetFactPosture, m records.Matter) string {
				return fmt.Sprintf("Record the posture of fact %s of %s as %s, replacing the posture recorded now. Basis (note): %s.",
					a.FactID, matterName(m), a.Posture, quote(a.Note))
			},
		}),
		Define(Spec[RecordFactCheck]{
			Name: ActionRecordFactCheck, DeliverableNoun: "fact check", Impact: internal(), SupervisionFloor: FloorAlwaysConfirm,
			Conflict: true, Basis: BasisAuthorityCitation,
			Description: "Records a check of a fact of the matter (confirmed or refuted), with the authority and method as its basis.",
			Target:      func(a *RecordFactCheck) Ref { return Ref{Kind: TargetFact, ID: a.FactID} },
			BasisOf: func(a *RecordFactCheck) *Basis {
				return &Basis{Kind: BasisAuthorityCitation, AuthorityCitation: a.AuthorityCitation, Method: a.Method}
			},
			WhatWillHappen: func(a *RecordFactCheck, m records.Matter) string {
				return fmt.Sprintf("Record a check of fact %s of %s with the result %s, by the method %s, citing %s. A confirmed check makes the fact verified.",
					a.FactID, matterName(m), a.Result, quote(a.Method), quote(a.AuthorityCitation))
			},
		}),
		Define(Spec[ServeProduction]{
			Name: ActionServeProduction, DeliverableNoun: "document production", Impact: external(), SupervisionFloor: FloorIndependent,
			Confirm:     true,
			Description: "Asks the firm to serve a production of documents of the matter on a party outside it. Custody records the approved request in the firm's outbox and never performs it.",
			Target:      func(*ServeProduction) Ref { return Ref{Kind: TargetMatter} },
			Cites: func(a *ServeProduction) []Ref {
				refs := make([]Ref, len(a.DocumentIDs))
				for i, id := range a.DocumentIDs {
					refs[i] = Ref{Kind: TargetDocument, ID: id}
				}
				return refs
			},
			WhatWillHappen: func(a *ServeProduction, m records.Matter) string {
				return fmt.Sprintf("An external act: serve a production of %d %s of %s (%s) on %s by %s. Custody records the approved request in the firm's outbox for its own systems and never sends anything itself.",
					len(a.DocumentIDs), plural(len(a.DocumentIDs), "document", "documents"), matterName(m),
					strings.Join(a.DocumentIDs, ", "), quote(a.Recipient), strings.ReplaceAll(a.Method, "_", " "))
			},
		}),
		Define(Spec[SetLitigationHold]{
			Name: ActionSetLitigationHold, DeliverableNoun: "litigation hold notice", Impact: external(), SupervisionFloor: FloorIndependent,
			Confirm:     true,
			Description: "Asks the firm to issue a litigation hold notice to custodians. Custody records the approved request in the firm's outbox and never sends it.",
			Target:      func(*SetLitigationHold) Ref { return Ref{Kind: TargetMatter} },
			WhatWillHappen: func(a *SetLitigationHold, m records.Matter) string {
				quoted := make([]string, len(a.Custodians))
				for i, c := range a.Custodians {
					quoted[i] = quote(c)
				}
				return fmt.Sprintf("An external act: issue a litigation hold notice in %s to %d %s (%s) covering %s. Custody records the approved request in the firm's outbox for its own systems and never sends anything itself.",
					matterName(m), len(a.Custodians), plural(len(a.Custodians), "custodian", "custodians"), strings.Join(quoted, ", "), quote(a.Scope))
			},
		}),
	}
}

// Default returns the registry of Actions.
func Default() *Registry {
	r, err := NewRegistry(Actions()...)
	if err != nil {
		panic(err) // the built-in actions are checked by the package's tests
	}
	return r
}

// quoteMax caps an argument quoted in what_will_happen, in characters.
const quoteMax = 400

// quote shows an argument as quoted text, cut at quoteMax characters and
// with its line breaks and tabs shown as spaces: the approver reads what
// the agent asked for, marked as its words.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > quoteMax {
		r := []rune(s)
		s = string(r[:quoteMax]) + "…"
	}
	return "“" + s + "”"
}

func matterName(m records.Matter) string {
	if m.Name == "" {
		return "matter " + m.ID
	}
	return m.Name + " (" + m.ID + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
