package mcp

import "encoding/json"

// Implementation names a client or server (MCP schema "Implementation").
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeParams are the params of initialize (MCP lifecycle §Initialization).
type InitializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      *Implementation `json:"clientInfo"`
}

// ServerCapabilities declares exactly what Custody implements; a capability
// is present only when every method behind it is served.
type ServerCapabilities struct {
	Tools       *ListChangedCapability `json:"tools,omitempty"`
	Prompts     *ListChangedCapability `json:"prompts,omitempty"`
	Resources   *ResourcesCapability   `json:"resources,omitempty"`
	Logging     *struct{}              `json:"logging,omitempty"`
	Completions *struct{}              `json:"completions,omitempty"`
	// Tasks is the 2025-11-25 tasks capability; it is declared only to
	// sessions of that revision, and only when tasks are served
	// (docs/protocol.md "Tasks").
	Tasks *TasksCapability `json:"tasks,omitempty"`
	// Extensions are the protocol extensions served, by identifier, each
	// with its settings ({} for none). Only the 2026-07-28 era's
	// server/discover carries them: there the tasks extension replaces
	// the 2025-11-25 Tasks slot (docs/protocol.md "Tasks").
	Extensions map[string]struct{} `json:"extensions,omitempty"`
}

// TasksCapability is the server's tasks capability of 2025-11-25 (MCP
// basic/utilities/tasks §Server Capabilities): tasks/list and tasks/cancel
// are served, and tools/call may be task-augmented.
type TasksCapability struct {
	List     *struct{}          `json:"list,omitempty"`
	Cancel   *struct{}          `json:"cancel,omitempty"`
	Requests *TaskRequestsTools `json:"requests,omitempty"`
}

// TaskRequestsTools is {"tools": {"call": {}}}: the requests that may be
// task-augmented.
type TaskRequestsTools struct {
	Tools struct {
		Call struct{} `json:"call"`
	} `json:"tools"`
}

// ServedTasks is the tasks capability of a server that serves every part of
// the 2025-11-25 core: list, cancel and task-augmented tools/call.
func ServedTasks() *TasksCapability {
	return &TasksCapability{List: &struct{}{}, Cancel: &struct{}{}, Requests: &TaskRequestsTools{}}
}

// ListChangedCapability is {"listChanged": bool}.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged"`
}

// ResourcesCapability is the resources capability.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe"`
	ListChanged bool `json:"listChanged"`
}

// InitializeResult answers initialize.
type InitializeResult struct {
	ProtocolVersion Revision           `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour (2025-03-26 and later).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// Tool is a tool definition as tools/list advertises it.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	// Execution says whether the tool runs as a task (2025-11-25); absent
	// means taskSupport "forbidden".
	Execution *ToolExecution `json:"execution,omitempty"`
}

// ToolExecution is a tool's execution properties (MCP 2025-11-25 schema
// ToolExecution): taskSupport "forbidden" (the default), "optional" or
// "required".
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// ForRevision returns the tool as revision rev knows it: title and
// outputSchema from 2025-06-18, annotations from 2025-03-26, execution only
// in 2025-11-25 (the revision whose tasks it describes).
func (t Tool) ForRevision(rev Revision) Tool {
	if !rev.HasStructuredOutput() {
		t.Title, t.OutputSchema = "", nil
	}
	if !rev.HasToolAnnotations() {
		t.Annotations = nil
	}
	if !rev.HasTasks() {
		t.Execution = nil
	}
	return t
}

// ListToolsResult answers tools/list.
type ListToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// PaginatedParams are the params of every list method.
type PaginatedParams struct {
	Cursor *string `json:"cursor"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Content is one content block (MCP schema ContentBlock): text, image,
// audio, an embedded resource or a resource link. Custody's own tools emit
// text blocks, and resource links to what a task exported.
type Content struct {
	Type string `json:"type"`
	// Text is the text of a "text" block.
	Text string `json:"text,omitempty"`
	// Data is the base64 data of an "image" or "audio" block.
	Data string `json:"data,omitempty"`
	// MimeType is the media type of an "image", "audio" or "resource_link"
	// block.
	MimeType string `json:"mimeType,omitempty"`
	// Resource is the contents of a "resource" block.
	Resource *ResourceContents `json:"resource,omitempty"`
	// URI, Name and Description are a "resource_link" block's (MCP
	// 2025-06-18 schema ResourceLink): the resource the client reads later
	// with resources/read.
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// MarshalJSON writes the fields the block's type has ("text" always carries
// its text, even empty).
func (c Content) MarshalJSON() ([]byte, error) {
	return c.appendJSON(nil)
}

func (c Content) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = AppendQuoted(b, c.Type)
	switch c.Type {
	case "text":
		b = append(b, `,"text":`...)
		b = AppendQuoted(b, c.Text)
	case "image", "audio":
		b = append(b, `,"data":`...)
		b = AppendQuoted(b, c.Data)
		b = append(b, `,"mimeType":`...)
		b = AppendQuoted(b, c.MimeType)
	case "resource":
		r, err := Marshal(c.Resource)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"resource":`...)
		b = append(b, r...)
	case "resource_link":
		b = append(b, `,"uri":`...)
		b = AppendQuoted(b, c.URI)
		b = append(b, `,"name":`...)
		b = AppendQuoted(b, c.Name)
		if c.Description != "" {
			b = append(b, `,"description":`...)
			b = AppendQuoted(b, c.Description)
		}
		if c.MimeType != "" {
			b = append(b, `,"mimeType":`...)
			b = AppendQuoted(b, c.MimeType)
		}
	}
	return append(b, '}'), nil
}

// TextContent returns a text block.
func TextContent(s string) Content { return Content{Type: "text", Text: s} }

// ResourceContents is a resource's contents: text or a base64 blob
// (MCP schema TextResourceContents / BlobResourceContents).
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// CallToolResult answers tools/call.
type CallToolResult struct {
	Content           []Content      `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
}

// EmptyResult is a result with no members, written exactly {} (resources/
// subscribe and resources/unsubscribe; the conformance suite checks the key
// count, so nothing such as _meta is ever stamped on it).
type EmptyResult struct{}

// PromptArgument is one argument a prompt accepts (MCP schema
// PromptArgument). Title is new in 2025-06-18.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt is a prompt as prompts/list advertises it (MCP schema Prompt).
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// ForRevision returns the prompt as revision rev knows it: the prompt's and
// its arguments' titles from 2025-06-18 on.
func (p Prompt) ForRevision(rev Revision) Prompt {
	if rev.HasStructuredOutput() {
		return p
	}
	p.Title = ""
	args := make([]PromptArgument, len(p.Arguments))
	for i, a := range p.Arguments {
		a.Title = ""
		args[i] = a
	}
	if len(args) > 0 {
		p.Arguments = args
	}
	return p
}

// PromptMessage is one message of a rendered prompt (MCP schema
// PromptMessage): a role, "user" or "assistant", and one content block of
// any kind (text, image, audio, embedded resource).
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// ListPromptsResult answers prompts/list.
type ListPromptsResult struct {
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// GetPromptParams are the params of prompts/get. Arguments is kept raw so
// that an absent or null value (read as {}) and a value that is not an
// object of strings can be told apart.
type GetPromptParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// GetPromptResult answers prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        map[string]any  `json:"_meta,omitempty"`
}

// Resource is a concrete resource as resources/list advertises it (MCP
// schema Resource). Title is new in 2025-06-18.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// ForRevision returns the resource as revision rev knows it.
func (r Resource) ForRevision(rev Revision) Resource {
	if !rev.HasStructuredOutput() {
		r.Title = ""
	}
	return r
}

// ResourceTemplate is a URI template as resources/templates/list advertises
// it (MCP schema ResourceTemplate; RFC 6570). Title is new in 2025-06-18.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// ForRevision returns the template as revision rev knows it.
func (t ResourceTemplate) ForRevision(rev Revision) ResourceTemplate {
	if !rev.HasStructuredOutput() {
		t.Title = ""
	}
	return t
}

// ListResourcesResult answers resources/list.
type ListResourcesResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// ListResourceTemplatesResult answers resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitempty"`
}

// ResourceURIParams are the params of resources/read, resources/subscribe
// and resources/unsubscribe.
type ResourceURIParams struct {
	URI string `json:"uri"`
}

// ReadResourceResult answers resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// CompleteReference is what completion/complete completes an argument of:
// {"type": "ref/prompt", "name"} or {"type": "ref/resource", "uri"} (the
// URI template, or a fixed resource's URI).
type CompleteReference struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      CompleteReference `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	// Context carries the values of the reference's other arguments
	// already given (2025-06-18 and later).
	Context *struct {
		Arguments map[string]string `json:"arguments"`
	} `json:"context,omitempty"`
}

// Completion is the completion member of CompleteResult: at most 100
// values, the total number of matches and whether more exist than were
// sent (Custody always sends both).
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total"`
	HasMore bool     `json:"hasMore"`
}

// CompleteResult answers completion/complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}
