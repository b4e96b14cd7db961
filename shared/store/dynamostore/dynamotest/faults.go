package dynamotest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Fault is what Faults does to one request: the failures after which a
// client cannot tell whether its write took effect. DynamoDB answers HTTP
// 500 when it cannot say (its documentation: the request "may or may not"
// have succeeded), and a connection that breaks after the request was sent
// leaves the same doubt; the AWS SDK retries both, resending the request
// unchanged.
type Fault struct {
	// Applied passes the request to the emulator first, so it takes effect
	// and only its answer is lost; otherwise the request never reaches the
	// emulator (a front end that failed before the write).
	Applied bool
	// Reset closes the connection with a TCP reset instead of answering;
	// otherwise the answer is HTTP 500 InternalServerError.
	Reset bool
	// Throttled answers HTTP 400 ProvisionedThroughputExceededException
	// instead, without passing the request on: the contrast case, a refusal
	// after which the client knows nothing was applied (the SDK retries it
	// too). Applied and Reset must be false with it.
	Throttled bool
	// Meanwhile, when set, runs after the request was (or was not) applied
	// and before the client learns of the failure: another writer's step
	// between an attempt and its retry. It may use the same server.
	Meanwhile func()
}

// Faults injects Faults into chosen requests of a Server: pass its
// Middleware to NewServer, then queue faults with Next. Requests with no
// queued fault pass through unchanged. It is safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	queued   map[string][]Fault
	injected map[string]int
}

// Next queues faults for the next requests of operation op (the
// X-Amz-Target suffix: "PutItem", "TransactWriteItems", …), one request
// each, in order.
func (f *Faults) Next(op string, faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queued == nil {
		f.queued, f.injected = map[string][]Fault{}, map[string]int{}
	}
	f.queued[op] = append(f.queued[op], faults...)
}

// Injected returns how many faults requests of op have met.
func (f *Faults) Injected(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[op]
}

// Pending returns how many queued faults of op have not met a request yet.
func (f *Faults) Pending(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queued[op])
}

// take removes and returns the next fault queued for op.
func (f *Faults) take(op string) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queued[op]
	if len(q) == 0 {
		return Fault{}, false
	}
	f.queued[op] = q[1:]
	f.injected[op]++
	return q[0], true
}

// Middleware is the fault-injecting handler around next (the server's
// handler: the repair layer and the emulator).
func (f *Faults) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fault, ok := f.take(operationOf(r))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if fault.Applied && !fault.Throttled {
			next.ServeHTTP(httptest.NewRecorder(), r) // the answer is lost
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		if fault.Meanwhile != nil {
			fault.Meanwhile()
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		switch {
		case fault.Throttled:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",`+
				`"message":"The level of configured provisioned throughput for the table was exceeded (dynamotest.Faults)."}`)
		case fault.Reset && reset(w):
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",`+
				`"message":"Internal server error (dynamotest.Faults)"}`)
		}
	})
}

// reset closes the request's connection with a TCP RST (SO_LINGER 0), so
// the client reads "connection reset by peer" instead of an answer. It
// reports false when the connection cannot be taken over (not HTTP/1); the
// caller answers 500 then.
func reset(w http.ResponseWriter) bool {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
	return true
}

// operationOf is the operation a request calls (the X-Amz-Target suffix).
func operationOf(r *http.Request) string {
	target := r.Header.Get("X-Amz-Target")
	return target[strings.LastIndexByte(target, '.')+1:]
}
