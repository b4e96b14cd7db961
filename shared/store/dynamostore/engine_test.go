package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/truora/minidyn/server"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Unix(1_800_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one emulator with one fresh table, the raw client and the engine.
type env struct {
	srv    *dynamotest.Server
	client *dynamodb.Client
	table  string
	clock  *clock
	store  *dynamostore.Store
	// requests counts the HTTP requests by operation (X-Amz-Target suffix).
	requests *counter
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[op]++
}

func (c *counter) get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = map[string]int{}
}

func operation(r *http.Request) string {
	target := r.Header.Get("X-Amz-Target")
	return target[strings.LastIndexByte(target, '.')+1:]
}

// newEnv starts an emulator behind the middleware, creates the table and
// returns the engine with a settable clock and a request counter.
func newEnv(t *testing.T, middleware ...func(http.Handler) http.Handler) *env {
	t.Helper()
	requests := &counter{n: map[string]int{}}
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.add(operation(r))
			next.ServeHTTP(w, r)
		})
	}
	srv := dynamotest.NewServer(t, append([]func(http.Handler) http.Handler{count}, middleware...)...)
	client := srv.Client()
	table := dynamotest.CreateTable(t, client)
	c := newClock()
	requests.reset()
	return &env{srv: srv, client: client, table: table, clock: c, requests: requests,
		store: dynamostore.New(client, table, dynamostore.Options{Now: c.Now})}
}

// raw reads the stored item as DynamoDB has it, expired or not.
func (e *env) raw(t *testing.T, k store.Key) map[string]types.AttributeValue {
	t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &e.table,
		Key:       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: k.PK}, "SK": &types.AttributeValueMemberS{Value: k.SK}},
	})
	if err != nil {
		t.Fatalf("raw GetItem(%s) = %v", k, err)
	}
	return out.Item
}

func (e *env) epoch() int64 { return e.clock.Now().Unix() }

func mustPut(t *testing.T, s store.Store, it store.Item) {
	t.Helper()
	if err := s.Put(context.Background(), it); err != nil {
		t.Fatalf("Put(%s) = %v", it.Key(), err)
	}
}

var equateEmpty = cmpopts.EquateEmpty()

func TestCreateTableMatchesTheDefinition(t *testing.T) {
	srv := dynamotest.NewServer(t)
	client := srv.Client()
	name := dynamotest.CreateTable(t, client)
	out, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		t.Fatalf("DescribeTable = %v", err)
	}
	want := dynamostore.CreateTableInput(name)
	if diff := cmp.Diff(want.KeySchema, out.Table.KeySchema, cmpopts.IgnoreUnexported(types.KeySchemaElement{})); diff != "" {
		t.Errorf("key schema (-want +got):\n%s", diff)
	}
	if got := len(out.Table.GlobalSecondaryIndexes); got != 1 {
		t.Fatalf("%d global secondary indexes, want 1", got)
	}
	gsi := out.Table.GlobalSecondaryIndexes[0]
	if aws.ToString(gsi.IndexName) != store.IndexGSI1 || gsi.Projection.ProjectionType != types.ProjectionTypeAll {
		t.Errorf("index %s projecting %s, want %s projecting ALL", aws.ToString(gsi.IndexName), gsi.Projection.ProjectionType, store.IndexGSI1)
	}
	if diff := cmp.Diff(want.GlobalSecondaryIndexes[0].KeySchema, gsi.KeySchema, cmpopts.IgnoreUnexported(types.KeySchemaElement{})); diff != "" {
		t.Errorf("index key schema (-want +got):\n%s", diff)
	}
	if want.BillingMode != types.BillingModePayPerRequest || !aws.ToBool(want.SSESpecification.Enabled) {
		t.Errorf("CreateTableInput billing %s, SSE %v; want PAY_PER_REQUEST with SSE", want.BillingMode, want.SSESpecification.Enabled)
	}
	if out.Table.TableStatus == "" {
		t.Logf("emulator gap: DescribeTable reports no TableStatus; CreateTable treats a described table as created")
	}
	if err := dynamostore.EnableTTL(context.Background(), client, name); err != nil {
		t.Logf("emulator gap: no TTL API (UpdateTimeToLive: %v); the engine filters expired items itself", err)
	}
	if err := dynamostore.CreateTable(context.Background(), client, name); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateTable(existing) = %v, want ErrExists", err)
	}
}

func TestRoundTripKeepsEveryAttributeType(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := store.Item{PK: "T#1#M#2", SK: "DOC#a.b c", GSI1PK: "M#2", GSI1SK: "2026-01-01", Version: 3,
		ExpiresAt: e.epoch() + 60,
		Attrs: map[string]any{"title": "Ünïcode ✓", "pages": int64(-12), "max": int64(1<<63 - 1),
			"privileged": true, "blob": []byte{0, 1, 2, 255}, "empty": ""}}
	mustPut(t, e.store, in)
	got, err := e.store.Get(ctx, in.Key())
	if err != nil {
		t.Fatalf("Get = %v", err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("Get (-put +got):\n%s", diff)
	}
	raw := e.raw(t, in.Key())
	for name, want := range map[string]string{"version": "3", "expires_at": fmt.Sprint(in.ExpiresAt), "pages": "-12"} {
		if n, ok := raw[name].(*types.AttributeValueMemberN); !ok || n.Value != want {
			t.Errorf("stored %s = %#v, want N %s", name, raw[name], want)
		}
	}
	noExpiry := store.Item{PK: "p", SK: "s", Version: 1}
	mustPut(t, e.store, noExpiry)
	if _, ok := e.raw(t, noExpiry.Key())["expires_at"]; ok {
		t.Errorf("an item without expiry has expires_at stored")
	}
	if _, ok := e.raw(t, noExpiry.Key())["GSI1PK"]; ok {
		t.Errorf("an item without index keys has GSI1PK stored")
	}
}

// DynamoDB deletes expired items lazily, and the emulator never does: every
// read must drop them and every condition must treat them as absent.
func TestExpiredButNotYetDeletedItemsAreAbsent(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*env, store.Item) {
		e := newEnv(t)
		it := store.Item{PK: "SESS#1", SK: "SESS", GSI1PK: "sessions", GSI1SK: "1", Version: 4,
			ExpiresAt: e.epoch() + 10, Attrs: map[string]any{"owner": "alice", "hits": int64(7)}}
		mustPut(t, e.store, it)
		e.clock.Advance(10 * time.Second) // expires_at == now: expired
		if len(e.raw(t, it.Key())) == 0 {
			t.Fatal("the expired item is gone from the emulator; this test needs it stored")
		}
		return e, it
	}
	t.Run("get is ErrNotFound", func(t *testing.T) {
		e, it := setup(t)
		if _, err := e.store.Get(ctx, it.Key()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get = %v, want ErrNotFound", err)
		}
	})
	t.Run("batch get has nil", func(t *testing.T) {
		e, it := setup(t)
		got, err := e.store.BatchGet(ctx, []store.Key{it.Key()})
		if err != nil || len(got) != 1 || got[0] != nil {
			t.Errorf("BatchGet = %v, %v; want [nil]", got, err)
		}
	})
	t.Run("table and index queries skip it", func(t *testing.T) {
		e, it := setup(t)
		for _, q := range []store.Query{{PK: it.PK}, {Index: store.IndexGSI1, PK: it.GSI1PK}} {
			page, err := e.store.Query(ctx, q)
			if err != nil || len(page.Items) != 0 || page.NextToken != "" {
				t.Errorf("Query(%+v) = %+v, %v; want an empty last page", q, page, err)
			}
		}
	})
	t.Run("not-exists holds", func(t *testing.T) {
		e, it := setup(t)
		fresh := store.Item{PK: it.PK, SK: it.SK, Version: 1}
		if err := e.store.Put(ctx, fresh, store.NotExists()); err != nil {
			t.Fatalf("Put(NotExists) over an expired item = %v", err)
		}
		if got, _ := e.store.Get(ctx, it.Key()); !cmp.Equal(got, fresh, equateEmpty) {
			t.Errorf("Get = %+v, want %+v", got, fresh)
		}
	})
	t.Run("exists, version and attribute conditions fail", func(t *testing.T) {
		for _, c := range []store.Condition{store.Exists(), store.VersionEquals(4), store.AttrEquals("owner", "alice")} {
			e, it := setup(t)
			if err := e.store.Put(ctx, store.Item{PK: it.PK, SK: it.SK}, c); !errors.Is(err, store.ErrConflict) {
				t.Errorf("Put(%s) = %v, want ErrConflict", c, err)
			}
			if err := e.store.Delete(ctx, it.Key(), c); !errors.Is(err, store.ErrConflict) {
				t.Errorf("Delete(%s) = %v, want ErrConflict", c, err)
			}
			if _, err := e.store.Update(ctx, it.Key(), store.Update{}, c); !errors.Is(err, store.ErrConflict) {
				t.Errorf("Update(%s) = %v, want ErrConflict", c, err)
			}
			err := e.store.Transact(ctx, []store.Op{store.CheckOp(it.Key(), c)})
			var tx *store.TxCanceledError
			if !errors.As(err, &tx) || tx.Index != 0 || !errors.Is(err, store.ErrConflict) {
				t.Errorf("Transact(check %s) = %v, want TxCanceledError{0, ErrConflict}", c, err)
			}
		}
	})
	t.Run("update starts from an empty item", func(t *testing.T) {
		e, it := setup(t)
		e.requests.reset()
		got, err := e.store.Update(ctx, it.Key(), store.Update{Set: map[string]any{"owner": "bob"}, Add: map[string]int64{"hits": 1}}, store.NotExists())
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		want := store.Item{PK: it.PK, SK: it.SK, Version: 1, Attrs: map[string]any{"owner": "bob", "hits": int64(1)}}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("Update returned (-want +got):\n%s", diff)
		}
		if stored, _ := e.store.Get(ctx, it.Key()); !cmp.Equal(stored, want, equateEmpty) {
			t.Errorf("Get = %+v, want %+v", stored, want)
		}
		if got := e.requests.get("UpdateItem") + e.requests.get("PutItem"); got != 2 {
			t.Errorf("%d writes, want 2 (the guarded update, then the replacing put)", got)
		}
	})
	t.Run("update in a transaction starts from an empty item", func(t *testing.T) {
		e, it := setup(t)
		e.requests.reset()
		other := store.Item{PK: "AUDIT#1", SK: "1", Version: 1}
		err := e.store.Transact(ctx, []store.Op{
			store.PutOp(other, store.NotExists()),
			store.UpdateOp(it.Key(), store.Update{Add: map[string]int64{"hits": 1}}),
		})
		if err != nil {
			t.Fatalf("Transact = %v", err)
		}
		want := store.Item{PK: it.PK, SK: it.SK, Version: 1, Attrs: map[string]any{"hits": int64(1)}}
		if got, _ := e.store.Get(ctx, it.Key()); !cmp.Equal(got, want, equateEmpty) {
			t.Errorf("Get = %+v, want %+v", got, want)
		}
		if _, err := e.store.Get(ctx, other.Key()); err != nil {
			t.Errorf("Get(other op's item) = %v, want it written", err)
		}
		if got := e.requests.get("TransactWriteItems"); got != 2 {
			t.Errorf("%d TransactWriteItems, want 2 (cancelled by the guard, then with the update as a put)", got)
		}
	})
	t.Run("update with a condition that fails on no item", func(t *testing.T) {
		e, it := setup(t)
		_, err := e.store.Update(ctx, it.Key(), store.Update{Add: map[string]int64{"hits": 1}}, store.Exists())
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Update(Exists) = %v, want ErrConflict", err)
		}
		err = e.store.Transact(ctx, []store.Op{store.UpdateOp(it.Key(), store.Update{}, store.VersionEquals(4))})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Transact(update VersionEquals) = %v, want ErrConflict", err)
		}
	})
	t.Run("delete without conditions removes it", func(t *testing.T) {
		e, it := setup(t)
		if err := e.store.Delete(ctx, it.Key()); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		if raw := e.raw(t, it.Key()); len(raw) != 0 {
			t.Errorf("stored after Delete: %v", raw)
		}
	})
}

// AttrEquals on a reserved name is refused before any request: the item
// fields have their own conditions (VersionEquals, Exists).
func TestUpdateSetsAddsRemovesAndCountsVersions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	k := store.Key{PK: "T#1#CRED#c", SK: "TASK#1"}
	exp, idx := e.epoch()+600, "tasks"
	got, err := e.store.Update(ctx, k, store.Update{
		Set: map[string]any{"state": "working", "flag": true}, Add: map[string]int64{"tries": 1},
		ExpiresAt: &exp, GSI1PK: &idx, GSI1SK: &k.SK,
	})
	if err != nil {
		t.Fatalf("Update(absent) = %v", err)
	}
	want := store.Item{PK: k.PK, SK: k.SK, GSI1PK: idx, GSI1SK: k.SK, Version: 1, ExpiresAt: exp,
		Attrs: map[string]any{"state": "working", "flag": true, "tries": int64(1)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Update(absent) (-want +got):\n%s", diff)
	}
	zero, none := int64(0), ""
	got, err = e.store.Update(ctx, k, store.Update{
		Set: map[string]any{"state": "done"}, Add: map[string]int64{"tries": 2, "fresh": -3},
		Remove: []string{"flag", "missing"}, ExpiresAt: &zero, GSI1PK: &none, GSI1SK: &none,
	}, store.VersionEquals(1))
	if err != nil {
		t.Fatalf("Update(VersionEquals(1)) = %v", err)
	}
	want = store.Item{PK: k.PK, SK: k.SK, Version: 2, Attrs: map[string]any{"state": "done", "tries": int64(3), "fresh": int64(-3)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Update (-want +got):\n%s", diff)
	}
	if stored, _ := e.store.Get(ctx, k); !cmp.Equal(stored, want) {
		t.Errorf("Get = %+v, want %+v", stored, want)
	}
	raw := e.raw(t, k)
	for _, name := range []string{"expires_at", "GSI1PK", "GSI1SK", "flag"} {
		if _, ok := raw[name]; ok {
			t.Errorf("%s still stored after its removal", name)
		}
	}
}

func TestBatchGetAlignsWithKeysAndRetriesUnprocessedKeys(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	var keys []store.Key
	for i := range store.MaxBatchGetKeys {
		k := store.Key{PK: fmt.Sprintf("P%03d", i), SK: "S"}
		keys = append(keys, k)
		if i%2 == 0 {
			mustPut(t, e.store, store.Item{PK: k.PK, SK: k.SK, Version: int64(i)})
		}
	}
	// Leave every fifth key unprocessed the first two times it is asked for.
	var mu sync.Mutex
	asked := map[string]int{}
	e.srv.Emulator.EmulateUnprocessedItems(e.table, func(_ int, raw map[string]*server.AttributeValue) bool {
		pk := *raw["PK"].S
		mu.Lock()
		defer mu.Unlock()
		asked[pk]++
		var i int
		fmt.Sscanf(pk, "P%03d", &i)
		return i%5 == 0 && asked[pk] <= 2
	})
	e.requests.reset()
	got, err := e.store.BatchGet(ctx, keys)
	if err != nil {
		t.Fatalf("BatchGet = %v", err)
	}
	if n := e.requests.get("BatchGetItem"); n != 3 {
		t.Errorf("%d BatchGetItem requests, want 3 (two rounds of unprocessed keys)", n)
	}
	for i, k := range keys {
		switch {
		case i%2 == 0 && (got[i] == nil || got[i].Key() != k || got[i].Version != int64(i)):
			t.Errorf("BatchGet[%d] = %+v, want the item at %s", i, got[i], k)
		case i%2 == 1 && got[i] != nil:
			t.Errorf("BatchGet[%d] = %+v, want nil", i, got[i])
		}
	}

	t.Run("always unprocessed is ErrUnavailable", func(t *testing.T) {
		e.srv.Emulator.EmulateUnprocessedItems(e.table, func(n int, _ map[string]*server.AttributeValue) bool { return n == 0 })
		defer e.srv.Emulator.EmulateUnprocessedItems(e.table, nil)
		if _, err := e.store.BatchGet(ctx, keys[:3]); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("BatchGet = %v, want ErrUnavailable", err)
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		if _, err := e.store.BatchGet(ctx, keys[:3]); !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("BatchGet(short deadline) = %v, want ErrUnavailable wrapping the deadline", err)
		}
	})
	t.Run("refused before any request", func(t *testing.T) {
		e.requests.reset()
		for _, ks := range [][]store.Key{
			append(keys[:len(keys):len(keys)], store.Key{PK: "one", SK: "more"}),
			{{PK: "a", SK: "b"}, {PK: "a", SK: "b"}},
			{{PK: "a", SK: ""}},
		} {
			if _, err := e.store.BatchGet(ctx, ks); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("BatchGet(%d keys) = %v, want ErrInvalid", len(ks), err)
			}
		}
		if got, err := e.store.BatchGet(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("BatchGet(nil) = %v, %v; want empty", got, err)
		}
		if n := e.requests.total(); n != 0 {
			t.Errorf("%d requests, want 0", n)
		}
	})
}

// throttler answers requests as DynamoDB does when throttled, without
// passing them on, while its budget lasts (a negative budget never ends).
type throttler struct{ budget atomic.Int64 }

func (th *throttler) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b := th.budget.Load(); b == 0 || (b > 0 && !th.budget.CompareAndSwap(b, b-1)) {
			next.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",`+
			`"message":"The level of configured provisioned throughput for the table was exceeded."}`)
	})
}

func TestThrottlingAndServerErrorsAreRetriedThenUnavailable(t *testing.T) {
	ctx := context.Background()
	k := store.Key{PK: "p", SK: "s"}
	th := &throttler{}
	e := newEnv(t, th.middleware)
	mustPut(t, e.store, store.Item{PK: k.PK, SK: k.SK, Version: 9})

	t.Run("throttled on every attempt", func(t *testing.T) {
		th.budget.Store(-1)
		defer th.budget.Store(0)
		e.requests.reset()
		_, err := e.store.Get(ctx, k)
		var pte *types.ProvisionedThroughputExceededException
		if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &pte) {
			t.Errorf("Get = %v, want ErrUnavailable wrapping ProvisionedThroughputExceededException", err)
		}
		if n := e.requests.get("GetItem"); n != 3 {
			t.Errorf("%d GetItem attempts, want 3 (the SDK's standard retryer)", n)
		}
	})
	t.Run("throttled once", func(t *testing.T) {
		th.budget.Store(1)
		defer th.budget.Store(0)
		e.requests.reset()
		got, err := e.store.Get(ctx, k)
		if err != nil || got.Version != 9 {
			t.Errorf("Get = %+v, %v; want the item after one retry", got, err)
		}
		if n := e.requests.get("GetItem"); n != 2 {
			t.Errorf("%d GetItem attempts, want 2", n)
		}
	})
	t.Run("internal server error", func(t *testing.T) {
		e.srv.Emulator.EmulateFailure(server.FailureConditionInternalServerError)
		defer e.srv.Emulator.EmulateFailure(server.FailureConditionNone)
		for name, call := range map[string]func() error{
			"get":      func() error { _, err := e.store.Get(ctx, k); return err },
			"put":      func() error { return e.store.Put(ctx, store.Item{PK: k.PK, SK: k.SK}) },
			"update":   func() error { _, err := e.store.Update(ctx, k, store.Update{}); return err },
			"delete":   func() error { return e.store.Delete(ctx, k) },
			"query":    func() error { _, err := e.store.Query(ctx, store.Query{PK: k.PK}); return err },
			"batch":    func() error { _, err := e.store.BatchGet(ctx, []store.Key{k}); return err },
			"transact": func() error { return e.store.Transact(ctx, []store.Op{store.DeleteOp(k)}) },
		} {
			e.requests.reset()
			err := call()
			var ise *types.InternalServerError
			if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &ise) {
				t.Errorf("%s = %v, want ErrUnavailable wrapping InternalServerError", name, err)
			}
			if n := e.requests.total(); n != 3 {
				t.Errorf("%s made %d attempts, want 3", name, n)
			}
		}
	})
}

func TestDeadlinesAndDeadServersAreUnavailable(t *testing.T) {
	stop := make(chan struct{})
	e := newEnv(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if operation(r) == "Query" {
				select {
				case <-r.Context().Done():
				case <-stop:
				}
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	t.Cleanup(func() { close(stop) }) // before the server's Close
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.store.Query(ctx, store.Query{PK: "p"}); !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Query(stalled) = %v, want ErrUnavailable wrapping the deadline", err)
	}

	dead := dynamostore.New(dynamotest.NewClient("http://127.0.0.1:1"), "custody", dynamostore.Options{})
	if _, err := dead.Get(context.Background(), store.Key{PK: "p", SK: "s"}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Get(no server) = %v, want ErrUnavailable", err)
	}
	missing := dynamostore.New(e.client, "no-such-table", dynamostore.Options{})
	if _, err := missing.Get(context.Background(), store.Key{PK: "p", SK: "s"}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Get(missing table) = %v, want ErrUnavailable", err)
	}
}

func TestRefusedBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	big := strings.Repeat("x", store.MaxItemBytes)
	k := store.Key{PK: "p", SK: "s"}
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"put over 400 KB", func() error { return e.store.Put(ctx, store.Item{PK: "p", SK: "s", Attrs: map[string]any{"b": big}}) }, store.ErrTooLarge},
		{"update over 400 KB", func() error {
			_, err := e.store.Update(ctx, k, store.Update{Set: map[string]any{"b": big}})
			return err
		}, store.ErrTooLarge},
		{"transact put over 400 KB", func() error {
			return e.store.Transact(ctx, []store.Op{store.PutOp(store.Item{PK: "p", SK: "s", Attrs: map[string]any{"b": big}})})
		}, store.ErrTooLarge},
		{"two operations on one item", func() error {
			return e.store.Transact(ctx, []store.Op{store.PutOp(store.Item{PK: "p", SK: "s"}), store.DeleteOp(k)})
		}, store.ErrInvalid},
		{"26 operations", func() error {
			ops := make([]store.Op, store.MaxTransactItems+1)
			for i := range ops {
				ops[i] = store.DeleteOp(store.Key{PK: "p", SK: fmt.Sprint(i)})
			}
			return e.store.Transact(ctx, ops)
		}, store.ErrInvalid},
		{"reserved attribute", func() error { return e.store.Put(ctx, store.Item{PK: "p", SK: "s", Attrs: map[string]any{"PK": "x"}}) }, store.ErrInvalid},
		{"unsupported type", func() error { return e.store.Put(ctx, store.Item{PK: "p", SK: "s", Attrs: map[string]any{"f": 1.5}}) }, store.ErrInvalid},
		{"NUL in a key", func() error { _, err := e.store.Get(ctx, store.Key{PK: "p\x00", SK: "s"}); return err }, store.ErrInvalid},
		{"empty key", func() error { return e.store.Delete(ctx, store.Key{PK: "p"}) }, store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.requests.reset()
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Errorf("%s = %v, want %v", tt.name, err, tt.want)
			}
			if n := e.requests.total(); n != 0 {
				t.Errorf("%d requests, want 0", n)
			}
		})
	}
}
