package admin

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// The client side of the admin endpoint's authentication (handshake.go),
// which custodyctl uses against a running dev server.

var (
	// ErrNoServer: nothing accepts connections at the address (a server
	// that stopped and left its address behind); the caller may open the
	// store itself.
	ErrNoServer = errors.New("admin: no server is listening at the address")
	// ErrUnauthenticatedServer: something answers at the address but did
	// not prove it holds the admin token, or an answer came without its
	// proof. Nothing secret was sent to it, and nothing it said is believed.
	ErrUnauthenticatedServer = errors.New("admin: the server at the address did not prove it holds the admin token")
)

// handshakeTimeout bounds one challenge.
const handshakeTimeout = 5 * time.Second

// maxAnswerBytes bounds an answer read from the endpoint.
const maxAnswerBytes = 16 << 20

// Client calls a dev server's admin endpoint at one loopback address,
// authenticating the server before anything else and every answer after
// (handshake.go). The admin token never leaves the process. It is safe for
// concurrent use.
type Client struct {
	addr, port, token string
	http              *http.Client

	mu    sync.Mutex
	nonce string // a server nonce from a verified challenge, not yet used
}

// NewClient returns a client of the endpoint at addr ("host:port", as the
// data folder's admin-addr holds it) that proves itself with token. hc nil
// means http.DefaultClient; its Timeout bounds each request.
func NewClient(addr, token string, hc *http.Client) (*Client, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("admin address %q: %w", addr, err)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{addr: addr, port: port, token: token, http: hc}, nil
}

// Addr is the address the client calls.
func (c *Client) Addr() string { return c.addr }

// Verify makes the server at the address prove it holds the admin token,
// and keeps the nonce it issued for the next Do. It returns ErrNoServer when
// nothing listens there, ErrUnauthenticatedServer (wrapped) when something
// answers without the proof.
func (c *Client) Verify(ctx context.Context) error {
	n, err := c.challenge(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.nonce = n
	c.mu.Unlock()
	return nil
}

// challenge runs steps 1 to 3 and returns the verified server nonce.
func (c *Client) challenge(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	clientNonce := newNonce()
	body, _ := json.Marshal(ChallengeRequest{ClientNonce: clientNonce})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.addr+ChallengePath, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("admin challenge: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "", fmt.Errorf("admin challenge to %s: %w", c.addr, ErrNoServer)
	}
	if err != nil {
		return "", fmt.Errorf("admin challenge to %s: %v: %w", c.addr, err, ErrUnauthenticatedServer)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("admin challenge to %s answered %s: %w", c.addr, resp.Status, ErrUnauthenticatedServer)
	}
	var ans ChallengeAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&ans); err != nil || !validNonce(ans.ServerNonce) ||
		!hmac.Equal([]byte(ans.Proof), []byte(serverProof(c.token, c.port, clientNonce, ans.ServerNonce))) {
		return "", fmt.Errorf("admin challenge to %s: %w", c.addr, ErrUnauthenticatedServer)
	}
	return ans.ServerNonce, nil
}

// Do sends one request (path with its query; body nil for none, sent as
// application/json) signed with a verified server nonce, and returns the
// answer's status and body once its proof checks. An answer without a valid
// proof is ErrUnauthenticatedServer, whatever its status.
func (c *Client) Do(ctx context.Context, method, path string, body []byte) (status int, answer []byte, err error) {
	c.mu.Lock()
	nonce := c.nonce
	c.nonce = ""
	c.mu.Unlock()
	if nonce == "" {
		if nonce, err = c.challenge(ctx); err != nil {
			return 0, nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", fmt.Sprintf(`%s nonce="%s", mac="%s"`, Scheme, nonce,
		requestMAC(c.token, nonce, method, req.URL.RequestURI(), body)))
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return 0, nil, fmt.Errorf("admin %s %s: read the answer: %w", method, path, err)
	}
	proof := resp.Header.Get(ProofHeader)
	if !hmac.Equal([]byte(proof), []byte(responseMAC(c.token, nonce, resp.StatusCode, answer))) {
		return 0, nil, fmt.Errorf("admin %s %s: the answer (%s) carries no valid proof: %w", method, path, resp.Status, ErrUnauthenticatedServer)
	}
	return resp.StatusCode, answer, nil
}
