package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Fixture is the seed format: one tenant's whole record as one JSON
// document. Documents nest their versions, versions their chunks; a nested
// row's parent fields (document id, matter, version number, a chunk's
// privilege) may be left out and are filled by Normalize.
type Fixture struct {
	Tenant     Tenant            `json:"tenant"`
	Principals []Principal       `json:"principals"`
	Matters    []Matter          `json:"matters"`
	Documents  []FixtureDocument `json:"documents"`
	Facts      []Fact            `json:"facts"`
	Deadlines  []Deadline        `json:"deadlines"`
	Notes      []Note            `json:"notes"`
}

// FixtureDocument is a document with its versions, oldest first.
type FixtureDocument struct {
	Document
	Versions []FixtureVersion `json:"versions"`
}

// FixtureVersion is a version with its chunks, in Seq order.
type FixtureVersion struct {
	Version
	Chunks []Chunk `json:"chunks"`
}

// ParseFixture decodes a fixture strictly (unknown fields are refused) and
// normalizes it without a clock (Normalize with the zero time). A JSON
// string that is not valid UTF-8 is refused with an *EncodingError naming
// its record and field (encoding/json would replace the bytes with U+FFFD,
// and the record keeps text verbatim). It does not validate otherwise:
// Import does, and so does Fixture.Validate.
func ParseFixture(data []byte) (Fixture, error) {
	if err := parseUTF8(data); err != nil {
		return Fixture{}, fmt.Errorf("decode fixture: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f Fixture
	if err := dec.Decode(&f); err != nil {
		return Fixture{}, fmt.Errorf("decode fixture: %v: %w", err, ErrInvalid)
	}
	if dec.More() {
		return Fixture{}, fmt.Errorf("decode fixture: trailing data: %w", ErrInvalid)
	}
	return f.Normalize(time.Time{}), nil
}

// Normalize returns a copy of f with derived fields filled: each version's
// document id and matter; each chunk's document id, matter, version number
// and privilege (copied from its document); a document's current version
// (its last), page count and SHA-256 (the current version's) when unset;
// zero times: a version's created_at from its document, a chunk's times from
// its version, any other created_at from now (when now is non-zero), and an
// updated_at from its created_at. The caller's slices are not modified.
func (f Fixture) Normalize(now time.Time) Fixture {
	// fill sets a zero created to the parent's (or now), a zero updated to
	// the parent's (or created). With a zero now and no parent nothing is
	// invented.
	fill := func(created, updated *time.Time, parentCreated, parentUpdated time.Time) {
		if created.IsZero() {
			*created = parentCreated
			if created.IsZero() {
				*created = now
			}
		}
		if updated.IsZero() {
			*updated = parentUpdated
			if updated.IsZero() {
				*updated = *created
			}
		}
	}
	var zero time.Time
	out := f
	fill(&out.Tenant.CreatedAt, &out.Tenant.UpdatedAt, zero, zero)
	out.Principals = append([]Principal(nil), f.Principals...)
	for i := range out.Principals {
		fill(&out.Principals[i].CreatedAt, &out.Principals[i].UpdatedAt, zero, zero)
	}
	out.Matters = append([]Matter(nil), f.Matters...)
	for i := range out.Matters {
		fill(&out.Matters[i].CreatedAt, &out.Matters[i].UpdatedAt, zero, zero)
	}
	out.Facts = append([]Fact(nil), f.Facts...)
	for i := range out.Facts {
		fill(&out.Facts[i].CreatedAt, &out.Facts[i].UpdatedAt, zero, zero)
	}
	out.Deadlines = append([]Deadline(nil), f.Deadlines...)
	for i := range out.Deadlines {
		fill(&out.Deadlines[i].CreatedAt, &out.Deadlines[i].UpdatedAt, zero, zero)
	}
	out.Notes = append([]Note(nil), f.Notes...)
	for i := range out.Notes {
		fill(&out.Notes[i].CreatedAt, &out.Notes[i].UpdatedAt, zero, zero)
	}
	out.Documents = make([]FixtureDocument, len(f.Documents))
	for i, fd := range f.Documents {
		d := fd.Document
		fill(&d.CreatedAt, &d.UpdatedAt, zero, zero)
		vs := make([]FixtureVersion, len(fd.Versions))
		for j, fv := range fd.Versions {
			v := fv.Version
			v.DocumentID, v.Matter = d.ID, d.Matter
			if v.Number == 0 {
				v.Number = j + 1
			}
			fill(&v.CreatedAt, &v.UpdatedAt, d.CreatedAt, zero)
			cs := make([]Chunk, len(fv.Chunks))
			for k, c := range fv.Chunks {
				c.DocumentID, c.Matter, c.Version, c.Privilege = d.ID, d.Matter, v.Number, d.Privilege
				if c.Seq == 0 {
					c.Seq = k + 1
				}
				fill(&c.CreatedAt, &c.UpdatedAt, v.CreatedAt, v.UpdatedAt)
				cs[k] = c
			}
			vs[j] = FixtureVersion{Version: v, Chunks: cs}
		}
		if len(vs) > 0 {
			cur := vs[len(vs)-1].Version
			if d.CurrentVersion == 0 {
				d.CurrentVersion = cur.Number
			}
			if d.PageCount == 0 {
				d.PageCount = cur.PageCount
			}
			if d.SHA256 == "" {
				d.SHA256 = cur.SHA256
			}
		}
		out.Documents[i] = FixtureDocument{Document: d, Versions: vs}
	}
	return out
}

// Validate checks the whole fixture: every row's own rules, unique ids,
// references (team members and check authors are principals of the tenant,
// cited documents belong to the citing row's matter), versions numbered
// 1..n with the document describing its last, chunks inside their version's
// pages, and every assertion's quote appearing verbatim in the text of the
// cited version's chunks that overlap the cited pages. Errors wrap
// ErrInvalid; a string that is not valid UTF-8 is an *EncodingError.
func (f Fixture) Validate() error {
	if err := checkUTF8(f); err != nil {
		return err
	}
	if err := f.Tenant.Validate(); err != nil {
		return err
	}
	principals := map[string]bool{}
	for _, p := range f.Principals {
		if err := p.Validate(); err != nil {
			return err
		}
		if principals[p.ID] {
			return invalidf("principal %s listed twice", p.ID)
		}
		principals[p.ID] = true
	}
	matters := map[string]Matter{}
	for _, m := range f.Matters {
		if err := m.Validate(); err != nil {
			return err
		}
		if _, dup := matters[m.ID]; dup {
			return invalidf("matter %s listed twice", m.ID)
		}
		for _, p := range append(append([]string(nil), m.Team...), m.Screened...) {
			if !principals[p] {
				return invalidf("matter %s: principal %s is not in the fixture", m.ID, p)
			}
		}
		matters[m.ID] = m
	}
	docs := map[string]FixtureDocument{}
	for _, fd := range f.Documents {
		d := fd.Document
		if err := d.Validate(); err != nil {
			return err
		}
		if _, ok := matters[d.Matter]; !ok {
			return invalidf("document %s: matter %s is not in the fixture", d.ID, d.Matter)
		}
		if _, dup := docs[d.ID]; dup {
			return invalidf("document %s listed twice", d.ID)
		}
		if err := validateVersions(fd); err != nil {
			return err
		}
		docs[d.ID] = fd
	}
	for _, m := range f.Matters {
		if m.SourceDocumentID != "" {
			if d, ok := docs[m.SourceDocumentID]; !ok || d.Matter != m.ID {
				return invalidf("matter %s: source document %s is not a document of the matter", m.ID, m.SourceDocumentID)
			}
		}
	}
	docOf := func(matter, id string) (FixtureDocument, bool) {
		d, ok := docs[id]
		return d, ok && d.Matter == matter
	}
	seen := map[string]bool{}
	for _, x := range f.Facts {
		if err := x.Validate(); err != nil {
			return err
		}
		if _, ok := matters[x.Matter]; !ok || seen["F"+x.ID] {
			return invalidf("fact %s: unknown matter or listed twice", x.ID)
		}
		seen["F"+x.ID] = true
		if x.RecordedBy != "" && !principals[x.RecordedBy] {
			return invalidf("fact %s: recorded_by %s is not a principal", x.ID, x.RecordedBy)
		}
		for _, c := range x.Checks {
			if !principals[c.CheckedBy] {
				return invalidf("fact %s: checked_by %s is not a principal", x.ID, c.CheckedBy)
			}
		}
		for i, a := range x.Assertions {
			d, ok := docOf(x.Matter, a.DocumentID)
			if !ok {
				return invalidf("fact %s assertion %d: document %s is not in the matter", x.ID, i, a.DocumentID)
			}
			if err := QuoteOnPages(d, a); err != nil {
				return fmt.Errorf("fact %s assertion %d: %w", x.ID, i, err)
			}
		}
	}
	for _, dl := range f.Deadlines {
		if err := dl.Validate(); err != nil {
			return err
		}
		if _, ok := matters[dl.Matter]; !ok || seen["D"+dl.ID] {
			return invalidf("deadline %s: unknown matter or listed twice", dl.ID)
		}
		seen["D"+dl.ID] = true
		if dl.SourceDocumentID != "" {
			d, ok := docOf(dl.Matter, dl.SourceDocumentID)
			if !ok || dl.SourcePage > d.PageCount {
				return invalidf("deadline %s: source document or page is not in the matter", dl.ID)
			}
		}
		if dl.DocketingCheck != nil && !principals[dl.DocketingCheck.CheckedBy] {
			return invalidf("deadline %s: checked_by is not a principal", dl.ID)
		}
	}
	for _, n := range f.Notes {
		if err := n.Validate(); err != nil {
			return err
		}
		if _, ok := matters[n.Matter]; !ok || seen["N"+n.ID] {
			return invalidf("note %s: unknown matter or listed twice", n.ID)
		}
		seen["N"+n.ID] = true
		if !principals[n.Author] {
			return invalidf("note %s: author is not a principal", n.ID)
		}
		if n.DocumentID != "" {
			if _, ok := docOf(n.Matter, n.DocumentID); !ok {
				return invalidf("note %s: document is not in the matter", n.ID)
			}
		}
	}
	return nil
}

func validateVersions(fd FixtureDocument) error {
	d := fd.Document
	if len(fd.Versions) == 0 {
		return invalidf("document %s has no versions", d.ID)
	}
	for j, fv := range fd.Versions {
		v := fv.Version
		if err := v.Validate(); err != nil {
			return err
		}
		if v.Number != j+1 || v.DocumentID != d.ID || v.Matter != d.Matter {
			return invalidf("document %s: version %d out of order or of another document", d.ID, v.Number)
		}
		prev := 0
		for _, c := range fv.Chunks {
			if err := c.Validate(v.PageCount); err != nil {
				return err
			}
			if c.Seq <= prev || c.DocumentID != d.ID || c.Version != v.Number || c.Privilege != d.Privilege {
				return invalidf("document %s v%d: chunk %d out of order or not of its version", d.ID, v.Number, c.Seq)
			}
			prev = c.Seq
		}
	}
	cur := fd.Versions[len(fd.Versions)-1].Version
	if d.CurrentVersion != cur.Number || d.PageCount != cur.PageCount || d.SHA256 != cur.SHA256 {
		return invalidf("document %s does not describe its last version", d.ID)
	}
	return nil
}

// QuoteOnPages checks that a's quote appears verbatim in the text of the
// chunks of version a.Version of d that overlap pages a.PageStart..a.PageEnd
// (joined with single spaces, so a quote may run across two chunks), and that
// the pages lie inside the version. Errors wrap ErrInvalid.
func QuoteOnPages(d FixtureDocument, a Assertion) error {
	if a.Version < 1 || a.Version > len(d.Versions) {
		return invalidf("document %s has no version %d", d.ID, a.Version)
	}
	v := d.Versions[a.Version-1]
	if a.PageEnd > v.PageCount {
		return invalidf("document %s v%d has %d pages, cited %d-%d", d.ID, a.Version, v.PageCount, a.PageStart, a.PageEnd)
	}
	var texts []string
	for _, c := range v.Chunks {
		if c.PageStart <= a.PageEnd && c.PageEnd >= a.PageStart {
			texts = append(texts, c.Text)
		}
	}
	if !strings.Contains(strings.Join(texts, " "), a.Quote) {
		return invalidf("quote does not appear on pages %d-%d of document %s v%d", a.PageStart, a.PageEnd, d.ID, a.Version)
	}
	return nil
}
