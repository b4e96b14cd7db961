package lambdaio

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// ErrBadEvent reports an event that cannot be an HTTP request: no method, a
// body flagged base64 that does not decode, or (payload format 2.0) a
// rawPath that is no path. API Gateway and Lambda never send one; a
// hand-written test event, or an event of another front door than the one
// the function is configured for, can.
var ErrBadEvent = errors.New("lambdaio: malformed HTTP event")

// NewRequest returns the server-side *http.Request of a REST API proxy event
// (API Gateway developer guide, "Input format of a Lambda function for proxy
// integration"), carrying ctx: the invocation's context, with the Lambda
// deadline and, from the runtime, lambdacontext's request id.
//
//   - Method is httpMethod; URL.Path is path ("/" when empty).
//   - The query is multiValueQueryStringParameters, plus queryStringParameters
//     for keys absent from it (API Gateway delivers both, already decoded),
//     re-encoded into URL.RawQuery with keys sorted.
//   - Header is multiValueHeaders plus headers for absent keys, canonicalized.
//   - Host is the Host header, else requestContext.domainName.
//   - Body is body, base64-decoded when isBase64Encoded; ContentLength is its
//     length in bytes.
//   - RemoteAddr is requestContext.identity.sourceIp with port 0.
//   - Proto is requestContext.protocol when it parses, else HTTP/1.1.
//
// It returns an error wrapping ErrBadEvent for an event without a method or
// with an undecodable base64 body.
func NewRequest(ctx context.Context, ev *events.APIGatewayProxyRequest) (*http.Request, error) {
	if ev.HTTPMethod == "" {
		return nil, fmt.Errorf("%w: no httpMethod", ErrBadEvent)
	}
	body, err := eventBody(ev.Body, ev.IsBase64Encoded)
	if err != nil {
		return nil, err
	}
	path := ev.Path
	if path == "" {
		path = "/"
	}
	u := &url.URL{Path: path, RawQuery: eventQuery(ev).Encode()}
	header := eventHeader(ev)
	host := header.Get("Host")
	if host == "" {
		host = ev.RequestContext.DomainName
	}
	return newRequest(ctx, ev.HTTPMethod, u, header, host, body, ev.RequestContext.Protocol, ev.RequestContext.Identity.SourceIP), nil
}

// NewHTTPAPIRequest returns the server-side *http.Request of an HTTP API
// event of payload format 2.0 (API Gateway developer guide, "Create AWS
// Lambda proxy integrations for HTTP APIs"), carrying ctx as NewRequest does:
//
//   - Method is requestContext.http.method; the path is rawPath as the
//     client sent it (URL.Path unescaped, URL.RawPath the raw form; "/" when
//     empty; a $default stage adds no stage prefix); the query is
//     rawQueryString, unchanged.
//   - Header is headers (whose names API Gateway lowercases and whose
//     repeated values it has already joined with commas), canonicalized; the
//     Cookie header is cookies joined with "; " (RFC 6265 §5.4), since
//     payload format 2.0 moves the cookies out of headers.
//   - Host is the Host header, else requestContext.domainName; the body,
//     ContentLength, RemoteAddr (requestContext.http.sourceIp) and Proto
//     (requestContext.http.protocol) as NewRequest's.
//
// It returns an error wrapping ErrBadEvent for an event without a method,
// with a rawPath that is not an escaped absolute path, or with an
// undecodable base64 body.
func NewHTTPAPIRequest(ctx context.Context, ev *events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	h := ev.RequestContext.HTTP
	return newV2Request(ctx, v2Event{
		method: h.Method, rawPath: ev.RawPath, rawQuery: ev.RawQueryString, headers: ev.Headers, cookies: ev.Cookies,
		body: ev.Body, base64: ev.IsBase64Encoded, domainName: ev.RequestContext.DomainName, sourceIP: h.SourceIP, protocol: h.Protocol,
	})
}

// NewFunctionURLRequest returns the server-side *http.Request of a Lambda
// function URL event (Lambda developer guide, "Invoking Lambda function
// URLs", request payload format), which is payload format 2.0 without the
// route and stage: every field is read as NewHTTPAPIRequest reads it. Its
// Host is the function URL's own domain (<url-id>.lambda-url.<region>.on.aws),
// also behind CloudFront, which must not forward the viewer's Host to the
// URL; nothing in Custody trusts Host for links (PUBLIC_BASE_URL builds
// them). Errors are NewHTTPAPIRequest's.
func NewFunctionURLRequest(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*http.Request, error) {
	h := ev.RequestContext.HTTP
	return newV2Request(ctx, v2Event{
		method: h.Method, rawPath: ev.RawPath, rawQuery: ev.RawQueryString, headers: ev.Headers, cookies: ev.Cookies,
		body: ev.Body, base64: ev.IsBase64Encoded, domainName: ev.RequestContext.DomainName, sourceIP: h.SourceIP, protocol: h.Protocol,
	})
}

// v2Event is the part of payload format 2.0 a request is built from, the
// same in an HTTP API event and a function URL event.
type v2Event struct {
	method, rawPath, rawQuery string
	headers                   map[string]string
	cookies                   []string
	body                      string
	base64                    bool
	domainName, sourceIP      string
	protocol                  string
}

func newV2Request(ctx context.Context, ev v2Event) (*http.Request, error) {
	if ev.method == "" {
		return nil, fmt.Errorf("%w: no requestContext.http.method", ErrBadEvent)
	}
	body, err := eventBody(ev.body, ev.base64)
	if err != nil {
		return nil, err
	}
	raw := ev.rawPath
	if raw == "" {
		raw = "/"
	}
	p, err := url.PathUnescape(raw)
	if err != nil || !strings.HasPrefix(raw, "/") {
		return nil, fmt.Errorf("%w: rawPath is not an escaped absolute path", ErrBadEvent)
	}
	u := &url.URL{Path: p, RawQuery: ev.rawQuery}
	if raw != u.EscapedPath() {
		u.RawPath = raw
	}
	header := make(http.Header, len(ev.headers)+1)
	for k, v := range ev.headers {
		header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	if len(ev.cookies) > 0 {
		header.Set("Cookie", strings.Join(ev.cookies, "; "))
	}
	host := header.Get("Host")
	if host == "" {
		host = ev.domainName
	}
	return newRequest(ctx, ev.method, u, header, host, body, ev.protocol, ev.sourceIP), nil
}

// eventBody decodes an event's body, from base64 when flagged.
func eventBody(s string, isBase64 bool) ([]byte, error) {
	if !isBase64 {
		return []byte(s), nil
	}
	body, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: body is flagged base64 but does not decode: %w", ErrBadEvent, err)
	}
	return body, nil
}

// newRequest assembles a server-side request carrying ctx.
func newRequest(ctx context.Context, method string, u *url.URL, header http.Header, host string, body []byte, proto, sourceIP string) *http.Request {
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		proto, major, minor = "HTTP/1.1", 1, 1
	}
	r := &http.Request{
		Method:        method,
		URL:           u,
		Proto:         proto,
		ProtoMajor:    major,
		ProtoMinor:    minor,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Host:          host,
		RequestURI:    u.RequestURI(),
	}
	if sourceIP != "" {
		r.RemoteAddr = net.JoinHostPort(sourceIP, "0")
	}
	if len(body) == 0 {
		r.Body = http.NoBody
	}
	return r.WithContext(ctx)
}

func eventQuery(ev *events.APIGatewayProxyRequest) url.Values {
	q := url.Values{}
	for k, vs := range ev.MultiValueQueryStringParameters {
		q[k] = append([]string(nil), vs...)
	}
	for k, v := range ev.QueryStringParameters {
		if _, ok := q[k]; !ok {
			q[k] = []string{v}
		}
	}
	return q
}

func eventHeader(ev *events.APIGatewayProxyRequest) http.Header {
	h := http.Header{}
	for k, vs := range ev.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range ev.Headers {
		if _, ok := h[http.CanonicalHeaderKey(k)]; !ok {
			h.Set(k, v)
		}
	}
	return h
}

// isText reports whether a response body may travel as a JSON string rather
// than base64: its Content-Type is textual (text/*, JSON, XML, JavaScript,
// form data, or a +json/+xml suffix) and the bytes are valid UTF-8. An empty
// body is always text.
func isText(contentType string, body []byte) bool {
	if len(body) == 0 {
		return true
	}
	mt := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	textual := strings.HasPrefix(mt, "text/") ||
		strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
	switch mt {
	case "application/json", "application/xml", "application/javascript",
		"application/x-www-form-urlencoded", "application/x-ndjson":
		textual = true
	}
	return textual && utf8.Valid(body)
}
