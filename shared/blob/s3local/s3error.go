package s3local

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
)

// s3Error is an error answered as S3 answers it: a status and an XML
// <Error> body with S3's code, message and, for some codes, extra elements
// (Amazon S3 API Reference, "Error responses").
type s3Error struct {
	Status  int
	Code    string
	Message string
	// Extra are further child elements of <Error>, in order (e.g.
	// HeadersNotSigned, MinSizeAllowed).
	Extra [][2]string
}

func (e *s3Error) Error() string {
	return fmt.Sprintf("s3local: %d %s: %s", e.Status, e.Code, e.Message)
}

func errorf(status int, code, format string, args ...any) *s3Error {
	return &s3Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *s3Error) with(name, value string) *s3Error {
	e.Extra = append(e.Extra, [2]string{name, value})
	return e
}

// The errors the front answers itself.
var (
	errAccessDenied = func() *s3Error { return errorf(http.StatusForbidden, "AccessDenied", "Access Denied") }
	errNoSuchUpload = func() *s3Error {
		return errorf(http.StatusNotFound, "NoSuchUpload",
			"The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
	}
	errNoSuchKey    = func() *s3Error { return errorf(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.") }
	errNoSuchBucket = func() *s3Error {
		return errorf(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
	}
	errNotImplemented = func(what string) *s3Error {
		return errorf(http.StatusNotImplemented, "NotImplemented",
			"A header or query you provided implies functionality that is not implemented: %s", what)
	}
	errInvalidPart = func() *s3Error {
		return errorf(http.StatusBadRequest, "InvalidPart",
			"One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
	}
)

type xmlError struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string
	Message   string
	Resource  string `xml:",omitempty"`
	RequestID string `xml:"RequestId"`
	Extra     []xmlElement
}

type xmlElement struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// write answers e on w; a HEAD gets the status alone, as from S3.
func (e *s3Error) write(w http.ResponseWriter, r *http.Request, requestID string) {
	h := w.Header()
	h.Set("x-amz-request-id", requestID)
	if r.Method == http.MethodHead {
		w.WriteHeader(e.Status)
		return
	}
	body := xmlError{Code: e.Code, Message: e.Message, Resource: r.URL.Path, RequestID: requestID}
	for _, x := range e.Extra {
		body.Extra = append(body.Extra, xmlElement{XMLName: xml.Name{Local: x[0]}, Value: x[1]})
	}
	out, err := xml.Marshal(body)
	if err != nil {
		out = []byte("<Error><Code>InternalError</Code></Error>")
	}
	out = append([]byte(xml.Header), out...)
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(out)
}
