package s3local

import (
	"crypto/subtle"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigV4 as S3 checks it (Amazon S3 API Reference, "Authenticating
// Requests (AWS Signature Version 4)"): the front recomputes the signature
// with the SDK's own signer over the request as received (method, path as
// sent, query, the signed headers with their received values, the payload
// hash) and compares. It never trusts what the client says it signed.

const (
	algorithm       = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// maxSkew is how far a header-signed request's X-Amz-Date may be from
	// the server's clock (S3: 15 minutes, RequestTimeTooSkewed).
	maxSkew = 15 * time.Minute
	// maxExpires is the longest X-Amz-Expires S3 takes (7 days).
	maxExpires = 7 * 24 * 60 * 60
)

// auth is what a verified request was signed with.
type auth struct {
	presigned bool
	// payloadHash is x-amz-content-sha256 (hex SHA-256 of the body,
	// UNSIGNED-PAYLOAD, or a STREAMING-* mode).
	payloadHash string
}

// authenticate verifies r's signature, or returns the error S3 answers.
func (s *Server) authenticate(r *http.Request) (*auth, *s3Error) {
	q := r.URL.Query()
	_, presigned := q["X-Amz-Algorithm"]
	authz := r.Header.Get("Authorization")
	switch {
	case presigned && authz != "":
		return nil, errorf(http.StatusBadRequest, "InvalidArgument", "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")
	case presigned:
		return s.verifyQuery(r, q)
	case authz != "":
		return s.verifyHeader(r, authz)
	}
	// Custody's buckets are private: an anonymous request is refused.
	return nil, errAccessDenied()
}

// credentialScope checks "<key id>/<yyyymmdd>/<region>/s3/aws4_request"
// against the server's credentials and the request's date.
func (s *Server) credentialScope(credential, amzDate string, malformed func(string) *s3Error) *s3Error {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 {
		return malformed("the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".")
	}
	if parts[0] != s.creds.AccessKeyID {
		return errorf(http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
	}
	if parts[1] != amzDate[:min(8, len(amzDate))] {
		return malformed("Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	if parts[2] != s.region {
		return malformed("the region '" + parts[2] + "' is wrong; expecting '" + s.region + "'")
	}
	if parts[3] != "s3" || parts[4] != "aws4_request" {
		return malformed("the Credential scope must end in s3/aws4_request")
	}
	return nil
}

// unsignedAmzHeaders lists the x-amz-* headers of r missing from signed:
// S3 refuses a request carrying any (AccessDenied, "There were headers
// present in the request which were not signed").
func unsignedAmzHeaders(r *http.Request, signed map[string]bool) *s3Error {
	var missing []string
	for name := range r.Header {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-") && !signed[lower] {
			missing = append(missing, lower)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return errorf(http.StatusForbidden, "AccessDenied", "There were headers present in the request which were not signed").
		with("HeadersNotSigned", strings.Join(missing, ", "))
}

func signedSet(list string) (map[string]bool, bool) {
	set := map[string]bool{}
	for _, h := range strings.Split(list, ";") {
		if h == "" || h != strings.ToLower(h) {
			return nil, false
		}
		set[h] = true
	}
	return set, set["host"]
}

// unsigned rebuilds r as the signer sees a request: the path exactly as
// received, rawQuery, Host, and only the headers named in signed, with
// their received values.
func unsigned(r *http.Request, rawQuery string, signed map[string]bool) *http.Request {
	path := r.RequestURI
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	req := &http.Request{
		Method: r.Method,
		// Opaque carries the path as sent, so the signer (which S3 tells
		// not to escape again) canonicalizes what the client signed.
		URL:    &url.URL{Scheme: "http", Host: r.Host, Opaque: "//" + r.Host + path, RawQuery: rawQuery},
		Host:   r.Host,
		Header: http.Header{},
	}
	for name := range signed {
		switch name {
		case "host":
		case "content-length":
			// The signer signs the request's ContentLength itself.
			req.ContentLength = r.ContentLength
		default:
			if vs := r.Header.Values(name); len(vs) > 0 {
				req.Header[textproto.CanonicalMIMEHeaderKey(name)] = vs
			}
		}
	}
	return req
}

func (s *Server) verifyHeader(r *http.Request, authz string) (*auth, *s3Error) {
	malformed := func(msg string) *s3Error {
		return errorf(http.StatusBadRequest, "AuthorizationHeaderMalformed", "The authorization header is malformed; %s", msg)
	}
	alg, rest, _ := strings.Cut(authz, " ")
	if alg != algorithm {
		return nil, errorf(http.StatusBadRequest, "InvalidRequest", "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.")
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return nil, malformed("a field is not name=value")
		}
		fields[k] = v
	}
	credential, signedList, signature := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	if credential == "" || signedList == "" || signature == "" {
		return nil, malformed("Credential, SignedHeaders and Signature are required")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return nil, errorf(http.StatusForbidden, "AccessDenied", "AWS authentication requires a valid Date or x-amz-date header")
	}
	if e := s.credentialScope(credential, amzDate, malformed); e != nil {
		return nil, e
	}
	if now := s.now(); at.Sub(now) > maxSkew || now.Sub(at) > maxSkew {
		return nil, errorf(http.StatusForbidden, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large.").
			with("RequestTime", amzDate).with("ServerTime", now.UTC().Format(time.RFC3339)).
			with("MaxAllowedSkewMilliseconds", strconv.FormatInt(maxSkew.Milliseconds(), 10))
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, errorf(http.StatusBadRequest, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
	}
	signed, hasHost := signedSet(signedList)
	if !hasHost {
		return nil, malformed("SignedHeaders must be lower case and include host")
	}
	if e := unsignedAmzHeaders(r, signed); e != nil {
		return nil, e
	}
	if r.Header.Get("X-Amz-Security-Token") != "" && s.creds.SessionToken == "" {
		return nil, errorf(http.StatusBadRequest, "InvalidToken", "The provided token is malformed or otherwise invalid.")
	}
	req := unsigned(r, r.URL.RawQuery, signed)
	err = s.signer.SignHTTP(r.Context(), s.creds, req, payload, "s3", s.region, at, func(o *v4.SignerOptions) {
		o.DisableURIPathEscaping = true
	})
	if err != nil {
		return nil, errorf(http.StatusInternalServerError, "InternalError", "sign: %v", err)
	}
	want := req.Header.Get("Authorization")
	got := algorithm + " Credential=" + credential + ", SignedHeaders=" + signedList + ", Signature=" + signature
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return nil, signatureDoesNotMatch()
	}
	return &auth{payloadHash: payload}, nil
}

func signatureDoesNotMatch() *s3Error {
	return errorf(http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

func (s *Server) verifyQuery(r *http.Request, q url.Values) (*auth, *s3Error) {
	malformed := func(msg string) *s3Error {
		return errorf(http.StatusBadRequest, "AuthorizationQueryParametersError", "%s", msg)
	}
	if q.Get("X-Amz-Algorithm") != algorithm {
		return nil, malformed("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
	}
	credential, amzDate, expires := q.Get("X-Amz-Credential"), q.Get("X-Amz-Date"), q.Get("X-Amz-Expires")
	signedList, signature := q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature")
	if credential == "" || amzDate == "" || expires == "" || signedList == "" || signature == "" {
		return nil, malformed("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
	}
	at, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return nil, malformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	secs, err := strconv.Atoi(expires)
	switch {
	case err != nil || secs < 0:
		return nil, malformed("X-Amz-Expires must be non-negative")
	case secs > maxExpires:
		return nil, malformed("X-Amz-Expires must be less than a week (in seconds) that is 604800")
	}
	if e := s.credentialScope(credential, amzDate, malformed); e != nil {
		return nil, e
	}
	now := s.now()
	if at.Sub(now) > maxSkew {
		return nil, errorf(http.StatusForbidden, "AccessDenied", "Request is not valid yet")
	}
	if end := at.Add(time.Duration(secs) * time.Second); now.After(end) {
		return nil, errorf(http.StatusForbidden, "AccessDenied", "Request has expired").
			with("X-Amz-Expires", expires).with("Expires", end.UTC().Format(time.RFC3339)).
			with("ServerTime", now.UTC().Format(time.RFC3339))
	}
	signed, hasHost := signedSet(signedList)
	if !hasHost {
		return nil, malformed("X-Amz-SignedHeaders must be lower case and include host")
	}
	if e := unsignedAmzHeaders(r, signed); e != nil {
		return nil, e
	}
	if q.Get("X-Amz-Security-Token") != "" && s.creds.SessionToken == "" {
		return nil, errorf(http.StatusBadRequest, "InvalidToken", "The provided token is malformed or otherwise invalid.")
	}
	payload := unsignedPayload
	if signed["x-amz-content-sha256"] {
		payload = r.Header.Get("X-Amz-Content-Sha256")
	}
	// The signer sets the algorithm, credential, date, signed headers (and
	// a session token) itself and appends the signature: give it the rest
	// of the query as received.
	rest := url.Values{}
	for k, vs := range q {
		switch k {
		case "X-Amz-Signature", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Security-Token":
			continue
		}
		rest[k] = vs
	}
	req := unsigned(r, rest.Encode(), signed)
	signedURL, _, err := s.signer.PresignHTTP(r.Context(), s.creds, req, payload, "s3", s.region, at, func(o *v4.SignerOptions) {
		o.DisableURIPathEscaping = true
		// The client's headers are given as they came: none may move
		// into the query.
		o.DisableHeaderHoisting = true
	})
	if err != nil {
		return nil, errorf(http.StatusInternalServerError, "InternalError", "presign: %v", err)
	}
	u, err := url.Parse(signedURL)
	if err != nil {
		return nil, errorf(http.StatusInternalServerError, "InternalError", "presign: %v", err)
	}
	want := u.Query()
	if want.Get("X-Amz-SignedHeaders") != signedList ||
		subtle.ConstantTimeCompare([]byte(want.Get("X-Amz-Signature")), []byte(signature)) != 1 {
		return nil, signatureDoesNotMatch()
	}
	return &auth{presigned: true, payloadHash: payload}, nil
}
