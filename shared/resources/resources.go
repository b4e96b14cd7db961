// Package resources is Custody's resource registry: resources/list,
// resources/templates/list, resources/read and, when the held GET stream is
// offered, resources/subscribe and resources/unsubscribe (MCP
// server/resources).
//
// Two kinds of resources are registered. A Resource has a fixed URI and a
// read function; a Template is an RFC 6570 level-1 URI template ({var}
// only) with a read function given the variables, an optional list function
// that enumerates concrete resources for resources/list, and optional
// per-variable completers for completion/complete. Each carries the scope a
// credential needs to see and read it.
//
// Custody's own resources (AddCustody) are read tools addressed by URI:
//
//	custody://matters/{case_id}                           get_matter
//	custody://matters/{case_id}/documents/{document_id}   get_document
//	custody://matters/{case_id}/facts                     get_fact_record
//	custody://matters/{case_id}/deadlines                 list_deadlines
//
// Reading one runs the tool through the governed tools pipeline
// (tools.Registry.Invoke: scope, kill switch, validation, rate-limit verdict,
// access funnel, credential-class floor, attestation, audit fields), and the
// contents are one application/json text block holding exactly the tool's
// structured result, the attested envelope of docs/contracts.md §1. This package
// reads no store itself (a test checks its imports): reachable matters come
// through MatterSource, which the composition satisfies with the access
// funnel, and subscription rows are built by a Subscriber.
//
// Rules, decided here:
//
//   - Lists show only what the credential may read: a resource or template
//     whose scope it lacks is absent (a `read`-only key sees no document
//     template), and Custody's templates expand only the matters the funnel
//     lets it reach. resources/list and resources/templates/list are sorted
//     by URI and paged with sealed cursors like tools/list (docs/contracts.md §2).
//     Documents are not enumerated one by one (that would cost a query per
//     matter on every page); the document template addresses them and
//     list_documents lists them.
//   - resources/read: a missing uri, or one that is not an absolute URI
//     ("not a uri"), is -32602. A URI that names no resource the credential
//     may read — unknown, a template's variables that name nothing, hidden
//     by scope, refused by the funnel or the credential class — is "resource
//     not found" with data.uri: -32002 in the 2025 era, -32602 in 2026-07-28
//     (NotFound, the one place that decides). Other tool refusals map to
//     protocol errors in readError: UNAVAILABLE -32603 with a plain
//     sentence, anything else -32603 with the refusal's own sentence (they
//     never carry internals, docs/contracts.md §3) or "Internal error.". A rate
//     limit never reaches a read: the transport answers 429 before it runs.
//   - resources/subscribe reads the resource first and refuses exactly what
//     resources/read refuses (one rule, no second copy to drift); the
//     subscription rows are then written in the request's one commit. Both
//     subscribe and unsubscribe answer exactly {} (the conformance suite
//     counts the keys). A change notifies subscribers through
//     subscriptions.Notify. The notification names only the URI the session
//     itself subscribed to, and it is delivered only while the session's
//     credential may still read that URI (MayDeliver, checked through the
//     access funnel as the GET stream sends it): an ethical wall added
//     since the subscription stops the notices.
//   - The audit row names the URI (resources/read, subscribe, unsubscribe)
//     and, for Custody's resources, the tool and matter. A template variable
//     named case_id (MatterVariable) names a matter: resources/list
//     indexes its audit row under the matter of every listed resource of
//     the page it answers (audit.Record.Matters), so "who read this matter"
//     includes who listed its caption; a read is indexed by its tool.
//
// A resource from another package (the conformance fixtures) is added with
// AddResource or AddTemplate:
//
//	err := reg.AddResource(resources.Resource{
//		URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png",
//		Description: "A 1x1 PNG.", Scope: auth.ScopeConformance,
//		Read: func(context.Context, *resources.Call) ([]mcp.ResourceContents, error) {
//			return []mcp.ResourceContents{{MimeType: "image/png", Blob: png1x1}}, nil
//		},
//	})
//	err = reg.AddTemplate(resources.Template{
//		URITemplate: "test://template/{id}/data", Name: "template", MIMEType: "application/json",
//		Description: "Data for an id.", Scope: auth.ScopeConformance,
//		Read: func(_ context.Context, _ *resources.Call, vars map[string]string) ([]mcp.ResourceContents, error) {
//			body, _ := json.Marshal(map[string]any{"id": vars["id"], "templateTest": true, "data": "Data for ID: " + vars["id"]})
//			return []mcp.ResourceContents{{MimeType: "application/json", Text: string(body)}}, nil
//		},
//	})
//
// A read function may leave a content's URI empty: it is filled with the
// URI that was read.
package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/completion"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// MatterVariable is the template variable that names a matter (package
// doc: the audit index).
const MatterVariable = "case_id"

// ErrNotFound is what a read function returns for a URI that names nothing
// (a template's variables that match no record): answered as NotFound.
var ErrNotFound = errors.New("resources: no such resource")

// ReadFunc reads a fixed resource.
type ReadFunc func(ctx context.Context, c *Call) ([]mcp.ResourceContents, error)

// TemplateReadFunc reads the resource a template's variables name; vars
// holds every variable of the template, percent-decoded and non-empty.
type TemplateReadFunc func(ctx context.Context, c *Call, vars map[string]string) ([]mcp.ResourceContents, error)

// ListFunc enumerates concrete resources of a template for resources/list.
type ListFunc func(ctx context.Context, c *Call) ([]mcp.Resource, error)

// Resource describes a resource with a fixed URI.
type Resource struct {
	// URI is the resource's absolute URI.
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Scope is the scope a credential needs to see and read it.
	Scope auth.Scope
	Read  ReadFunc
}

// Template describes an RFC 6570 level-1 URI template.
type Template struct {
	// URITemplate is the template: literal text and {var} expansions.
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Scope is the scope a credential needs to see and read its resources.
	Scope auth.Scope
	Read  TemplateReadFunc
	// List, when set, enumerates concrete resources for resources/list.
	List ListFunc
	// Complete suggests values of a variable for completion/complete, by
	// variable name; a variable without one suggests none.
	Complete map[string]completion.Completer
}

// MatterSource lists the matters a caller reaches: the access funnel
// (access.Funnel satisfies it), sorted by id. A store failure is an error.
type MatterSource interface {
	Matters(ctx context.Context, who access.Who) ([]records.Matter, error)
}

// Resolver is the access funnel as the registry uses it beside Matters:
// a case_id, the visible documents of a reached matter, and one document of
// it (access.Funnel satisfies it). It answers access.ErrNoMatter and
// access.ErrNoDocument for what the caller cannot reach or see.
type Resolver interface {
	completion.DocumentSource
	Document(ctx context.Context, who access.Who, m records.Matter, id string) (records.Document, error)
}

// Subscriber adds a subscription's writes to the request's one commit
// (req.AddOp), or their removal; implemented by package subscriptions.
type Subscriber interface {
	Subscribe(req *mcp.Request, uri string) error
	Unsubscribe(req *mcp.Request, uri string) error
}

// Options configure a Registry.
type Options struct {
	// Tools runs Custody's read tools for its resources (AddCustody).
	Tools *tools.Registry
	// Matters lists reachable matters (Call.Matters; the case_id completer).
	Matters MatterSource
	// Funnel resolves a case_id and the documents of a matter as the
	// caller may see them (the access funnel): for the document template's
	// document_id completer and for MayDeliver. nil leaves document_id
	// without a completer and makes MayDeliver withhold every notice of a
	// matter's resource.
	Funnel  Resolver
	Cursors *mcp.CursorSealer
	// PageSize is the page size of both lists; 0 means 50.
	PageSize int
	// Subscriptions, when set, serves resources/subscribe and
	// resources/unsubscribe; nil leaves them unregistered (-32601), as when
	// the GET stream that would carry the notifications is not offered.
	Subscriptions Subscriber
	// Logger receives read failures; nil discards.
	Logger *slog.Logger
}

// Registry holds the resources and templates.
type Registry struct {
	opts      Options
	resources map[string]*Resource
	templates []*template // in the order added: the first match wins
}

type template struct {
	Template
	compiled *uriTemplate
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, resources: map[string]*Resource{}}
}

// AddResource registers a fixed resource. It fails when the URI is not an
// absolute URI or is taken, or the name, scope or read function is missing:
// programming errors, found at start.
func (r *Registry) AddResource(res Resource) error {
	if !isURI(res.URI) || len(res.URI) > MaxURIBytes {
		return fmt.Errorf("add resource %q: the URI must be an absolute URI of at most %d bytes", res.URI, MaxURIBytes)
	}
	if res.Name == "" || res.Scope == "" || res.Read == nil {
		return fmt.Errorf("add resource %q: name, scope and read are required", res.URI)
	}
	if _, dup := r.resources[res.URI]; dup {
		return fmt.Errorf("add resource %q: already added", res.URI)
	}
	r.resources[res.URI] = &res
	return nil
}

// AddTemplate registers a URI template. It fails when the template is not
// level 1 or is taken, a completer names no variable of it, or the name,
// scope or read function is missing.
func (r *Registry) AddTemplate(t Template) error {
	compiled, err := compileTemplate(t.URITemplate)
	if err != nil {
		return fmt.Errorf("add template: %w", err)
	}
	if t.Name == "" || t.Scope == "" || t.Read == nil {
		return fmt.Errorf("add template %q: name, scope and read are required", t.URITemplate)
	}
	for _, other := range r.templates {
		if other.URITemplate == t.URITemplate {
			return fmt.Errorf("add template %q: already added", t.URITemplate)
		}
	}
	for v := range t.Complete {
		if !slices.Contains(compiled.vars, v) {
			return fmt.Errorf("add template %q: a completer for %s, which is not a variable of it", t.URITemplate, v)
		}
	}
	r.templates = append(r.templates, &template{Template: t, compiled: compiled})
	return nil
}

// Install registers the resource methods on s: resources/list,
// resources/templates/list and resources/read, and resources/subscribe and
// resources/unsubscribe only when Options.Subscriptions is set. The
// composition declares the resources capability (subscribe true exactly
// when the subscription methods are served).
func (r *Registry) Install(s *mcp.Server) {
	s.Register("resources/list", mcp.Method{Handler: r.list, Cacheable: true})
	s.Register("resources/templates/list", mcp.Method{Handler: r.listTemplates, Cacheable: true})
	s.Register("resources/read", mcp.Method{Handler: r.read, NameParam: "uri", MayAsk: true, Cacheable: true})
	if r.opts.Subscriptions != nil {
		// The 2026 era has no subscriptions until subscriptions/listen.
		s.Register("resources/subscribe", mcp.Method{Handler: r.subscribe, Eras: mcp.Era2025})
		s.Register("resources/unsubscribe", mcp.Method{Handler: r.unsubscribe, Eras: mcp.Era2025})
	}
}

// Call is what a read or list function knows about the request it serves.
type Call struct {
	Credential *auth.Credential
	// Who is the caller as the access funnel sees it.
	Who access.Who
	// URI is the URI being read ("" in a list function).
	URI      string
	Now      time.Time
	Revision mcp.Revision
	// Peer is the client end of the request (log, progress, ask).
	Peer mcp.Peer

	req     *mcp.Request
	reg     *Registry
	matters []records.Matter
	read    bool
}

// Matters returns the matters the caller reaches (Options.Matters), read at
// most once per request.
func (c *Call) Matters(ctx context.Context) ([]records.Matter, error) {
	if c.read {
		return c.matters, nil
	}
	if c.reg.opts.Matters == nil {
		return nil, errors.New("resources: no matter source configured")
	}
	ms, err := c.reg.opts.Matters.Matters(ctx, c.Who)
	if err != nil {
		return nil, err
	}
	c.matters, c.read = ms, true
	return ms, nil
}

// Tool runs a tool through the governed pipeline for this request
// (tools.Registry.Invoke) and returns its structured result as JSON.
func (c *Call) Tool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	if c.reg.opts.Tools == nil {
		return nil, fmt.Errorf("resources: no tool registry configured to run %s", name)
	}
	return c.reg.opts.Tools.Invoke(ctx, c.req, name, args)
}

func (r *Registry) newCall(req *mcp.Request, uri string) *Call {
	cred := req.Credential
	return &Call{
		Credential: cred,
		Who:        access.WhoOf(cred),
		URI:        uri, Now: req.Started, Revision: req.Revision, Peer: req, req: req, reg: r,
	}
}

// VariableCompleter implements completion.TemplateLookup: uri is a
// template the credential may see (or a fixed resource's URI: known, with
// no variables).
func (r *Registry) VariableCompleter(cred *auth.Credential, uri, variable string) (completion.Completer, bool) {
	for _, t := range r.templates {
		if t.URITemplate == uri && cred.Has(t.Scope) {
			return t.Complete[variable], true
		}
	}
	if res, ok := r.resources[uri]; ok && cred.Has(res.Scope) {
		return nil, true
	}
	return nil, false
}

// MayRead reports whether the credential may still read the resource at
// uri, without reading it (no tool runs, nothing is audited): the URI is
// one the credential's scopes show, and the matter its case_id names (and
// the document its document_id names) resolves through the access funnel
// for the credential — its team, screens, allow-list and class as they
// stand now. An unknown URI is false; a store failure is an error.
func (r *Registry) MayRead(ctx context.Context, cred *auth.Credential, uri string) (bool, error) {
	if res, ok := r.resources[uri]; ok {
		return cred.Has(res.Scope), nil
	}
	for _, t := range r.templates {
		vars, ok := t.compiled.match(uri)
		if !ok || !cred.Has(t.Scope) {
			continue
		}
		caseID, scoped := vars[MatterVariable]
		if !scoped {
			return true, nil
		}
		if r.opts.Funnel == nil {
			return false, nil
		}
		who := access.WhoOf(cred)
		m, err := r.opts.Funnel.Matter(ctx, who, caseID)
		if errors.Is(err, access.ErrNoMatter) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if docID, ok := vars["document_id"]; ok {
			_, err := r.opts.Funnel.Document(ctx, who, m, docID)
			if errors.Is(err, access.ErrNoDocument) || errors.Is(err, access.ErrNoMatter) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	}
	return false, nil
}

// MayDeliver decides whether a message queued for a GET stream may still
// go to cred (mcp.Options.MayDeliver): a notifications/resources/updated
// only while the credential may read its resource (MayRead) — so a
// principal screened from a matter since subscribing hears nothing more of
// it — and any other message always.
func (r *Registry) MayDeliver(ctx context.Context, cred *auth.Credential, message json.RawMessage) (bool, error) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if err := json.Unmarshal(message, &n); err != nil || n.Method != "notifications/resources/updated" {
		return true, nil
	}
	return r.MayRead(ctx, cred, n.Params.URI)
}

// NotFound is the "resource not found" error for uri in revision rev: code
// -32002 in the 2025 era (MCP 2025-11-25 server/resources §Error Handling),
// -32602 in 2026-07-28 (SEP-2164: no -32002 there), with data.uri either way.
func NotFound(rev mcp.Revision, uri string) *mcp.Error {
	code := mcp.CodeResourceNotFound
	if rev == mcp.Rev20260728 {
		code = mcp.CodeInvalidParams
	}
	return &mcp.Error{Code: code, Message: "Resource not found.", Data: map[string]any{"uri": uri}}
}

// list serves resources/list: the visible fixed resources and what the
// visible templates enumerate, sorted by URI, paged with sealed cursors.
func (r *Registry) list(ctx context.Context, req *mcp.Request) (any, error) {
	c := r.newCall(req, "")
	byURI := map[string]mcp.Resource{}
	for _, res := range r.resources {
		if req.Credential.Has(res.Scope) {
			byURI[res.URI] = mcp.Resource{URI: res.URI, Name: res.Name, Title: res.Title,
				Description: res.Description, MimeType: res.MIMEType}
		}
	}
	for _, t := range r.templates {
		if t.List == nil || !req.Credential.Has(t.Scope) {
			continue
		}
		listed, err := t.List(ctx, c)
		if err != nil {
			r.opts.Logger.WarnContext(ctx, "resource list unreadable", "template", t.URITemplate, "err", err)
			return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "The resource list could not be read just now; retry shortly."}
		}
		for _, res := range listed {
			if _, dup := byURI[res.URI]; !dup {
				byURI[res.URI] = res
			}
		}
	}
	uris := make([]string, 0, len(byURI))
	for u := range byURI {
		uris = append(uris, u)
	}
	slices.Sort(uris)
	start, end, next, err := r.opts.Cursors.PageRequest(req, uris, r.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := mcp.ListResourcesResult{Resources: make([]mcp.Resource, 0, end-start), NextCursor: next}
	for _, u := range uris[start:end] {
		res.Resources = append(res.Resources, byURI[u].ForRevision(req.Revision))
		req.Audit.AddMatter(r.matterOf(u))
	}
	return res, nil
}

// matterOf returns the matter a URI names: the case_id variable of the
// first template it is an expansion of, or "" (package doc: the audit
// index).
func (r *Registry) matterOf(uri string) string {
	for _, t := range r.templates {
		if vars, ok := t.compiled.match(uri); ok {
			return vars[MatterVariable]
		}
	}
	return ""
}

// listTemplates serves resources/templates/list: the visible templates,
// sorted by URI template, paged with sealed cursors.
func (r *Registry) listTemplates(_ context.Context, req *mcp.Request) (any, error) {
	byText := map[string]*template{}
	var keys []string
	for _, t := range r.templates {
		if req.Credential.Has(t.Scope) {
			byText[t.URITemplate] = t
			keys = append(keys, t.URITemplate)
		}
	}
	slices.Sort(keys)
	start, end, next, err := r.opts.Cursors.PageRequest(req, keys, r.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := mcp.ListResourceTemplatesResult{ResourceTemplates: make([]mcp.ResourceTemplate, 0, end-start), NextCursor: next}
	for _, k := range keys[start:end] {
		t := byText[k]
		res.ResourceTemplates = append(res.ResourceTemplates, mcp.ResourceTemplate{
			URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MimeType: t.MIMEType,
		}.ForRevision(req.Revision))
	}
	return res, nil
}

// uriParam reads params.uri: -32602 when it is missing or not an absolute URI.
func uriParam(req *mcp.Request) (string, error) {
	uri, ok := req.Params.String("uri")
	switch {
	case !ok && req.Params.Get("uri") != nil:
		return "", mcp.InvalidParams("Invalid params: the field 'uri' has the wrong type.")
	case uri == "":
		return "", mcp.InvalidParams("Invalid params: uri is required.")
	case !isURI(uri):
		return "", mcp.InvalidParams("Invalid params: uri must be an absolute URI (RFC 3986), such as custody://matters/<case_id>.")
	}
	return uri, nil
}

// read serves resources/read.
func (r *Registry) read(ctx context.Context, req *mcp.Request) (any, error) {
	uri, err := uriParam(req)
	if err != nil {
		return nil, err
	}
	contents, err := r.readURI(ctx, req, uri)
	if err != nil {
		return nil, err
	}
	return mcp.ReadResourceResult{Contents: contents}, nil
}

// readURI resolves uri to a resource the credential may read and reads it:
// a fixed resource first, then the templates in the order added.
func (r *Registry) readURI(ctx context.Context, req *mcp.Request, uri string) ([]mcp.ResourceContents, error) {
	if len(uri) > MaxURIBytes {
		return nil, NotFound(req.Revision, uri)
	}
	req.Audit.Resource = uri
	c := r.newCall(req, uri)
	var (
		contents []mcp.ResourceContents
		err      error
		found    bool
	)
	if res, ok := r.resources[uri]; ok && req.Credential.Has(res.Scope) {
		found = true
		contents, err = res.Read(ctx, c)
	} else {
		for _, t := range r.templates {
			if !req.Credential.Has(t.Scope) {
				continue
			}
			if vars, ok := t.compiled.match(uri); ok {
				found = true
				contents, err = t.Read(ctx, c, vars)
				break
			}
		}
	}
	if !found {
		return nil, NotFound(req.Revision, uri)
	}
	if err != nil {
		return nil, r.readError(ctx, req, uri, err)
	}
	if len(contents) == 0 {
		// Never an empty contents array: nothing there is "not found".
		return nil, NotFound(req.Revision, uri)
	}
	for i := range contents {
		if contents[i].URI == "" {
			contents[i].URI = uri
		}
	}
	return contents, nil
}

// readError maps a read failure to the protocol error answered (the
// mapping of the package doc).
func (r *Registry) readError(ctx context.Context, req *mcp.Request, uri string, err error) error {
	var (
		rpcErr  *mcp.Error
		refusal *tools.Refusal
	)
	switch {
	case errors.As(err, &rpcErr):
		return rpcErr
	case errors.Is(err, mcp.ErrAskCancelled), errors.Is(err, context.Canceled), errors.Is(err, mcp.ErrInputRequired):
		return err // the transport answers these itself
	case errors.Is(err, ErrNotFound), errors.Is(err, tools.ErrUnknownTool), errors.Is(err, access.ErrNoMatter),
		errors.Is(err, access.ErrNoDocument), errors.Is(err, access.ErrNoFact):
		return NotFound(req.Revision, uri)
	case errors.As(err, &refusal):
		switch refusal.Class {
		case tools.ClassNotFound, tools.ClassClientSafeRefused, tools.ClassValidation:
			// The URI's variables are the tool's only arguments: a value the
			// tool refuses, a matter or item the funnel refuses (withheld
			// material included) and a tool the credential class may never
			// call all mean "no such resource here".
			return NotFound(req.Revision, uri)
		case tools.ClassUnavailable:
			return &mcp.Error{Code: mcp.CodeInternalError, Message: "The matter record could not be read just now; retry shortly."}
		case tools.ClassInternal:
			return &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error."}
		default:
			return &mcp.Error{Code: mcp.CodeInternalError, Message: refusal.Message}
		}
	default:
		r.opts.Logger.ErrorContext(ctx, "resource read failed", "uri", uri, "err", err)
		return &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error."}
	}
}

// subscribe serves resources/subscribe: the resource is read as
// resources/read would read it (so exactly what read refuses is refused),
// then the subscription rows join the request's one commit. Answer: {}.
func (r *Registry) subscribe(ctx context.Context, req *mcp.Request) (any, error) {
	uri, err := uriParam(req)
	if err != nil {
		return nil, err
	}
	if req.Session == nil {
		return nil, mcp.InvalidParams("Invalid params: resources/subscribe needs a session.")
	}
	if _, err := r.readURI(ctx, req, uri); err != nil {
		return nil, err
	}
	if err := r.opts.Subscriptions.Subscribe(req, uri); err != nil {
		return nil, err
	}
	return mcp.EmptyResult{}, nil
}

// unsubscribe serves resources/unsubscribe: the rows are removed in the
// request's one commit, whether or not they exist. Answer: {}.
func (r *Registry) unsubscribe(_ context.Context, req *mcp.Request) (any, error) {
	uri, err := uriParam(req)
	if err != nil {
		return nil, err
	}
	if req.Session == nil {
		return nil, mcp.InvalidParams("Invalid params: resources/unsubscribe needs a session.")
	}
	if len(uri) > MaxURIBytes {
		return mcp.EmptyResult{}, nil // nothing so long can have been subscribed
	}
	req.Audit.Resource = uri
	if err := r.opts.Subscriptions.Unsubscribe(req, uri); err != nil {
		return nil, err
	}
	return mcp.EmptyResult{}, nil
}
