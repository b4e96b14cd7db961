package mcp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// Multi-round-trip requests (MRTR, MCP 2026-07-28; docs/protocol.md "Elicitation
// and sampling"). A tool, prompt or resource that needs input from the
// client asks through its Peer exactly as in the 2025 era; in the 2026 era
// the question is not sent on a stream but returned as
//
//	{"resultType":"input_required","inputRequests":{key:{method,params}},"requestState":"…"}
//
// and the client retries the same request (a new JSON-RPC id) with
// params.inputResponses keyed alike and the echoed requestState. The tool
// runs again from the start; questions answered in this or an earlier round
// return their answers, the first unanswered ones are asked.
//
// requestState is attacker-controlled. It is sealed with AES-256-GCM under a
// configured secret and binds the credential id, the method, the tool,
// prompt or resource name, the digest of the arguments (never of
// inputResponses or _meta), an expiry, the round and a nonce; it carries
// the answers of earlier rounds. An edited, foreign-credential, other-name,
// other-arguments or expired state is refused with -32602. A state is not
// single-use by itself: a tool with effects that must happen at most once
// claims the state's nonce with a conditional write before it acts
// (Request.OnceClaim, committed with the effects), so a replay is refused.

// ErrInputRequired is what Peer.Ask returns in the 2026 era when the answer
// is not in the request: the handler returns it (after asking every question
// it can ask at once) and the server answers input_required.
var ErrInputRequired = errors.New("mcp: input required from the client")

// StateSealer seals and opens MRTR request states.
type StateSealer struct {
	aead cipher.AEAD
	ttl  time.Duration
}

// NewStateSealer returns a sealer keyed by secret (at least 32 bytes; the
// AES key is derived from it, so one configured secret can serve cursors
// and states) with states valid for ttl (docs/decisions.md: 10 min).
func NewStateSealer(secret []byte, ttl time.Duration) (*StateSealer, error) {
	if len(secret) < 32 {
		return nil, errors.New("request-state secret must be at least 32 bytes")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("custody-mrtr-state-v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &StateSealer{aead: aead, ttl: ttl}, nil
}

// mrtrState is what a requestState carries.
type mrtrState struct {
	Cred    string                     `json:"c"`
	Method  string                     `json:"m"`
	Name    string                     `json:"n"`
	Args    string                     `json:"a"`
	Exp     int64                      `json:"e"`
	Round   int                        `json:"r"`
	Nonce   string                     `json:"o"`
	Answers map[string]json.RawMessage `json:"x,omitempty"`
}

func (s *StateSealer) seal(st mrtrState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte("custody-mrtr"))
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// errBadState is every requestState refusal (which binding broke is not said).
var errBadState = &Error{Code: CodeInvalidParams, Message: "Invalid params: requestState integrity check failed, or it expired, or it belongs to another request."}

func (s *StateSealer) open(token string) (mrtrState, bool) {
	var st mrtrState
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() || len(token) > 64<<10 {
		return st, false
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte("custody-mrtr"))
	if err != nil || json.Unmarshal(plain, &st) != nil {
		return st, false
	}
	return st, true
}

// mrtr is one 2026 request's questions and answers.
type mrtr struct {
	sealer  *StateSealer
	binding mrtrState       // cred, method, name of this request; Args by argsBound
	args    json.RawMessage // the request's arguments, digested only when a state is opened or sealed
	answers map[string]json.RawMessage
	round   int
	nonce   string // the nonce of the state this request carried ("" in round 1)
	loose   bool   // answers came without a state
	asked   map[string]any
}

// argsDigest is the SHA-256 of the arguments' canonical JSON (keys sorted;
// absent and null arguments are {}).
func argsDigest(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		v = map[string]any{}
	}
	b, _ := json.Marshal(v) // map keys are sorted by encoding/json
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// openMRTR reads a 2026 request's inputResponses and requestState from its
// params and verifies the state's bindings; only methods whose table row
// may ask (md.MayAsk) get here.
//
// Answers without a requestState are taken (a stateless client answering
// a single-round question is what the conformance suite sends), except by
// a tool with effects that must happen at most once (issue 8, item 6): it
// drops them (Request.DropUnsealedAnswers) and asks again in a new round,
// whose state carries the nonce its claim is bound to — otherwise a replay
// could drop the state, put the answers inline and run it again without
// meeting its claim.
func (s *Server) openMRTR(req *Request, md Method) *Error {
	p := req.Params
	var name string
	if md.NameParam != "" {
		name, _ = p.String(md.NameParam)
	}
	m := &mrtr{
		sealer:  s.opts.States,
		binding: mrtrState{Cred: req.Credential.ID, Method: req.Method, Name: name},
		args:    p.Get("arguments"),
		answers: map[string]json.RawMessage{},
		asked:   map[string]any{},
	}
	req.mrtr = m
	if rs := p.Get("requestState"); !isNull(rs) {
		token, ok := stringOf(rs)
		if !ok || m.sealer == nil {
			return errBadState
		}
		st, ok := m.sealer.open(token)
		if !ok || st.Cred != m.binding.Cred || st.Method != m.binding.Method || st.Name != m.binding.Name ||
			st.Args != m.argsBound().Args || req.Started.Unix() >= st.Exp {
			return errBadState
		}
		m.round, m.nonce = st.Round, st.Nonce
		for k, v := range st.Answers {
			m.answers[k] = v
		}
	}
	if raw := p.Get("inputResponses"); !isNull(raw) {
		responses, ok := objectMembers(raw)
		if !ok {
			return InvalidParams("Invalid params: inputResponses must be an object of answers.")
		}
		for _, r := range responses {
			if !isJSONObject(r.value) {
				return InvalidParams("Invalid params: every inputResponses entry must be an object.")
			}
			m.answers[r.key] = r.value
			m.loose = m.nonce == ""
		}
	}
	return nil
}

// DropUnsealedAnswers forgets answers that came without a sealed request
// state, so the tool asks again (see openMRTR). An at-most-once tool calls
// it before it runs.
func (r *Request) DropUnsealedAnswers() {
	if r.mrtr != nil && r.mrtr.loose {
		r.mrtr.answers = map[string]json.RawMessage{}
		r.mrtr.loose = false
	}
}

// argsBound returns the binding with the arguments' digest, computing it
// once: most requests neither carry a state nor ask a question, and
// digesting re-encodes the arguments.
func (m *mrtr) argsBound() mrtrState {
	if m.binding.Args == "" {
		m.binding.Args = argsDigest(m.args)
	}
	return m.binding
}

// ask answers a question from this request's answers, or records it.
func (m *mrtr) ask(key, method string, params any) (json.RawMessage, error) {
	if a, ok := m.answers[key]; ok {
		return a, nil
	}
	m.asked[key] = map[string]any{"method": method, "params": params}
	return nil, ErrInputRequired
}

// inputRequired builds the input_required result for the questions asked.
func (m *mrtr) inputRequired(now time.Time) (TypedResult, error) {
	if m.sealer == nil {
		return nil, errors.New("no request-state secret configured")
	}
	nonce := m.nonce
	if nonce == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		nonce = hex.EncodeToString(b[:])
	}
	st := m.argsBound()
	st.Exp = now.Add(m.sealer.ttl).Unix()
	st.Round = m.round + 1
	st.Nonce = nonce
	st.Answers = m.answers
	state, err := m.sealer.seal(st)
	if err != nil {
		return nil, err
	}
	b, err := Marshal(struct {
		ResultType    string         `json:"resultType"`
		InputRequests map[string]any `json:"inputRequests"`
		RequestState  string         `json:"requestState"`
	}{"input_required", m.asked, state})
	return TypedResult(b), err
}

// OnceClaim is the write that claims the request's MRTR nonce for its
// round: a tool with effects that must happen at most once commits it in
// the same transaction as its effects, so a replayed final round finds the
// claim taken and is refused (tools.Spec.AtMostOnce). ok is false without
// a requestState (a request that asked nothing has nothing to replay).
func (r *Request) OnceClaim() (op store.Op, ok bool) {
	if r.mrtr == nil || r.mrtr.nonce == "" || r.srv == nil || r.srv.opts.States == nil {
		return store.Op{}, false
	}
	// One claim per round: a later round of the same request carries a new
	// round number and claims anew; a replayed round finds its claim taken.
	k := store.Key{PK: "MRTR#" + r.mrtr.nonce, SK: "ROUND#" + strconv.Itoa(r.mrtr.round)}
	return store.PutOp(store.Item{PK: k.PK, SK: k.SK, Version: 1,
		ExpiresAt: r.Started.Add(2 * r.srv.opts.States.ttl).Unix(),
		Attrs:     map[string]any{"credential_id": r.Credential.ID}}, store.NotExists()), true
}
