package mcp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A POST whose body stops arriving is answered (-32700) once the body read
// deadline passes, instead of holding the connection.
func TestABodyThatStopsArrivingIsAnsweredNotHeld(t *testing.T) {
	srv := httptest.NewServer(NewServer(Options{BodyReadTimeout: 200 * time.Millisecond}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", srv.Listener.Addr())
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound for the test, far above the server's
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b.String(), "-32700") {
		t.Errorf("stalled body: %d %s, want 400 with -32700", resp.StatusCode, b.String())
	}
}
