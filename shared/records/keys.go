package records

import (
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// AttrData is the attribute holding a row's JSON payload.
const AttrData = "data"

// SortableTimeLayout is the fixed-width UTC layout of a time in a sort key
// (keyspace.SortableTimeLayout).
const SortableTimeLayout = keyspace.SortableTimeLayout

// Sort-key prefixes, one per kind of row (see the package doc).
const (
	skTenant    = "TENANT"
	skPrincipal = "PRINCIPAL#"
	skMatter    = "MATTER#"
	skSeed      = "SEED#"
	skDocument  = "DOC#"
	skVersion   = "DOCV#"
	skChunk     = "CHUNK#"
	skFact      = "FACT#"
	skDeadline  = "DL#"
	skNote      = "NOTE#"
	skExhibit   = "EXH#"
)

// TenantPK is the partition of a tenant's own rows: the tenant, its
// principals and its matters.
func TenantPK(tenant string) string { return keyspace.TenantPK(tenant) }

// MatterPK is the partition of one matter's rows.
func MatterPK(tenant, matter string) string { return keyspace.MatterPK(tenant, matter) }

// TenantKey is the key of the tenant row.
func TenantKey(tenant string) store.Key { return store.Key{PK: TenantPK(tenant), SK: skTenant} }

// PrincipalKey is the key of a principal row.
func PrincipalKey(tenant, principal string) store.Key {
	return store.Key{PK: TenantPK(tenant), SK: skPrincipal + principal}
}

// MatterKey is the key of a matter row.
func MatterKey(tenant, matter string) store.Key {
	return store.Key{PK: TenantPK(tenant), SK: skMatter + matter}
}

// DocumentKey is the key of a document row.
func DocumentKey(tenant, matter, doc string) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: skDocument + doc}
}

// VersionKey is the key of a document version row.
func VersionKey(tenant, matter, doc string, number int) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: versionPrefix(doc) + pad(number, 4)}
}

// ChunkKey is the key of a chunk row.
func ChunkKey(tenant, matter, doc string, version, seq int) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: chunkPrefix(doc, version) + pad(seq, 5)}
}

// FactKey is the key of a fact row.
func FactKey(tenant, matter, fact string) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: skFact + fact}
}

// DeadlineKey is the key of a deadline row; due is its DateLayout due date.
func DeadlineKey(tenant, matter, due, id string) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: skDeadline + due + "#" + id}
}

// NoteKey is the key of a note row; created is its creation time.
func NoteKey(tenant, matter string, created time.Time, id string) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: skNote + created.UTC().Format(SortableTimeLayout) + "#" + id}
}

// ExhibitKey is the key of an exhibit row: its label, upper-cased, so a
// label is unique in its matter whatever its letter case.
func ExhibitKey(tenant, matter, label string) store.Key {
	return store.Key{PK: MatterPK(tenant, matter), SK: skExhibit + strings.ToUpper(label)}
}

func versionPrefix(doc string) string      { return skVersion + doc + "#" }
func chunkPrefix(doc string, v int) string { return skChunk + doc + "#" + pad(v, 4) + "#" }
func pad(n, width int) string              { return fmt.Sprintf("%0*d", width, n) }
func seedKey(tenant, digest string) store.Key {
	return store.Key{PK: TenantPK(tenant), SK: skSeed + digest}
}

// The sort-key prefixes of a matter partition's documents, versions and a
// version's chunks, for the readers of rows the Repo does not serve
// (privilege review lists pending documents and rewrites their chunks;
// import finds a digest among every version): query the MatterPK with
// them.
func DocumentRowsPrefix() string               { return skDocument }
func VersionRowsPrefix() string                { return skVersion }
func ChunkRowsPrefix(doc string, v int) string { return chunkPrefix(doc, v) }
