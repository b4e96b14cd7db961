package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/records"
)

// The generator's vocabulary: a matter is written as documents (bodies of
// paragraphs, one paragraph per chunk), a complaint of numbered allegations
// and an answer generated from one response code per allegation, and facts
// that cite quotes. The builder lays chunks onto pages, finds the page range
// of every quote (it panics on a quote that is not in the document: a
// fixture that lies is a bug here, not a runtime condition), and derives
// every timestamp from the dates in the specs plus an offset hashed from the
// row's id, so output is stable and adding a row moves no other row.

// Shorthands.
const (
	none = records.PrivilegeNone
	priv = records.PrivilegePrivileged
	wp   = records.PrivilegeWorkProduct

	undisputed = records.PostureUndisputed
	disputed   = records.PostureDisputed
	admitted   = records.PostureAdmitted
	denied     = records.PostureDenied
	unresolved = records.PostureUnresolved

	pleading   = records.SourcePleading
	discovery  = records.SourceDiscoveryResponse
	deposition = records.SourceDeposition
	document   = records.SourceDocument
	corresp    = records.SourceCorrespondence
	expert     = records.SourceExpertReport
)

// latest is the newest instant any generated row may carry: the seed's
// record is as of the end of October 2026.
var latest = time.Date(2026, 10, 30, 22, 0, 0, 0, time.UTC)

// docSpec is one document; Body holds the current version's paragraphs
// separated by blank lines (or Paras, when generated).
type docSpec struct {
	ID, Title, Kind string
	Class           records.SourceClass
	Party           string
	Priv            records.Privilege
	Author          string
	Custodian       string
	Date            string // document date; also the current version's date
	Pages           int
	Body            string
	Paras           []string
	Comment         string      // current version's comment
	Prior           []priorSpec // earlier versions, oldest first
	Checked         string      // checksum_verified_at, RFC 3339, or ""
}

type priorSpec struct {
	Date    string
	Pages   int
	Body    string
	Comment string
}

// allegation is one numbered paragraph of a complaint.
type allegation struct {
	Heading string // a section heading that starts a new chunk
	Text    string
}

// pleadingSpec is a complaint and, optionally, a paragraph-by-paragraph
// answer to it.
type pleadingSpec struct {
	Complaint docSpec // Paras are built from Head, Items and Tail
	Head      []string
	Items     []allegation
	Tail      []string

	Answer docSpec // Paras built from AnswerHead, Codes and AnswerTail
	// Codes has one response per allegation: A admits, D denies, L lacks
	// knowledge, J legal conclusion, R refers to a document, I incorporates,
	// P partial (text in Partial). Empty: a general denial, no per-paragraph
	// responses.
	Codes      string
	Partial    map[int]string
	AnswerHead []string
	AnswerTail []string
	Defendant  string // short name used in the answer ("Caldwell")
}

// factSpec is one fact. Pl quotes an allegation of the complaint; the
// builder adds the complaint's assertion and the answer's response to it.
type factSpec struct {
	ID   string
	S    string
	P    records.Posture
	Pl   string
	C    []cite
	Priv records.Privilege
	Prop *propSpec
	Chk  []chkSpec
}

type cite struct {
	Doc   string
	Q     string
	V     int    // version; 0 = current
	Party string // overrides the document's party
}

type propSpec struct {
	P   records.Posture
	Why string
}

type chkSpec struct {
	Days   int // after the fact's creation
	Result records.CheckResult
	Method string
	Note   string
}

type deadlineSpec struct {
	ID, Title, Due, Kind, Rule string
	Doc, Q                     string // source document and a quote locating the page
	Done                       bool
	Checked                    bool // a docketing check was recorded
}

type noteSpec struct {
	ID, Author, At, Body string
	Priv                 records.Privilege
	Doc                  string
	Edited               string // updated_at when edited later
}

type matterSpec struct {
	M         records.Matter
	Plaintiff string
	Defendant string
	Pleadings pleadingSpec
	Docs      []docSpec
	Facts     []factSpec
	Deadlines []deadlineSpec
	Notes     []noteSpec
}

// builder accumulates one tenant's fixture.
type builder struct {
	f    records.Fixture
	docs map[string]int // index into f.Documents
	// allegations maps a complaint id to its numbered allegation texts and
	// an answer id to its responses by number.
	allegations map[string][]string
	responses   map[string]map[int]string
	answerOf    map[string]string
	class       map[string]records.SourceClass
	party       map[string]string
	attorney    string
}

func newBuilder(t records.Tenant, principals []records.Principal, attorney string) *builder {
	return &builder{
		f:           records.Fixture{Tenant: t, Principals: principals},
		docs:        map[string]int{},
		allegations: map[string][]string{},
		responses:   map[string]map[int]string{},
		answerOf:    map[string]string{},
		class:       map[string]records.SourceClass{},
		party:       map[string]string{},
		attorney:    attorney,
	}
}

func (b *builder) matter(ms matterSpec) {
	m := ms.M
	b.f.Matters = append(b.f.Matters, m)
	if ms.Pleadings.Complaint.ID != "" {
		b.pleadings(m.ID, ms.Pleadings)
	}
	for _, d := range ms.Docs {
		b.document(m.ID, d)
	}
	for _, fs := range ms.Facts {
		b.fact(m, fs)
	}
	for _, ds := range ms.Deadlines {
		b.deadline(m, ds)
	}
	for _, ns := range ms.Notes {
		b.note(m, ns)
	}
}

func (b *builder) pleadings(matter string, p pleadingSpec) {
	c := p.Complaint
	c.Paras = append([]string(nil), p.Head...)
	var texts []string
	var group []string
	flush := func() {
		if len(group) > 0 {
			c.Paras = append(c.Paras, strings.Join(group, "\n"))
			group = nil
		}
	}
	for i, a := range p.Items {
		n := i + 1
		if a.Heading != "" {
			flush()
			group = append(group, a.Heading)
		}
		group = append(group, fmt.Sprintf("%d. %s", n, a.Text))
		texts = append(texts, a.Text)
		if len(group) >= 3 {
			flush()
		}
	}
	flush()
	c.Paras = append(c.Paras, p.Tail...)
	b.document(matter, c)
	b.allegations[c.ID] = texts

	if p.Answer.ID == "" {
		return
	}
	a := p.Answer
	a.Paras = append([]string(nil), p.AnswerHead...)
	if p.Codes != "" {
		if len(p.Codes) != len(p.Items) {
			panic(fmt.Sprintf("%s: %d response codes for %d allegations", a.ID, len(p.Codes), len(p.Items)))
		}
		resp := map[int]string{}
		d := p.Defendant
		for i, code := range p.Codes {
			n := i + 1
			var s string
			switch code {
			case 'A':
				s = fmt.Sprintf("%s admits the allegations of Paragraph %d.", d, n)
			case 'D':
				s = fmt.Sprintf("%s denies the allegations of Paragraph %d.", d, n)
			case 'L':
				s = fmt.Sprintf("%s lacks knowledge or information sufficient to form a belief about the truth of the allegations of Paragraph %d and on that basis denies them.", d, n)
			case 'J':
				s = fmt.Sprintf("Paragraph %d states legal conclusions to which no response is required. To the extent a response is required, %s denies the allegations of Paragraph %d.", n, d, n)
			case 'R':
				s = fmt.Sprintf("Paragraph %d purports to characterize a written agreement, which speaks for itself. %s denies any allegation of Paragraph %d that is inconsistent with the Agreement's terms.", n, d, n)
			case 'I':
				s = fmt.Sprintf("%s incorporates its responses to the preceding paragraphs as though fully set forth here.", d)
			case 'P':
				s = p.Partial[n]
				if s == "" {
					panic(fmt.Sprintf("%s: no partial response for paragraph %d", a.ID, n))
				}
			default:
				panic(fmt.Sprintf("%s: unknown response code %q", a.ID, code))
			}
			resp[n] = s
		}
		for start := 1; start <= len(p.Items); start += 4 {
			var lines []string
			if start == 1 {
				lines = append(lines, "RESPONSES TO THE NUMBERED ALLEGATIONS")
			}
			for n := start; n < start+4 && n <= len(p.Items); n++ {
				lines = append(lines, fmt.Sprintf("%d. %s", n, resp[n]))
			}
			a.Paras = append(a.Paras, strings.Join(lines, "\n"))
		}
		b.responses[a.ID] = resp
		b.answerOf[c.ID] = a.ID
	}
	a.Paras = append(a.Paras, p.AnswerTail...)
	b.document(matter, a)
}

func paragraphs(body string) []string {
	var out []string
	for _, p := range strings.Split(strings.TrimSpace(body), "\n\n") {
		p = strings.TrimSpace(p)
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// layout lays n chunks over pages 1..pages: with more chunks than pages
// several chunks share a page; with fewer, each chunk spans a run of pages.
func layout(n, pages int) [][2]int {
	out := make([][2]int, n)
	for i := range n {
		start := i*pages/n + 1
		end := (i + 1) * pages / n
		if end < start {
			end = start
		}
		out[i] = [2]int{start, end}
	}
	return out
}

func (b *builder) version(d docSpec, number int, date string, pages int, paras []string, comment string) records.FixtureVersion {
	if len(paras) == 0 {
		panic(d.ID + ": no text")
	}
	created := at(date, d.ID+fmt.Sprint(number), 1, 6)
	v := records.Version{
		DocumentID: d.ID, Number: number, PageCount: pages,
		SHA256:    sha(paras),
		MediaType: "application/pdf",
		Filename:  fmt.Sprintf("%s %s.pdf", date, d.Title),
		Comment:   comment,
		CreatedAt: created, UpdatedAt: created,
	}
	var chunks []records.Chunk
	for i, pr := range layout(len(paras), pages) {
		chunks = append(chunks, records.Chunk{Seq: i + 1, PageStart: pr[0], PageEnd: pr[1], Text: paras[i]})
	}
	return records.FixtureVersion{Version: v, Chunks: chunks}
}

// sha is how the demo's SHA-256 values are computed (seed.VersionText): the demo has
// no original files, so a version's digest is that of its chunk texts
// joined by a blank line.
func sha(paras []string) string {
	s := sha256.Sum256([]byte(strings.Join(paras, "\n\n")))
	return hex.EncodeToString(s[:])
}

func (b *builder) document(matter string, d docSpec) {
	if _, dup := b.docs[d.ID]; dup {
		panic("duplicate document " + d.ID)
	}
	paras := d.Paras
	if paras == nil {
		paras = paragraphs(d.Body)
	}
	var vs []records.FixtureVersion
	for i, p := range d.Prior {
		vs = append(vs, b.version(d, i+1, p.Date, p.Pages, paragraphs(p.Body), p.Comment))
	}
	vs = append(vs, b.version(d, len(vs)+1, d.Date, d.Pages, paras, d.Comment))
	for i := range vs {
		vs[i].Version.Matter = matter
	}
	cur := vs[len(vs)-1].Version
	doc := records.Document{
		ID: d.ID, Matter: matter, Title: d.Title, Kind: d.Kind, Privilege: d.Priv,
		Author: d.Author, Custodian: d.Custodian, Party: d.Party, DocumentDate: d.Date,
		CurrentVersion: cur.Number, PageCount: cur.PageCount, SHA256: cur.SHA256,
		CreatedAt: vs[0].CreatedAt, UpdatedAt: cur.CreatedAt,
	}
	if d.Checked != "" {
		t := mustTime(d.Checked)
		doc.ChecksumVerifiedAt = &t
		doc.UpdatedAt = later(doc.UpdatedAt, t)
	}
	b.f.Documents = append(b.f.Documents, records.FixtureDocument{Document: doc, Versions: vs})
	b.docs[d.ID] = len(b.f.Documents) - 1
	b.class[d.ID] = d.Class
	b.party[d.ID] = d.Party
}

// find locates quote q in version v of document id and returns its pages.
func (b *builder) find(id string, v int, q string) (records.FixtureDocument, int, int, int) {
	i, ok := b.docs[id]
	if !ok {
		panic("unknown document " + id)
	}
	fd := b.f.Documents[i]
	if v == 0 {
		v = fd.CurrentVersion
	}
	for _, c := range fd.Versions[v-1].Chunks {
		if strings.Contains(c.Text, q) {
			return fd, v, c.PageStart, c.PageEnd
		}
	}
	panic(fmt.Sprintf("quote not in %s v%d: %q", id, v, q))
}

func (b *builder) assertion(c cite) (records.Assertion, time.Time) {
	fd, v, ps, pe := b.find(c.Doc, c.V, c.Q)
	party := c.Party
	if party == "" {
		party = b.party[c.Doc]
	}
	return records.Assertion{
		Quote: c.Q, DocumentID: c.Doc, Version: v, PageStart: ps, PageEnd: pe,
		SourceClass: b.class[c.Doc], Party: party,
	}, fd.Versions[v-1].CreatedAt
}

func (b *builder) fact(m records.Matter, fs factSpec) {
	cites := fs.C
	if fs.Pl != "" {
		complaint := m.SourceDocumentID
		cites = append([]cite{{Doc: complaint, Q: fs.Pl}}, cites...)
		if ans, ok := b.answerOf[complaint]; ok {
			n := 0
			for i, t := range b.allegations[complaint] {
				if strings.Contains(t, fs.Pl) {
					n = i + 1
					break
				}
			}
			if n == 0 {
				panic(fmt.Sprintf("%s: pleading quote not in an allegation", fs.ID))
			}
			cites = append(cites[:1], append([]cite{{Doc: ans, Q: b.responses[ans][n]}}, cites[1:]...)...)
		}
	}
	priv := fs.Priv
	if priv == "" {
		priv = none
	}
	f := records.Fact{
		ID: fs.ID, Matter: m.ID, Statement: fs.S, Posture: fs.P, RecordedBy: b.attorney,
		Privilege: priv, Assertions: []records.Assertion{}, Checks: []records.Check{},
	}
	base := mustTime(m.OpenedOn + "T17:00:00Z")
	for _, c := range cites {
		a, t := b.assertion(c)
		f.Assertions = append(f.Assertions, a)
		base = later(base, t)
	}
	f.CreatedAt = after(base, fs.ID+"c", 1, 21)
	f.UpdatedAt = after(f.CreatedAt, fs.ID+"u", 0, 45)
	if fs.Prop != nil {
		pt := after(f.CreatedAt, fs.ID+"p", 1, 12)
		f.ModelProposal = &records.ModelProposal{Posture: fs.Prop.P, Rationale: fs.Prop.Why, Model: "claude-sonnet-4-5", ProposedAt: pt}
		f.UpdatedAt = later(f.UpdatedAt, pt)
	}
	for i, c := range fs.Chk {
		method := c.Method
		if method == "" {
			method = "Quote compared word for word with the cited pages of the source document"
		}
		ct := after(f.CreatedAt, fs.ID+"k"+fmt.Sprint(i), c.Days, c.Days)
		f.Checks = append(f.Checks, records.Check{Method: method, CheckedBy: b.attorney, CheckedAt: ct, Result: c.Result, Comment: c.Note})
		f.UpdatedAt = later(f.UpdatedAt, ct)
	}
	b.f.Facts = append(b.f.Facts, f)
}

func (b *builder) deadline(m records.Matter, ds deadlineSpec) {
	d := records.Deadline{
		ID: ds.ID, Matter: m.ID, Title: ds.Title, Due: ds.Due, Kind: ds.Kind, Rule: ds.Rule,
		Status: records.DeadlineOpen,
	}
	created := mustTime(m.OpenedOn + "T18:00:00Z")
	if ds.Doc != "" {
		fd, _, ps, _ := b.find(ds.Doc, 0, ds.Q)
		d.SourceDocumentID, d.SourcePage = ds.Doc, ps
		created = fd.CreatedAt
	}
	d.CreatedAt = after(created, ds.ID, 0, 3)
	d.UpdatedAt = d.CreatedAt
	if ds.Checked {
		ct := after(d.CreatedAt, ds.ID+"k", 1, 4)
		d.DocketingCheck = &records.Check{
			Method:    "Due date recomputed from the cited rule and order and compared with the calendar entry",
			CheckedBy: b.attorney, CheckedAt: ct, Result: records.CheckConfirmed,
		}
		d.UpdatedAt = ct
	}
	if ds.Done {
		d.Status = records.DeadlineDone
		d.UpdatedAt = later(d.UpdatedAt, capped(mustTime(ds.Due+"T23:30:00Z").Add(-hours(ds.ID))))
	}
	b.f.Deadlines = append(b.f.Deadlines, d)
}

func (b *builder) note(m records.Matter, ns noteSpec) {
	priv := ns.Priv
	if priv == "" {
		priv = none
	}
	if ns.Doc != "" {
		if i, ok := b.docs[ns.Doc]; !ok || b.f.Documents[i].Matter != m.ID {
			panic("note " + ns.ID + " cites a document outside its matter")
		}
	}
	n := records.Note{ID: ns.ID, Matter: m.ID, Author: ns.Author, Body: ns.Body, Privilege: priv, DocumentID: ns.Doc,
		CreatedAt: mustTime(ns.At)}
	n.UpdatedAt = n.CreatedAt
	if ns.Edited != "" {
		n.UpdatedAt = mustTime(ns.Edited)
	}
	b.f.Notes = append(b.f.Notes, n)
}

// at returns a business-hours instant (Pacific) between minDays and
// maxDays after date, chosen by hashing key.
func at(date, key string, minDays, maxDays int) time.Time {
	return capped(mustTime(date + "T00:00:00Z").Add(days(key, minDays, maxDays)))
}

// after is a business-hours instant minDays..maxDays calendar days after
// base's day (hashed from key), never before base and never after latest.
func after(base time.Time, key string, minDays, maxDays int) time.Time {
	return later(base, capped(base.Truncate(24*time.Hour).Add(days(key, minDays, maxDays))))
}

// days is a hashed offset of minDays..maxDays days plus a business-hours
// time of day (16:00–00:59 UTC, 8 a.m.–5 p.m. Pacific) with minutes and
// seconds.
func days(key string, minDays, maxDays int) time.Duration {
	h := hash(key)
	d := minDays + int(h%uint64(maxDays-minDays+1))
	return time.Duration(d)*24*time.Hour + 16*time.Hour + hours(key)
}

// hours is a hashed offset below nine hours, to the second.
func hours(key string) time.Duration {
	return time.Duration(hash(key+"#t")%(9*3600)) * time.Second
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func capped(t time.Time) time.Time {
	if t.After(latest) {
		return latest.Add(-(hours(t.String()) / 3).Truncate(time.Second))
	}
	return t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}
