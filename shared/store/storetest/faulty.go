package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// Method names of the port, for Rule.Method and Faulty.Calls.
const (
	MethodGet      = "Get"
	MethodBatchGet = "BatchGet"
	MethodPut      = "Put"
	MethodUpdate   = "Update"
	MethodDelete   = "Delete"
	MethodQuery    = "Query"
	MethodTransact = "Transact"
)

// Rule selects calls of a Faulty store and says what goes wrong with them.
// Without Delay, Block or Err a matching call simply proceeds.
type Rule struct {
	// Method is the method to affect (MethodGet …); "" matches every method.
	Method string
	// Key, when set, keeps only calls addressing a key it accepts: Get, Put,
	// Update and Delete their key; BatchGet and Transact any of their keys;
	// Query store.Key{PK: q.PK} (the index partition for GSI1 queries).
	Key func(store.Key) bool
	// Nth, when positive, limits the rule to the Nth call it matches
	// (1 is the first); zero affects every matching call.
	Nth int
	// Delay holds the call this long first. A context that ends meanwhile
	// fails the call as Block does.
	Delay time.Duration
	// Block holds the call until its context is done and then fails it with
	// store.ErrUnavailable wrapping ctx.Err(): a hung engine meeting a
	// deadline.
	Block bool
	// Err fails the call with an error wrapping Err, without reaching the
	// engine (unless After).
	Err error
	// After runs the call on the engine first and then fails it with Err:
	// a write that landed but whose acknowledgement was lost. An error from
	// the engine itself is returned instead.
	After bool
}

// Prefix returns a Rule.Key predicate accepting keys whose PK begins with pk
// and SK with sk ("" accepts any).
func Prefix(pk, sk string) func(store.Key) bool {
	return func(k store.Key) bool { return strings.HasPrefix(k.PK, pk) && strings.HasPrefix(k.SK, sk) }
}

// Faulty is a store.Store decorating a real engine with injected failures,
// delays and hangs chosen by Rules, and counting calls per method. It is
// how failure paths are tested: a decorator over a real engine, never a mock
// (docs/decisions.md "Pipeline choices"). Safe for concurrent use.
type Faulty struct {
	inner store.Store

	mu    sync.Mutex
	rules []*ruleState
	calls map[string]int
}

type ruleState struct {
	Rule
	matched int
}

var (
	_ store.Store         = (*Faulty)(nil)
	_ store.CommitCounter = (*Faulty)(nil)
)

// NewFaulty returns a Faulty over inner with no rules: every call passes
// through.
func NewFaulty(inner store.Store) *Faulty {
	return &Faulty{inner: inner, calls: map[string]int{}}
}

// Add appends a rule and returns f. For each call, every rule whose Method
// and Key match counts the call; the first of them (in the order added)
// whose Nth is zero or equals its count decides what happens.
func (f *Faulty) Add(r Rule) *Faulty {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &ruleState{Rule: r})
	return f
}

// Reset removes every rule; call counts are kept.
func (f *Faulty) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Calls returns how many calls method has received, failed ones included.
func (f *Faulty) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Unwrap returns the decorated engine.
func (f *Faulty) Unwrap() store.Store { return f.inner }

// Commits passes store.CommitCounter through: the inner engine's count, or
// 0 when it does not count commits.
func (f *Faulty) Commits() uint64 {
	if cc, ok := f.inner.(store.CommitCounter); ok {
		return cc.Commits()
	}
	return 0
}

// match counts the call and returns the rule that decides it, or nil.
func (f *Faulty) match(method string, keys []store.Key) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	var chosen *Rule
	for _, r := range f.rules {
		if r.Method != "" && r.Method != method {
			continue
		}
		if r.Key != nil && !anyKey(keys, r.Key) {
			continue
		}
		r.matched++
		if chosen == nil && (r.Nth <= 0 || r.Nth == r.matched) {
			rule := r.Rule
			chosen = &rule
		}
	}
	return chosen
}

func anyKey(keys []store.Key, ok func(store.Key) bool) bool {
	for _, k := range keys {
		if ok(k) {
			return true
		}
	}
	return false
}

// do runs call under the rule that matches method and keys.
func (f *Faulty) do(ctx context.Context, method string, keys []store.Key, call func() error) error {
	r := f.match(method, keys)
	if r == nil {
		return call()
	}
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("storetest: %s delayed past its deadline: %w: %w", method, store.ErrUnavailable, ctx.Err())
		}
	}
	if r.Block {
		<-ctx.Done()
		return fmt.Errorf("storetest: %s blocked: %w: %w", method, store.ErrUnavailable, ctx.Err())
	}
	if r.Err == nil {
		return call()
	}
	if r.After {
		if err := call(); err != nil {
			return err
		}
		return fmt.Errorf("storetest: %s applied, then injected failure: %w", method, r.Err)
	}
	return fmt.Errorf("storetest: %s injected failure: %w", method, r.Err)
}

// Get implements store.Store.
func (f *Faulty) Get(ctx context.Context, k store.Key) (store.Item, error) {
	var it store.Item
	err := f.do(ctx, MethodGet, []store.Key{k}, func() (err error) {
		it, err = f.inner.Get(ctx, k)
		return err
	})
	if err != nil {
		return store.Item{}, err
	}
	return it, nil
}

// BatchGet implements store.Store.
func (f *Faulty) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	var items []*store.Item
	err := f.do(ctx, MethodBatchGet, keys, func() (err error) {
		items, err = f.inner.BatchGet(ctx, keys)
		return err
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// Put implements store.Store.
func (f *Faulty) Put(ctx context.Context, it store.Item, conds ...store.Condition) error {
	return f.do(ctx, MethodPut, []store.Key{it.Key()}, func() error {
		return f.inner.Put(ctx, it, conds...)
	})
}

// Update implements store.Store.
func (f *Faulty) Update(ctx context.Context, k store.Key, u store.Update, conds ...store.Condition) (store.Item, error) {
	var it store.Item
	err := f.do(ctx, MethodUpdate, []store.Key{k}, func() (err error) {
		it, err = f.inner.Update(ctx, k, u, conds...)
		return err
	})
	if err != nil {
		return store.Item{}, err
	}
	return it, nil
}

// Delete implements store.Store.
func (f *Faulty) Delete(ctx context.Context, k store.Key, conds ...store.Condition) error {
	return f.do(ctx, MethodDelete, []store.Key{k}, func() error {
		return f.inner.Delete(ctx, k, conds...)
	})
}

// Query implements store.Store.
func (f *Faulty) Query(ctx context.Context, q store.Query) (store.Page, error) {
	var p store.Page
	err := f.do(ctx, MethodQuery, []store.Key{{PK: q.PK}}, func() (err error) {
		p, err = f.inner.Query(ctx, q)
		return err
	})
	if err != nil {
		return store.Page{}, err
	}
	return p, nil
}

// Transact implements store.Store.
func (f *Faulty) Transact(ctx context.Context, ops []store.Op) error {
	keys := make([]store.Key, len(ops))
	for i, op := range ops {
		keys[i] = op.OpKey()
	}
	return f.do(ctx, MethodTransact, keys, func() error {
		return f.inner.Transact(ctx, ops)
	})
}
