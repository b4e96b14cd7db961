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

// ErrBadEvent reports a proxy event that cannot be an HTTP request: no
// method, or a body flagged base64 that does not decode. API Gateway never
// sends one; a hand-written test event can.
var ErrBadEvent = errors.New("lambdaio: malformed API Gateway proxy event")

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
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return nil, fmt.Errorf("%w: body is flagged base64 but does not decode: %w", ErrBadEvent, err)
		}
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
	proto := ev.RequestContext.Protocol
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		proto, major, minor = "HTTP/1.1", 1, 1
	}
	r := &http.Request{
		Method:        ev.HTTPMethod,
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
	if ip := ev.RequestContext.Identity.SourceIP; ip != "" {
		r.RemoteAddr = net.JoinHostPort(ip, "0")
	}
	if len(body) == 0 {
		r.Body = http.NoBody
	}
	return r.WithContext(ctx), nil
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
