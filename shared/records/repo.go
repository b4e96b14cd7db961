package records

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/custodymcp/custody/shared/store"
)

// Repo reads the matter record from the store. It decides no access: every
// matter id it is given must already have passed package access. A Repo is
// safe for concurrent use.
//
// It is the read funnel of the record's documents (issue 18 §2): a document
// not yet reviewed (pending_review) or withdrawn, with its versions and its
// chunks, is absent from every read below — the same answer as a document
// that does not exist — for every caller, so no read tool, resource,
// completion, search, fact provenance or download can serve one. Only
// privilege review (package intake) reads those rows, from the store.
type Repo struct {
	store store.Store
	// matters keeps matter rows decoded, reused only for a row read again
	// with identical bytes (store.RowCache: the row is read every call).
	matters *store.RowCache[Matter]
}

// matterRowsKept is how many decoded matter rows a Repo keeps.
const matterRowsKept = 4096

// NewRepo returns a Repo over s.
func NewRepo(s store.Store) *Repo {
	return &Repo{store: s, matters: store.NewRowCache[Matter](matterRowsKept)}
}

// Tenant returns the tenant row. Absent: store.ErrNotFound (wrapped).
func (r *Repo) Tenant(ctx context.Context, tenant string) (Tenant, error) {
	var t Tenant
	if !ValidID(tenant) {
		return t, notFound("tenant")
	}
	return t, r.get(ctx, TenantKey(tenant), &t)
}

// Principal returns one principal of tenant. Absent: store.ErrNotFound.
func (r *Repo) Principal(ctx context.Context, tenant, id string) (Principal, error) {
	var p Principal
	if !ValidID(tenant) || !ValidID(id) {
		return p, notFound("principal")
	}
	return p, r.get(ctx, PrincipalKey(tenant, id), &p)
}

// Principals returns every principal of tenant, by id.
func (r *Repo) Principals(ctx context.Context, tenant string) ([]Principal, error) {
	if !ValidID(tenant) {
		return nil, notFound("tenant")
	}
	return queryAll[Principal](ctx, r.store, TenantPK(tenant), skPrincipal, false)
}

// Matter returns one matter of tenant without deciding access (use
// access.Funnel for a caller-supplied id). Absent: store.ErrNotFound.
func (r *Repo) Matter(ctx context.Context, tenant, id string) (Matter, error) {
	if !ValidID(tenant) || !ValidID(id) {
		return Matter{}, notFound("matter")
	}
	k := MatterKey(tenant, id)
	it, err := r.store.Get(ctx, k)
	if err != nil {
		return Matter{}, fmt.Errorf("read %s: %w", k, err)
	}
	m, err := r.matters.Decode(it, AttrData, func([]byte) (Matter, error) {
		var m Matter
		err := decode(it, &m)
		return m, err
	})
	if err != nil {
		return Matter{}, err
	}
	// The decoded row is shared with later reads of the same bytes: the
	// caller gets slices of its own.
	m.Team, m.Screened = slices.Clone(m.Team), slices.Clone(m.Screened)
	return m, nil
}

// MatterWith returns one matter of tenant and its row's version, read in
// one batch with the rows at extra (a write's own rows: its autonomy
// settings, an idempotency row), without deciding access
// (access.Funnel.MatterWith decides it). rows is aligned with extra, nil
// where no live row exists; extra must not repeat a key or name the
// matter's. Absent matter: store.ErrNotFound, with the rows all the same.
func (r *Repo) MatterWith(ctx context.Context, tenant, id string, extra []store.Key) (m Matter, version int64, rows []*store.Item, err error) {
	if !ValidID(tenant) || !ValidID(id) {
		return m, 0, nil, notFound("matter")
	}
	got, err := r.store.BatchGet(ctx, append([]store.Key{MatterKey(tenant, id)}, extra...))
	if err != nil {
		return m, 0, nil, fmt.Errorf("read matter %s: %w", id, err)
	}
	if got[0] == nil {
		return m, 0, got[1:], notFound("matter")
	}
	if err := decode(*got[0], &m); err != nil {
		return m, 0, nil, err
	}
	return m, got[0].Version, got[1:], nil
}

// Matters returns every matter of tenant, by id, from one strongly
// consistent query of the tenant partition.
func (r *Repo) Matters(ctx context.Context, tenant string) ([]Matter, error) {
	if !ValidID(tenant) {
		return nil, notFound("tenant")
	}
	return queryAll[Matter](ctx, r.store, TenantPK(tenant), skMatter, false)
}

// Documents returns every document of a matter, by id.
func (r *Repo) Documents(ctx context.Context, tenant, matter string) ([]Document, error) {
	if !ValidID(tenant) || !ValidID(matter) {
		return nil, notFound("matter")
	}
	docs, err := queryAll[Document](ctx, r.store, MatterPK(tenant, matter), skDocument, false)
	return served(docs, func(d Document) ReviewState { return d.ReviewState }), err
}

// served drops the rows of unreviewed documents (ReviewState.Served), in
// place; nothing left is a nil slice.
func served[T any](rows []T, state func(T) ReviewState) []T {
	out := rows[:0]
	for _, r := range rows {
		if state(r).Served() {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// errUnreviewed is the answer for a document not served (pending review or
// withdrawn): absent, as if there were no row.
func errUnreviewed(what string) error {
	return fmt.Errorf("%s is not reviewed: %w", what, store.ErrNotFound)
}

// Document returns one document of a matter. Absent: store.ErrNotFound.
func (r *Repo) Document(ctx context.Context, tenant, matter, id string) (Document, error) {
	var d Document
	if !ValidID(tenant) || !ValidID(matter) || !ValidID(id) {
		return d, notFound("document")
	}
	if err := r.get(ctx, DocumentKey(tenant, matter, id), &d); err != nil {
		return Document{}, err
	}
	if !d.Reviewed() {
		return Document{}, errUnreviewed("document")
	}
	return d, nil
}

// DocumentsByID reads the named documents of a matter in one batch read
// (up to store.MaxBatchGetKeys ids per read); ids with no document are
// absent from the map.
func (r *Repo) DocumentsByID(ctx context.Context, tenant, matter string, ids []string) (map[string]Document, error) {
	refs := make([]DocumentRef, len(ids))
	for i, id := range ids {
		refs[i] = DocumentRef{Matter: matter, ID: id}
	}
	docs, err := r.DocumentsAt(ctx, tenant, refs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Document, len(docs))
	for ref, d := range docs {
		out[ref.ID] = d
	}
	return out, nil
}

// DocumentRef names a document of a tenant: its matter and its id.
type DocumentRef struct {
	Matter, ID string
}

// DocumentsAt reads the named documents of a tenant, of any of its matters,
// in batch reads of up to store.MaxBatchGetKeys keys; refs with no document
// (or a malformed id) are absent from the map, and a repeated ref is read
// once.
func (r *Repo) DocumentsAt(ctx context.Context, tenant string, refs []DocumentRef) (map[DocumentRef]Document, error) {
	out := make(map[DocumentRef]Document, len(refs))
	var keys []store.Key
	var wanted []DocumentRef // wanted[i] is keys[i]'s ref
	seen := make(map[DocumentRef]bool, len(refs))
	for _, ref := range refs {
		if !seen[ref] && ValidID(tenant) && ValidID(ref.Matter) && ValidID(ref.ID) {
			seen[ref] = true
			wanted = append(wanted, ref)
			keys = append(keys, DocumentKey(tenant, ref.Matter, ref.ID))
		}
	}
	for start := 0; start < len(keys); start += store.MaxBatchGetKeys {
		end := min(start+store.MaxBatchGetKeys, len(keys))
		rows, err := r.store.BatchGet(ctx, keys[start:end])
		if err != nil {
			return nil, fmt.Errorf("read documents of %s: %w", tenant, err)
		}
		for i, row := range rows { // rows align with the keys asked for
			if row == nil {
				continue
			}
			var d Document
			if err := decode(*row, &d); err != nil {
				return nil, err
			}
			if d.Reviewed() {
				out[wanted[start+i]] = d
			}
		}
	}
	return out, nil
}

// Versions returns the versions of one document, oldest first.
func (r *Repo) Versions(ctx context.Context, tenant, matter, doc string) ([]Version, error) {
	if !ValidID(tenant) || !ValidID(matter) || !ValidID(doc) {
		return nil, notFound("document")
	}
	vs, err := queryAll[Version](ctx, r.store, MatterPK(tenant, matter), versionPrefix(doc), false)
	return served(vs, func(v Version) ReviewState { return v.ReviewState }), err
}

// ChunkPage is one page of a version's chunks.
type ChunkPage struct {
	// Chunks are in Seq order.
	Chunks []Chunk
	// More is exact: true when chunks with a larger Seq follow.
	More bool
	// NextSeq is the fromSeq of the next page when More, else 0.
	NextSeq int
}

// Chunks returns up to limit chunks of version of doc, starting at Seq
// fromSeq (values below 1 start at the first chunk), in one query. limit
// must be at least 1 and is clamped to store.MaxQueryLimit; a smaller limit
// is store.ErrInvalid. An absent document or version is an empty page.
func (r *Repo) Chunks(ctx context.Context, tenant, matter, doc string, version, fromSeq, limit int) (ChunkPage, error) {
	if !ValidID(tenant) || !ValidID(matter) || !ValidID(doc) {
		return ChunkPage{}, notFound("document")
	}
	if version < 1 || version > maxVersion || limit < 1 {
		return ChunkPage{}, fmt.Errorf("chunks of %s v%d limit %d: %w", doc, version, limit, store.ErrInvalid)
	}
	fromSeq = max(fromSeq, 1)
	if fromSeq > maxSeq {
		return ChunkPage{}, nil
	}
	prefix := chunkPrefix(doc, version)
	p, err := r.store.Query(ctx, store.Query{
		PK:    MatterPK(tenant, matter),
		SK:    store.SortKeyCondition{From: prefix + pad(fromSeq, 5), To: prefix + pad(maxSeq, 5)},
		Limit: min(limit, store.MaxQueryLimit),
	})
	if err != nil {
		return ChunkPage{}, fmt.Errorf("read chunks of %s v%d: %w", doc, version, err)
	}
	out := ChunkPage{Chunks: make([]Chunk, 0, len(p.Items))}
	last := 0
	for _, it := range p.Items {
		var c Chunk
		if err := decode(it, &c); err != nil {
			return ChunkPage{}, err
		}
		last = c.Seq
		if c.ReviewState.Served() {
			out.Chunks = append(out.Chunks, c)
		}
	}
	if p.NextToken != "" && last > 0 {
		out.More, out.NextSeq = true, last+1
	}
	return out, nil
}

// AllChunks yields every chunk of a matter, of every document and every
// version (older versions included: filter on Document.CurrentVersion to
// search current text only), ordered by document id, version, seq. It pages
// through the partition with store.MaxQueryLimit per query. On a failed read
// it yields one zero Chunk with the error and stops; a consumer that stops
// early stops the reads.
func (r *Repo) AllChunks(ctx context.Context, tenant, matter string) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		if !ValidID(tenant) || !ValidID(matter) {
			yield(Chunk{}, notFound("matter"))
			return
		}
		for it, err := range scan(ctx, r.store, store.Query{PK: MatterPK(tenant, matter), SK: store.SortKeyCondition{Prefix: skChunk}}) {
			var c Chunk
			if err == nil {
				err = decode(it, &c)
			}
			if err != nil {
				yield(Chunk{}, fmt.Errorf("read chunks of matter %s: %w", matter, err))
				return
			}
			if !c.ReviewState.Served() {
				continue
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Facts returns every fact of a matter, by id.
func (r *Repo) Facts(ctx context.Context, tenant, matter string) ([]Fact, error) {
	if !ValidID(tenant) || !ValidID(matter) {
		return nil, notFound("matter")
	}
	return queryAll[Fact](ctx, r.store, MatterPK(tenant, matter), skFact, false)
}

// Fact returns one fact of a matter. Absent: store.ErrNotFound.
func (r *Repo) Fact(ctx context.Context, tenant, matter, id string) (Fact, error) {
	var f Fact
	if !ValidID(tenant) || !ValidID(matter) || !ValidID(id) {
		return f, notFound("fact")
	}
	return f, r.get(ctx, FactKey(tenant, matter, id), &f)
}

// Deadlines returns every deadline of a matter, by due date, then id.
func (r *Repo) Deadlines(ctx context.Context, tenant, matter string) ([]Deadline, error) {
	if !ValidID(tenant) || !ValidID(matter) {
		return nil, notFound("matter")
	}
	return queryAll[Deadline](ctx, r.store, MatterPK(tenant, matter), skDeadline, false)
}

// Notes returns every note of a matter, newest first (by created_at).
func (r *Repo) Notes(ctx context.Context, tenant, matter string) ([]Note, error) {
	if !ValidID(tenant) || !ValidID(matter) {
		return nil, notFound("matter")
	}
	return queryAll[Note](ctx, r.store, MatterPK(tenant, matter), skNote, true)
}

// Exhibits returns every exhibit of a matter, by label (upper-cased).
func (r *Repo) Exhibits(ctx context.Context, tenant, matter string) ([]Exhibit, error) {
	if !ValidID(tenant) || !ValidID(matter) {
		return nil, notFound("matter")
	}
	return queryAll[Exhibit](ctx, r.store, MatterPK(tenant, matter), skExhibit, false)
}

func (r *Repo) get(ctx context.Context, k store.Key, v any) error {
	it, err := r.store.Get(ctx, k)
	if err != nil {
		return fmt.Errorf("read %s: %w", k, err)
	}
	return decode(it, v)
}

// queryAll reads every row under prefix of partition pk, paging the store,
// and decodes each into a T. Nothing read is a nil slice.
func queryAll[T any](ctx context.Context, s store.Store, pk, prefix string, desc bool) ([]T, error) {
	var out []T
	for it, err := range scan(ctx, s, store.Query{PK: pk, SK: store.SortKeyCondition{Prefix: prefix}, Descending: desc}) {
		if err != nil {
			return nil, fmt.Errorf("read %s rows of %s: %w", prefix, pk, err)
		}
		var v T
		if err := decode(it, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// scan yields every item of q, one store query per MaxQueryLimit items. On
// an error it yields the error once and stops.
func scan(ctx context.Context, s store.Store, q store.Query) iter.Seq2[store.Item, error] {
	return func(yield func(store.Item, error) bool) {
		q.Limit = store.MaxQueryLimit
		for {
			p, err := s.Query(ctx, q)
			if err != nil {
				yield(store.Item{}, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
			if p.NextToken == "" {
				return
			}
			q.PageToken = p.NextToken
		}
	}
}

// notFound is the answer for an id ValidID refuses: nothing can be stored
// under it.
func notFound(what string) error {
	return fmt.Errorf("%s id is not valid: %w", what, store.ErrNotFound)
}
