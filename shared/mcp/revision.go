package mcp

// Revision is an MCP protocol revision, named by its date.
type Revision string

// The revisions Custody knows (docs/protocol.md "Revisions and what changes").
const (
	Rev20241105 Revision = "2024-11-05"
	Rev20250326 Revision = "2025-03-26"
	Rev20250618 Revision = "2025-06-18"
	Rev20251125 Revision = "2025-11-25"
	Rev20260728 Revision = "2026-07-28"
)

// LatestLegacy is what initialize answers when the client asks for a
// revision Custody does not serve (initialize never answers 2026-07-28).
const LatestLegacy = Rev20251125

// LegacyRevisions are the 2025-era revisions served over streamable HTTP,
// newest first.
var LegacyRevisions = []Revision{Rev20251125, Rev20250618, Rev20250326, Rev20241105}

// IsLegacy reports whether r is a served revision of the 2025 era.
func (r Revision) IsLegacy() bool {
	for _, l := range LegacyRevisions {
		if r == l {
			return true
		}
	}
	return false
}

// HasStructuredOutput reports whether tools carry title, outputSchema and
// structuredContent (new in 2025-06-18).
func (r Revision) HasStructuredOutput() bool { return r >= Rev20250618 }

// HasToolAnnotations reports whether tools carry annotations (new in 2025-03-26).
func (r Revision) HasToolAnnotations() bool { return r >= Rev20250326 }

// HasBatch reports whether POST bodies may be JSON-RPC batches (2025-03-26
// only: added there, removed in 2025-06-18).
func (r Revision) HasBatch() bool { return r == Rev20250326 }

// HasTasks reports whether the revision has the tasks of the 2025-11-25
// core (capability tasks, params.task, execution.taskSupport, tasks/*). The
// 2026-07-28 revision replaces them with the io.modelcontextprotocol/tasks
// extension, which is a dialect of its own.
func (r Revision) HasTasks() bool { return r == Rev20251125 }
