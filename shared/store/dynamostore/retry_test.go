package dynamostore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// lostAnswers are the two ways an applied write's answer is lost: DynamoDB's
// 500 (it "may or may not" have applied the request) and a connection that
// breaks after the request was sent. The SDK resends the request after
// either.
var lostAnswers = []struct {
	name  string
	fault dynamotest.Fault
}{
	{"answered 500", dynamotest.Fault{Applied: true}},
	{"connection reset", dynamotest.Fault{Applied: true, Reset: true}},
}

// A write whose first attempt was applied and whose answer was lost is
// resent by the SDK; the resend fails its condition against the item the
// first attempt wrote. The engine must report the write's success (issue 8,
// item 5: an at-most-once claim answered "already carried out", a parked
// question answered INTERNAL, a stream notice deleted and never sent).
func TestAWriteWhoseAnswerWasLostReportsItsSuccess(t *testing.T) {
	ctx := context.Background()
	k := store.Key{PK: "T#1#CLAIM#n", SK: "ROUND#1"}
	v1 := store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{"state": "open", "n": int64(0)}}
	tests := []struct {
		name string
		// op is the request whose answer is lost.
		op string
		// before is stored before the call (nil: nothing).
		before *store.Item
		// call is the write; it returns the item it reports (Update) or a
		// zero item.
		call func(s store.Store) (store.Item, error)
		// want is the item stored afterwards (nil: absent); for an Update
		// it is also the item the call returns.
		want *store.Item
	}{
		{
			name: "Put with NotExists",
			op:   "PutItem",
			call: func(s store.Store) (store.Item, error) { return store.Item{}, s.Put(ctx, v1, store.NotExists()) },
			want: &v1,
		},
		{
			name: "Put with VersionEquals",
			op:   "PutItem", before: &v1,
			call: func(s store.Store) (store.Item, error) {
				return store.Item{}, s.Put(ctx, withVersion(v1, 2, "state", "held"), store.VersionEquals(1))
			},
			want: ptr(withVersion(v1, 2, "state", "held")),
		},
		{
			name: "Put without conditions",
			op:   "PutItem", before: &v1,
			call: func(s store.Store) (store.Item, error) {
				return store.Item{}, s.Put(ctx, withVersion(v1, 7, "state", "x"))
			},
			want: ptr(withVersion(v1, 7, "state", "x")),
		},
		{
			name: "Update with AttrEquals, applied once",
			op:   "UpdateItem", before: &v1,
			call: func(s store.Store) (store.Item, error) {
				return s.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}}, store.AttrEquals("state", "open"))
			},
			want: ptr(withVersion(v1, 2, "n", int64(1))),
		},
		{
			name: "Update with Exists, applied once",
			op:   "UpdateItem", before: &v1,
			call: func(s store.Store) (store.Item, error) {
				return s.Update(ctx, k, store.Update{Set: map[string]any{"state": "held"}, Add: map[string]int64{"n": 5}}, store.Exists())
			},
			want: ptr(withVersion(withVersion(v1, 2, "state", "held"), 2, "n", int64(5))),
		},
		{
			name: "Update with NotExists creating the item",
			op:   "UpdateItem",
			call: func(s store.Store) (store.Item, error) {
				return s.Update(ctx, k, store.Update{Set: map[string]any{"state": "open"}, Add: map[string]int64{"n": 0}}, store.NotExists())
			},
			want: &v1,
		},
		{
			name: "Update without conditions, applied once",
			op:   "UpdateItem", before: &v1,
			call: func(s store.Store) (store.Item, error) {
				return s.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}})
			},
			want: ptr(withVersion(v1, 2, "n", int64(1))),
		},
		{
			name: "Delete with Exists",
			op:   "DeleteItem", before: &v1,
			call: func(s store.Store) (store.Item, error) { return store.Item{}, s.Delete(ctx, k, store.Exists()) },
		},
		{
			name: "Delete with VersionEquals",
			op:   "DeleteItem", before: &v1,
			call: func(s store.Store) (store.Item, error) { return store.Item{}, s.Delete(ctx, k, store.VersionEquals(1)) },
		},
		{
			name: "Delete with AttrEquals",
			op:   "DeleteItem", before: &v1,
			call: func(s store.Store) (store.Item, error) {
				return store.Item{}, s.Delete(ctx, k, store.AttrEquals("state", "open"))
			},
		},
	}
	for _, tt := range tests {
		for _, lost := range lostAnswers {
			t.Run(tt.name+", "+lost.name+", is nil", func(t *testing.T) {
				faults := &dynamotest.Faults{}
				e := newEnv(t, faults.Middleware)
				if tt.before != nil {
					mustPut(t, e.store, *tt.before)
				}
				e.requests.reset()
				faults.Next(tt.op, lost.fault)
				got, err := tt.call(e.store)
				if err != nil {
					t.Fatalf("%s = %v, want nil (its first attempt was applied)", tt.name, err)
				}
				if n := faults.Injected(tt.op); n != 1 {
					t.Fatalf("%d answers lost, want 1", n)
				}
				if n := e.requests.get(tt.op); n != 2 {
					t.Errorf("%d %s requests, want 2 (the attempt and the SDK's resend)", n, tt.op)
				}
				if tt.op == "UpdateItem" {
					if d := cmp.Diff(*tt.want, got, equateEmpty); d != "" {
						t.Errorf("Update returned (-want +got):\n%s", d)
					}
				}
				wantStored(t, e, k, tt.want)
			})
		}
	}
}

// An Update of an expired item replaces it with a PutItem (see the package
// doc); that PutItem's answer can be lost too.
func TestUpdateOfAnExpiredItemWhoseReplacementAnswerWasLostAppliesOnce(t *testing.T) {
	ctx := context.Background()
	for _, lost := range lostAnswers {
		t.Run(lost.name, func(t *testing.T) {
			faults := &dynamotest.Faults{}
			e := newEnv(t, faults.Middleware)
			k := store.Key{PK: "SESS#1", SK: "SESS"}
			mustPut(t, e.store, store.Item{PK: k.PK, SK: k.SK, Version: 4, ExpiresAt: e.epoch() + 1, Attrs: map[string]any{"n": int64(9)}})
			e.clock.Advance(time.Second)
			e.requests.reset()
			faults.Next("PutItem", lost.fault)
			got, err := e.store.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}})
			if err != nil {
				t.Fatalf("Update = %v, want nil", err)
			}
			want := store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{"n": int64(1)}}
			if d := cmp.Diff(want, got, equateEmpty); d != "" {
				t.Errorf("Update returned (-want +got):\n%s", d)
			}
			wantStored(t, e, k, &want)
			if n := faults.Injected("PutItem"); n != 1 {
				t.Errorf("%d answers lost, want 1", n)
			}
			if n := e.requests.get("UpdateItem"); n != 1 {
				t.Errorf("%d UpdateItem requests, want 1 (the replacement is recognised, not started over)", n)
			}
		})
	}
}

// A transaction's ClientRequestToken makes DynamoDB answer the resend of an
// applied transaction with success; the emulator ignores the token and
// evaluates the resend again, which fails its conditions. The engine
// recognises its own applied transaction by the write token of its items,
// so the test does not depend on the server honouring ClientRequestToken.
func TestATransactionWhoseAnswerWasLostReportsItsSuccess(t *testing.T) {
	ctx := context.Background()
	claim := store.Item{PK: "MRTR#n", SK: "ROUND#1", Version: 1}
	audit := store.Item{PK: "AUDIT#1", SK: "0001", Version: 1, Attrs: map[string]any{"tool": "x"}}
	counter := store.Key{PK: "T#1#RATE#c", SK: "RATE"}
	for _, lost := range lostAnswers {
		t.Run("puts and an update, "+lost.name+", is nil and applied once", func(t *testing.T) {
			faults := &dynamotest.Faults{}
			tokens := &requestTokens{}
			e := newEnv(t, tokens.middleware, faults.Middleware)
			mustPut(t, e.store, store.Item{PK: counter.PK, SK: counter.SK, Version: 1, Attrs: map[string]any{"n": int64(0)}})
			e.requests.reset()
			faults.Next("TransactWriteItems", lost.fault)
			err := e.store.Transact(ctx, []store.Op{
				store.PutOp(claim, store.NotExists()),
				store.PutOp(audit),
				store.UpdateOp(counter, store.Update{Add: map[string]int64{"n": 1}}, store.VersionEquals(1)),
			})
			if err != nil {
				t.Fatalf("Transact = %v, want nil (its first attempt was applied)", err)
			}
			if n := e.requests.get("TransactWriteItems"); n != 2 {
				t.Errorf("%d TransactWriteItems requests, want 2 (the attempt and the SDK's resend)", n)
			}
			// What lets DynamoDB itself answer the resend: the SDK fills
			// ClientRequestToken once per call, so both attempts carry it.
			if got := tokens.get(); len(got) != 2 || got[0] == "" || got[0] != got[1] {
				t.Errorf("ClientRequestTokens of the attempts = %q, want one token twice", got)
			}
			wantStored(t, e, claim.Key(), &claim)
			wantStored(t, e, audit.Key(), &audit)
			wantStored(t, e, counter, &store.Item{PK: counter.PK, SK: counter.SK, Version: 2, Attrs: map[string]any{"n": int64(1)}})
		})
	}
	t.Run("deletes and checks alone rely on ClientRequestToken: the emulator's resend is a cancellation", func(t *testing.T) {
		// Nothing of such a transaction carries a write token; DynamoDB
		// answers its resend from the ClientRequestToken, the emulator does
		// not (the documented limit).
		faults := &dynamotest.Faults{}
		e := newEnv(t, faults.Middleware)
		mustPut(t, e.store, claim)
		mustPut(t, e.store, audit)
		faults.Next("TransactWriteItems", lostAnswers[0].fault)
		err := e.store.Transact(ctx, []store.Op{store.DeleteOp(claim.Key(), store.Exists()), store.CheckOp(audit.Key(), store.Exists())})
		var tx *store.TxCanceledError
		if !errors.As(err, &tx) || tx.Index != 0 || !errors.Is(err, store.ErrConflict) {
			t.Errorf("Transact = %v, want TxCanceledError{0, ErrConflict} from the emulator", err)
		}
		wantStored(t, e, claim.Key(), nil)
	})
}

// A write that meets another writer's item still fails, also when the SDK
// resent it: only this call's own write is taken for success.
func TestAnotherWritersItemIsStillAFailedConditionAfterARetry(t *testing.T) {
	ctx := context.Background()
	k := store.Key{PK: "p", SK: "s"}
	v1 := store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{"state": "open"}}
	other := withVersion(v1, 2, "state", "theirs")
	tests := []struct {
		name   string
		op     string
		before *store.Item
		// between is another writer's step between the lost attempt (not
		// applied) and the resend.
		between func(s store.Store) error
		call    func(s store.Store) error
		want    error
		// stored is the item afterwards: the other writer's.
		stored *store.Item
	}{
		{
			name:    "Put with NotExists is ErrExists",
			op:      "PutItem",
			between: func(s store.Store) error { return s.Put(ctx, other, store.NotExists()) },
			call:    func(s store.Store) error { return s.Put(ctx, v1, store.NotExists()) },
			want:    store.ErrExists, stored: &other,
		},
		{
			name: "Put with VersionEquals is ErrConflict",
			op:   "PutItem", before: &v1,
			between: func(s store.Store) error { return s.Put(ctx, other, store.VersionEquals(1)) },
			call: func(s store.Store) error {
				return s.Put(ctx, withVersion(v1, 2, "state", "mine"), store.VersionEquals(1))
			},
			want: store.ErrConflict, stored: &other,
		},
		{
			name: "Update with AttrEquals is ErrConflict",
			op:   "UpdateItem", before: &v1,
			between: func(s store.Store) error { return s.Put(ctx, other) },
			call: func(s store.Store) error {
				_, err := s.Update(ctx, k, store.Update{Set: map[string]any{"state": "mine"}}, store.AttrEquals("state", "open"))
				return err
			},
			want: store.ErrConflict, stored: &other,
		},
		{
			name: "Delete with VersionEquals is ErrConflict",
			op:   "DeleteItem", before: &v1,
			between: func(s store.Store) error { return s.Put(ctx, other) },
			call:    func(s store.Store) error { return s.Delete(ctx, k, store.VersionEquals(1)) },
			want:    store.ErrConflict, stored: &other,
		},
		{
			name:    "Transact with NotExists is ErrExists",
			op:      "TransactWriteItems",
			between: func(s store.Store) error { return s.Put(ctx, other) },
			call: func(s store.Store) error {
				return s.Transact(ctx, []store.Op{store.PutOp(v1, store.NotExists()), store.PutOp(store.Item{PK: "q", SK: "s", Version: 1})})
			},
			want: store.ErrExists, stored: &other,
		},
	}
	for _, tt := range tests {
		for _, reset := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s (connection reset %v)", tt.name, reset), func(t *testing.T) {
				faults := &dynamotest.Faults{}
				e := newEnv(t, faults.Middleware)
				if tt.before != nil {
					mustPut(t, e.store, *tt.before)
				}
				// A reset gives no happens-before edge back to the client:
				// the hook reports through a channel.
				between := make(chan error, 1)
				faults.Next(tt.op, dynamotest.Fault{Reset: reset, Meanwhile: func() { between <- tt.between(e.store) }})
				err := tt.call(e.store)
				if err := <-between; err != nil {
					t.Fatalf("the other writer's step = %v", err)
				}
				if n := faults.Injected(tt.op); n != 1 {
					t.Fatalf("%d answers lost, want 1", n)
				}
				if !errors.Is(err, tt.want) {
					t.Errorf("%s = %v, want %v", tt.name, err, tt.want)
				}
				wantStored(t, e, k, tt.stored)
			})
		}
	}
}

// The limit of the conditional Delete's rule, pinned as documented: after a
// lost answer, a resend that finds no item reports success, whoever removed
// it; a throttled attempt is known not to have been applied and does not
// count.
func TestAConditionalDeleteResentAfterALostAnswerTakesAnAbsentItemAsItsOwn(t *testing.T) {
	ctx := context.Background()
	k := store.Key{PK: "p", SK: "s"}
	tests := []struct {
		name  string
		fault dynamotest.Fault
		want  error
	}{
		{"after a 500 it is nil", dynamotest.Fault{}, nil},
		{"after a connection reset it is nil", dynamotest.Fault{Reset: true}, nil},
		{"after throttling it is ErrConflict", dynamotest.Fault{Throttled: true}, store.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faults := &dynamotest.Faults{}
			e := newEnv(t, faults.Middleware)
			mustPut(t, e.store, store.Item{PK: k.PK, SK: k.SK, Version: 1})
			between := make(chan error, 1)
			tt.fault.Meanwhile = func() { between <- e.store.Delete(ctx, k) }
			faults.Next("DeleteItem", tt.fault)
			err := e.store.Delete(ctx, k, store.Exists())
			if err := <-between; err != nil {
				t.Fatalf("the other writer's Delete = %v", err)
			}
			if n := e.requests.get("DeleteItem"); n != 3 {
				t.Fatalf("%d DeleteItem requests, want 3 (the attempt, the other writer's, the resend)", n)
			}
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Delete(Exists) = %v, want %v", err, tt.want)
			}
		})
	}
}

// A write whose answer arrives costs one request, as before the write token:
// the token rides in the write itself.
func TestWritesWithoutFaultsCostOneRequest(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	k := store.Key{PK: "p", SK: "s"}
	calls := []struct {
		name string
		op   string
		call func() error
	}{
		{"Put", "PutItem", func() error { return e.store.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1}, store.NotExists()) }},
		{"Update", "UpdateItem", func() error {
			_, err := e.store.Update(ctx, k, store.Update{Add: map[string]int64{"n": 1}}, store.Exists())
			return err
		}},
		{"Delete", "DeleteItem", func() error { return e.store.Delete(ctx, k, store.Exists()) }},
		{"Transact", "TransactWriteItems", func() error {
			return e.store.Transact(ctx, []store.Op{store.PutOp(store.Item{PK: "a", SK: "1"}, store.NotExists()), store.DeleteOp(k)})
		}},
	}
	for _, c := range calls {
		e.requests.reset()
		if err := c.call(); err != nil {
			t.Fatalf("%s = %v", c.name, err)
		}
		if n, total := e.requests.get(c.op), e.requests.total(); n != 1 || total != 1 {
			t.Errorf("%s made %d %s of %d requests, want 1 of 1", c.name, n, c.op, total)
		}
	}
}

// The write token is stored with the item, as a string attribute, and no
// read shows it.
func TestTheWriteTokenIsStoredAndHidden(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	it := store.Item{PK: "p", SK: "s", GSI1PK: "g", GSI1SK: "1", Version: 1, Attrs: map[string]any{"a": "x"}}
	mustPut(t, e.store, it)
	first := rawToken(t, e, it.Key())
	if len(first) != store.WriteTokenLen {
		t.Errorf("stored write token %q has %d characters, want store.WriteTokenLen (%d)", first, len(first), store.WriteTokenLen)
	}
	got, err := e.store.Update(ctx, it.Key(), store.Update{Set: map[string]any{"a": "y"}})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	if _, ok := got.Attrs[store.WriteTokenAttr]; ok {
		t.Errorf("Update returned the write token in Attrs: %v", got.Attrs)
	}
	if second := rawToken(t, e, it.Key()); second == first || len(second) != store.WriteTokenLen {
		t.Errorf("write token after Update = %q (before %q), want a new token of %d characters", second, first, store.WriteTokenLen)
	}
	want := withVersion(it, 2, "a", "y")
	reads := map[string]func() (store.Item, error){
		"Get": func() (store.Item, error) { return e.store.Get(ctx, it.Key()) },
		"BatchGet": func() (store.Item, error) {
			out, err := e.store.BatchGet(ctx, []store.Key{it.Key()})
			if err != nil || out[0] == nil {
				return store.Item{}, fmt.Errorf("BatchGet = %v, %v", out, err)
			}
			return *out[0], nil
		},
		"Query": func() (store.Item, error) { return onlyItem(e.store.Query(ctx, store.Query{PK: "p"})) },
		"Query GSI1": func() (store.Item, error) {
			return onlyItem(e.store.Query(ctx, store.Query{Index: store.IndexGSI1, PK: "g"}))
		},
	}
	for name, read := range reads {
		got, err := read()
		if err != nil {
			t.Fatalf("%s = %v", name, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

// requestTokens records the ClientRequestToken of every TransactWriteItems
// request.
type requestTokens struct {
	mu     sync.Mutex
	tokens []string
}

func (rt *requestTokens) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if operation(r) == "TransactWriteItems" {
			body, _ := io.ReadAll(r.Body)
			var in struct{ ClientRequestToken string }
			_ = json.Unmarshal(body, &in)
			rt.mu.Lock()
			rt.tokens = append(rt.tokens, in.ClientRequestToken)
			rt.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func (rt *requestTokens) get() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]string(nil), rt.tokens...)
}

// rawToken is the write token stored with the item at k.
func rawToken(t *testing.T, e *env, k store.Key) string {
	t.Helper()
	raw := e.raw(t, k)
	tok, ok := raw[store.WriteTokenAttr].(*types.AttributeValueMemberS)
	if !ok {
		t.Fatalf("stored item %v has no string %s", raw, store.WriteTokenAttr)
	}
	return tok.Value
}

func onlyItem(p store.Page, err error) (store.Item, error) {
	if err != nil || len(p.Items) != 1 {
		return store.Item{}, fmt.Errorf("page of %d items, %v; want one", len(p.Items), err)
	}
	return p.Items[0], nil
}

// withVersion returns a copy of it at version v with attribute name set to
// value.
func withVersion(it store.Item, v int64, name string, value any) store.Item {
	out := it
	out.Version = v
	out.Attrs = map[string]any{}
	for n, x := range it.Attrs {
		out.Attrs[n] = x
	}
	out.Attrs[name] = value
	return out
}

// wantStored checks the live item at k: want, or absent when want is nil.
func wantStored(t *testing.T, e *env, k store.Key, want *store.Item) {
	t.Helper()
	got, err := e.store.Get(context.Background(), k)
	switch {
	case want == nil && !errors.Is(err, store.ErrNotFound):
		t.Errorf("Get(%s) = %+v, %v; want ErrNotFound", k, got, err)
	case want == nil:
	case err != nil:
		t.Errorf("Get(%s) = %v, want %+v", k, err, *want)
	default:
		if d := cmp.Diff(*want, got, equateEmpty); d != "" {
			t.Errorf("Get(%s) (-want +got):\n%s", k, d)
		}
	}
}

func ptr[T any](v T) *T { return &v }
