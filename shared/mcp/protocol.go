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
}

// ForRevision returns the tool as revision rev knows it: title and
// outputSchema from 2025-06-18, annotations from 2025-03-26.
func (t Tool) ForRevision(rev Revision) Tool {
	if !rev.HasStructuredOutput() {
		t.Title, t.OutputSchema = "", nil
	}
	if !rev.HasToolAnnotations() {
		t.Annotations = nil
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
// audio or an embedded resource. Custody's own tools emit text blocks.
type Content struct {
	Type string `json:"type"`
	// Text is the text of a "text" block.
	Text string `json:"text,omitempty"`
	// Data is the base64 data of an "image" or "audio" block.
	Data string `json:"data,omitempty"`
	// MimeType is the media type of an "image" or "audio" block.
	MimeType string `json:"mimeType,omitempty"`
	// Resource is the contents of a "resource" block.
	Resource *ResourceContents `json:"resource,omitempty"`
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
