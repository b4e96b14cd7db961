// Package lambdaiotest reads what a streaming Lambda function sends back
// through API Gateway's REST response streaming integration: the JSON
// prelude, the eight NUL bytes that end it, then the body (API Gateway
// developer guide, "Set up a Lambda proxy integration with payload response
// streaming", output format). Tests use it on lambdaio.Adapter.Stream's
// response directly and on the bytes the Runtime Interface Emulator returns.
package lambdaiotest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Delimiter ends the prelude: eight NUL bytes.
var Delimiter = []byte{0, 0, 0, 0, 0, 0, 0, 0}

// maxPrelude bounds the prelude: API Gateway requires the metadata within
// the first 16 KB of the stream.
const maxPrelude = 16 << 10

// Prelude is the metadata of a streamed response.
type Prelude struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
}

// Header merges Headers and MultiValueHeaders as API Gateway does.
func (p *Prelude) Header() http.Header {
	h := http.Header{}
	for k, v := range p.Headers {
		h.Add(k, v)
	}
	for k, vs := range p.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// ErrNoPrelude: the stream ended, or passed 16 KB, before the delimiter.
var ErrNoPrelude = errors.New("lambdaiotest: no prelude delimiter in the first 16 KB")

// ReadPrelude reads the prelude from r and returns it with a reader
// positioned at the first body byte. It reads byte by byte through a
// bufio.Reader that never waits for more than the stream has delivered, so
// it returns as soon as the delimiter has arrived.
func ReadPrelude(r io.Reader) (*Prelude, *bufio.Reader, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	var meta []byte
	for !bytes.HasSuffix(meta, Delimiter) {
		if len(meta) > maxPrelude {
			return nil, nil, ErrNoPrelude
		}
		b, err := br.ReadByte()
		if err == io.EOF {
			return nil, nil, ErrNoPrelude
		}
		if err != nil {
			return nil, nil, err
		}
		meta = append(meta, b)
	}
	var p Prelude
	if err := json.Unmarshal(meta[:len(meta)-len(Delimiter)], &p); err != nil {
		return nil, nil, fmt.Errorf("lambdaiotest: prelude is not JSON: %w", err)
	}
	return &p, br, nil
}

// ReadEvent reads one server-sent event (text/event-stream: lines up to a
// blank line) and returns its lines without the blank one.
func ReadEvent(r *bufio.Reader) ([]string, error) {
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return lines, err
		}
		line = line[:len(line)-1]
		if line == "" {
			return lines, nil
		}
		lines = append(lines, line)
	}
}
