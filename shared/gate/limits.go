package gate

import (
	"strconv"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// The live-session cap (issue 8, item 4). A credential's sessions are
// counted in windows as long as a session's life (Options.SessionTTL): a
// counter row per window, `CRED#<key hash>` / `SESSIONS#<window start>`,
// read in initialize's batch read and incremented in its transaction under
// AttrBelow(cap − the previous window's count). A session lives at most one
// TTL, so the sessions alive now were created in this window or the one
// before: the two counts bound them. DELETE decrements the count of the
// window its session was created in. Expiry decrements nothing, so the
// bound is conservative: an expired session still counts until its window
// has passed, at most one TTL later.

// sessionWindow is the start (epoch seconds) of the window holding now.
func sessionWindow(now time.Time, ttl time.Duration) int64 {
	w := int64(ttl / time.Second)
	sec := now.Unix()
	return sec - sec%w
}

// sessionCounterKey is the row counting a credential's sessions created in
// the window starting at window.
func sessionCounterKey(keyHash string, window int64) store.Key {
	return store.Key{PK: keyspace.CredentialPK(keyHash), SK: "SESSIONS#" + strconv.FormatInt(window, 10)}
}

// sessionCount is what initialize's read found.
type sessionCount struct {
	window            int64
	keys              [2]store.Key
	current, previous int64
}

func counterValue(it *store.Item) int64 {
	if it == nil {
		return 0
	}
	return it.Int("count")
}

// countSession is the write counting one more session in this window.
func (g *Gate) countSession(st *admitted) store.Op {
	exp := st.sessions.window + 2*int64(g.sessionTTL/time.Second)
	return store.UpdateOp(st.sessions.keys[0], store.Update{Add: map[string]int64{"count": 1}, ExpiresAt: &exp},
		store.AttrBelow("count", g.maxSessions-st.sessions.previous))
}

// uncountSession is the write counting one session fewer in the window it
// was created in (a row that has expired meanwhile is recreated expiring
// at once: it changes no decision).
func (g *Gate) uncountSession(keyHash string, sess *mcp.Session) store.Op {
	w := sessionWindow(sess.CreatedAt, g.sessionTTL)
	exp := w + 2*int64(g.sessionTTL/time.Second)
	return store.UpdateOp(sessionCounterKey(keyHash, w), store.Update{Add: map[string]int64{"count": -1}, ExpiresAt: &exp})
}

// slots caps each credential's concurrent calls per lane in this process.
type slots struct {
	limits map[ratelimit.Lane]int
	mu     sync.Mutex
	held   map[slotKey]int
}

type slotKey struct {
	credential string
	lane       ratelimit.Lane
}

func newSlots(limits map[ratelimit.Lane]int) *slots {
	return &slots{limits: limits, held: map[slotKey]int{}}
}

// acquire takes one of the credential's slots in lane; ok is false when
// they are all taken. release gives it back (nil when the lane has no cap).
func (s *slots) acquire(credential string, lane ratelimit.Lane) (release func(), ok bool) {
	limit := s.limits[lane]
	if limit <= 0 {
		return nil, true
	}
	k := slotKey{credential, lane}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[k] >= limit {
		return nil, false
	}
	s.held[k]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.held[k]--; s.held[k] <= 0 {
				delete(s.held, k)
			}
		})
	}, true
}
