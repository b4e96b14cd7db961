package ondynamo_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// DynamoDB operations by kind: a read or a write round trip.
var (
	readOps  = []string{"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"}
	writeOps = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
)

// ops counts the DynamoDB client's HTTP requests by operation (the suffix of
// X-Amz-Target, "DynamoDB_20120810.GetItem" → "GetItem"). It is the client's
// transport, so it counts what the client sends, SDK retries included.
//
// A request on a rate bucket (a key "RATE#…": the gate's lease of a slice
// of a credential's budget, ratelimit.Leases) is counted apart, in leases:
// it comes once per slice, not once per call (issue 19, item 6), so the
// per-call pins leave it out and TestRoundTripsOfRateLeasesArePinned pins
// it.
type ops struct {
	next http.RoundTripper

	mu     sync.Mutex
	n      map[string]int
	leases map[string]int
}

func (o *ops) RoundTrip(r *http.Request) (*http.Response, error) {
	target := r.Header.Get("X-Amz-Target")
	_, op, found := strings.Cut(target, ".")
	if !found {
		op = "unknown:" + target
	}
	lease := false
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		lease = bytes.Contains(body, []byte(`"RATE#`))
	}
	o.mu.Lock()
	if lease {
		o.leases[op]++
	} else {
		o.n[op]++
	}
	o.mu.Unlock()
	return o.next.RoundTrip(r)
}

// take returns the counts since the last take and starts again from zero,
// the leases' requests left out (takeLeases).
func (o *ops) take() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.n
	o.n = map[string]int{}
	return n
}

// takeLeases returns the rate buckets' requests since the last call.
func (o *ops) takeLeases() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.leases
	o.leases = map[string]int{}
	return n
}

// sum adds the counts of the named operations.
func sum(n map[string]int, names []string) int {
	total := 0
	for _, name := range names {
		total += n[name]
	}
	return total
}

// describe prints counts as "BatchGetItem 1, Query 2", operations sorted.
func describe(n map[string]int, names []string) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(n)) {
		if slices.Contains(names, op) && n[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, n[op]))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// wireFault answers the DynamoDB requests it matches with a DynamoDB error
// before they reach the emulator: what a throttled partition or an ailing
// service sends back. The engine, the SDK's retryer and the error
// translation all run as in production.
type wireFault struct {
	// Op is the operation to fail ("Query", "GetItem", …).
	Op string
	// BodyContains, when set, keeps only requests whose JSON body holds it
	// (a key value such as "DL#" or "MATTER#").
	BodyContains string
	// Status and Type are the HTTP status and the DynamoDB error type, e.g.
	// 400 "ProvisionedThroughputExceededException" or 500 "InternalServerError".
	Status int
	Type   string
	// Body, when set, is the error body sent instead of one naming Type
	// (a TransactionCanceledException with its CancellationReasons).
	Body string
	// Times, when positive, fails only the first Times matching requests.
	Times int
}

// faults is the emulator middleware that applies the current wireFault.
type faults struct {
	mu   sync.Mutex
	rule *wireFault
	hits int
}

// set installs a fault (nil clears it) and resets the hit count.
func (f *faults) set(w *wireFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rule, f.hits = w, 0
}

// hit returns how many requests the current fault has failed.
func (f *faults) hit() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *faults) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		rule := f.rule
		f.mu.Unlock()
		if rule == nil || !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+rule.Op) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if rule.BodyContains != "" && !bytes.Contains(body, []byte(rule.BodyContains)) {
			next.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		spent := rule.Times > 0 && f.hits >= rule.Times
		if !spent {
			f.hits++
		}
		f.mu.Unlock()
		if spent {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(rule.Status)
		if rule.Body != "" {
			fmt.Fprint(w, rule.Body)
			return
		}
		fmt.Fprintf(w, `{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"injected by the test"}`, rule.Type)
	})
}

// dynEnv is a servertest.Env whose store is dynamostore on a fresh minidyn
// table, with the client's requests counted and wire faults at hand.
type dynEnv struct {
	*servertest.Env
	ops    *ops
	faults *faults
	// client is the counted DynamoDB client and table the table, for a
	// second engine value (another instance) on the same data.
	client *dynamodb.Client
	table  string
}

// newDynEnv starts the composed endpoint on the DynamoDB engine: the demo
// firm and the other firm imported, servertest's keys minted, one clock for
// the server and the engine (so expiry and rate windows agree). The counts
// start at zero when it returns.
func newDynEnv(t testing.TB, opts servertest.Options) *dynEnv {
	t.Helper()
	return newDynEnvWrapped(t, opts, nil)
}

// newDynEnvWrapped is newDynEnv with the engine wrapped (a decorator that
// holds chosen calls) before servertest's fault decorator.
func newDynEnvWrapped(t testing.TB, opts servertest.Options, wrap func(store.Store) store.Store) *dynEnv {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = servertest.NewClock(servertest.Epoch)
	}
	f := &faults{}
	emu := dynamotest.NewServer(t, f.middleware)
	counter := &ops{next: http.DefaultTransport.(*http.Transport).Clone(), n: map[string]int{}, leases: map[string]int{}}
	client := emu.Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: counter} })
	table := dynamotest.CreateTable(t, client)
	opts.Store = dynamostore.New(client, table, dynamostore.Options{Now: opts.Clock.Now})
	if wrap != nil {
		opts.Store = wrap(opts.Store)
	}
	env := servertest.New(t, opts)
	counter.take()
	return &dynEnv{Env: env, ops: counter, faults: f, client: client, table: table}
}

// post sends one JSON-RPC body to the /mcp endpoint at url with a key and a
// 2025-11-25 session id.
func post(t *testing.T, url, key, sid, body string) *servertest.Response {
	t.Helper()
	return servertest.DoURL(t, url, http.MethodPost, []byte(body),
		"Authorization: Bearer "+key, "Mcp-Session-Id: "+sid, "MCP-Protocol-Version: "+rev)
}
