// Package records is the matter record: the domain types of a firm's
// litigation file (tenant, principals, matters, documents with versions and
// page-numbered chunks, facts with their sources, deadlines, case notes), how
// they are laid out in Custody's one table, and the reads the read tools need.
//
// # Vocabulary (docs/decisions.md "The record's vocabulary")
//
// A matter is `case_id` on the wire and Matter in Go. A document has
// versions; each version has page-numbered chunks of text. Documents, facts,
// notes (and chunks, which copy their document's) carry a Privilege: none,
// privileged or work_product. An attorney records a fact's Posture
// (undisputed, disputed, admitted, denied, unresolved); a model's suggestion
// lives only in Fact.ModelProposal and is never counted as the posture. A
// fact's Assertions cite a document, a version, a page range, a verbatim
// quote, a SourceClass and the party asserting it. A fact is grounded when it
// has an assertion and verified only when its latest recorded Check
// confirmed it (Fact.Grounded, Fact.Verified); nothing else makes it so.
//
// # Storage layout (docs/decisions.md "Storage")
//
// One table, string keys, no secondary index. Every row keeps its payload as
// the JSON of its Go type in the []byte attribute "data" (AttrData) and has
// Version 1 when imported. Ids are validated by ValidID (no '#', no control
// characters, at most 128 bytes), so each key below has exactly one parse and
// every kind is a clean sort-key prefix of its partition:
//
//	PK                         SK                                    row
//	T#<tenant>                 TENANT                                Tenant
//	T#<tenant>                 PRINCIPAL#<principal>                 Principal
//	T#<tenant>                 MATTER#<matter>                       Matter
//	T#<tenant>                 SEED#<fixture-digest>                 import marker (Import)
//	T#<tenant>#M#<matter>      DOC#<doc>                             Document
//	T#<tenant>#M#<matter>      DOCV#<doc>#<nnnn>                     Version (4 digits)
//	T#<tenant>#M#<matter>      CHUNK#<doc>#<vvvv>#<sssss>            Chunk (version 4, seq 5 digits)
//	T#<tenant>#M#<matter>      FACT#<fact>                           Fact
//	T#<tenant>#M#<matter>      DL#<yyyy-mm-dd>#<deadline>            Deadline
//	T#<tenant>#M#<matter>      NOTE#<created, fixed-width UTC>#<note> Note
//	T#<tenant>#M#<matter>      EXH#<label, upper-cased>              Exhibit
//
// "DOC#" does not match "DOCV#" or "CHUNK#" rows, and a document's chunk
// prefix "CHUNK#<doc>#" cannot match another document because ids hold no
// '#'. Numbers are zero-padded so byte order is numeric order; deadlines sort
// by due date, notes by creation time (SortableTimeLayout has a fixed width, unlike
// RFC 3339 with trailing zeros trimmed, whose byte order is not time order).
//
// Listing a tenant's matters is one strongly consistent query of the tenant
// partition; every collection of a matter is one query (paged internally at
// store.MaxQueryLimit), so no read is N+1. A deadline's key holds its due
// date: moving a due date is a delete and a put in one transaction
// (DeadlineKey gives both keys).
//
// # Writes and seeding
//
// The item builders (TenantItem … NoteItem) validate a row, store its times
// in UTC and return the store.Item, so a writer can put the row inside its
// own transaction (a note beside its audit row). Import writes a whole
// Fixture (the seed format: one JSON document per tenant, see package seed)
// idempotently: rows are created under NotExists conditions in transactions
// of store.MaxTransactItems, existing rows are skipped and never
// overwritten, and a marker row keyed by the fixture's digest makes a re-run
// of the same fixture one Get. A fixture that breaks a rule (a quote not on
// its cited pages, a team member who is not a principal) writes nothing.
//
// # Errors
//
// Reads wrap the store's errors with %w: errors.Is(err, store.ErrNotFound)
// means the row is absent (an id that ValidID refuses is absent too, without
// a store call), errors.Is(err, store.ErrUnavailable) means the store could not
// be read and the collection is unreadable, not empty (docs/contracts.md §1
// read_state). A row whose payload cannot be decoded is ErrCorrupt; callers
// treat it as unreadable as well. A collection that was read and holds
// nothing is a nil slice with a nil error.
//
// # Time
//
// Every row has created_at and updated_at in UTC. The attestation's as_of is
// the newest updated_at of the rows behind an answer (docs/contracts.md §1), so
// writers must move updated_at on every change. Calendar dates (a deadline's
// due date, a document's date, a matter's opening) are "2006-01-02" strings
// (DateLayout) because they have no time of day or zone.
package records
