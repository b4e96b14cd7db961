package storetest

import (
	"errors"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

// condState is what the key holds before a conditional write.
type condState int

const (
	stateAbsent  condState = iota // nothing under the key
	stateLive                     // the subject item
	stateExpired                  // the subject item, expired
)

func (st condState) String() string {
	return [...]string{"an absent item", "a live item", "an expired item"}[st]
}

// subject is the item the condition cases run against: Version 3 and one
// attribute of each comparable type.
func subject() store.Item {
	it := item("p", "subject", "s", "x", "n", int64(5), "b", true)
	it.Version = 3
	return it
}

// condCase is one row of the condition table: the conditions, the key's
// state and the sentinel the write must fail with (nil: it succeeds).
type condCase struct {
	name  string
	conds []store.Condition
	state condState
	want  error
}

var condCases = []condCase{
	{"NotExists", []store.Condition{store.NotExists()}, stateAbsent, nil},
	{"NotExists", []store.Condition{store.NotExists()}, stateLive, store.ErrExists},
	{"NotExists", []store.Condition{store.NotExists()}, stateExpired, nil},
	{"Exists", []store.Condition{store.Exists()}, stateAbsent, store.ErrConflict},
	{"Exists", []store.Condition{store.Exists()}, stateLive, nil},
	{"Exists", []store.Condition{store.Exists()}, stateExpired, store.ErrConflict},
	{"VersionEquals(3)", []store.Condition{store.VersionEquals(3)}, stateLive, nil},
	{"VersionEquals(4)", []store.Condition{store.VersionEquals(4)}, stateLive, store.ErrConflict},
	{"VersionEquals(3)", []store.Condition{store.VersionEquals(3)}, stateAbsent, store.ErrConflict},
	{"VersionEquals(3)", []store.Condition{store.VersionEquals(3)}, stateExpired, store.ErrConflict},
	{"AttrEquals string", []store.Condition{store.AttrEquals("s", "x")}, stateLive, nil},
	{"AttrEquals other string", []store.Condition{store.AttrEquals("s", "y")}, stateLive, store.ErrConflict},
	{"AttrEquals int64", []store.Condition{store.AttrEquals("n", int64(5))}, stateLive, nil},
	{"AttrEquals other int64", []store.Condition{store.AttrEquals("n", int64(6))}, stateLive, store.ErrConflict},
	{"AttrEquals bool", []store.Condition{store.AttrEquals("b", true)}, stateLive, nil},
	{"AttrEquals other bool", []store.Condition{store.AttrEquals("b", false)}, stateLive, store.ErrConflict},
	{"AttrEquals same digits of another type", []store.Condition{store.AttrEquals("n", "5")}, stateLive, store.ErrConflict},
	{"AttrEquals missing attribute", []store.Condition{store.AttrEquals("zz", "x")}, stateLive, store.ErrConflict},
	{"AttrEquals", []store.Condition{store.AttrEquals("s", "x")}, stateAbsent, store.ErrConflict},
	{"AttrEquals", []store.Condition{store.AttrEquals("s", "x")}, stateExpired, store.ErrConflict},
	{"AttrBelow above the value", []store.Condition{store.AttrBelow("n", 6)}, stateLive, nil},
	{"AttrBelow equal to the value", []store.Condition{store.AttrBelow("n", 5)}, stateLive, store.ErrConflict},
	{"AttrBelow under the value", []store.Condition{store.AttrBelow("n", 4)}, stateLive, store.ErrConflict},
	{"AttrBelow negative bound", []store.Condition{store.AttrBelow("n", -1)}, stateLive, store.ErrConflict},
	{"AttrBelow missing attribute", []store.Condition{store.AttrBelow("zz", 0)}, stateLive, nil},
	{"AttrBelow", []store.Condition{store.AttrBelow("n", 1)}, stateAbsent, nil},
	{"AttrBelow", []store.Condition{store.AttrBelow("n", 1)}, stateExpired, nil},
	{"AttrBelow with Exists", []store.Condition{store.Exists(), store.AttrBelow("n", 6)}, stateAbsent, store.ErrConflict},
	{"Exists, VersionEquals and AttrEquals all holding", []store.Condition{store.Exists(), store.VersionEquals(3), store.AttrEquals("s", "x"), store.AttrEquals("n", int64(5))}, stateLive, nil},
	{"VersionEquals holding and AttrEquals failing", []store.Condition{store.VersionEquals(3), store.AttrEquals("s", "y")}, stateLive, store.ErrConflict},
	{"NotExists failing alone beside a holding VersionEquals", []store.Condition{store.NotExists(), store.VersionEquals(3)}, stateLive, store.ErrExists},
	{"NotExists and VersionEquals both failing", []store.Condition{store.NotExists(), store.VersionEquals(4)}, stateLive, store.ErrConflict},
	{"NotExists holding and Exists failing", []store.Condition{store.NotExists(), store.Exists()}, stateAbsent, store.ErrConflict},
}

// condWrite is one way to write under conditions. do performs the write;
// check verifies its effect after success.
type condWrite struct {
	name  string
	do    func(e *env, conds []store.Condition) error
	check func(e *env, before *store.Item)
}

var condWrites = []condWrite{
	{
		name: "Put",
		do: func(e *env, conds []store.Condition) error {
			return e.s.Put(e.t.Context(), item("p", "subject", "put", true), conds...)
		},
		check: func(e *env, _ *store.Item) { e.wantItem(item("p", "subject", "put", true)) },
	},
	{
		name: "Update",
		do: func(e *env, conds []store.Condition) error {
			_, err := e.s.Update(e.t.Context(), key("p", "subject"), store.Update{Set: map[string]any{"updated": true}}, conds...)
			return err
		},
		check: func(e *env, before *store.Item) {
			want := item("p", "subject", "updated", true)
			if before != nil {
				want = *before
				want.Attrs = map[string]any{"updated": true}
				for k, v := range before.Attrs {
					want.Attrs[k] = v
				}
				want.Version++
			}
			e.wantItem(want)
		},
	},
	{
		name: "Delete",
		do: func(e *env, conds []store.Condition) error {
			return e.s.Delete(e.t.Context(), key("p", "subject"), conds...)
		},
		check: func(e *env, _ *store.Item) { e.wantAbsent(key("p", "subject")) },
	},
	{
		name: "Transact CheckOp",
		do: func(e *env, conds []store.Condition) error {
			return e.s.Transact(e.t.Context(), []store.Op{
				store.CheckOp(key("p", "subject"), conds...),
				store.PutOp(item("p", "witness")),
			})
		},
		check: func(e *env, before *store.Item) {
			e.mustGet(key("p", "witness"))
			if before == nil {
				e.wantAbsent(key("p", "subject"))
			} else {
				e.wantItem(*before)
			}
		},
	},
	{
		name: "Transact PutOp",
		do: func(e *env, conds []store.Condition) error {
			return e.s.Transact(e.t.Context(), []store.Op{
				store.PutOp(item("p", "witness")),
				store.PutOp(item("p", "subject", "put", true), conds...),
			})
		},
		check: func(e *env, _ *store.Item) {
			e.mustGet(key("p", "witness"))
			e.wantItem(item("p", "subject", "put", true))
		},
	},
}

func (s suite) conditionTests() []test {
	var tests []test
	for _, w := range condWrites {
		for _, c := range condCases {
			verdict := "holds"
			if c.want != nil {
				verdict = "is " + map[error]string{store.ErrExists: "ErrExists", store.ErrConflict: "ErrConflict"}[c.want]
			}
			tests = append(tests, test{
				name: w.name + "/" + c.name + " on " + c.state.String() + " " + verdict,
				fn:   func(t *testing.T) { s.runCondCase(t, w, c) },
			})
		}
	}
	return tests
}

func (s suite) runCondCase(t *testing.T, w condWrite, c condCase) {
	e := s.env(t)
	var before *store.Item
	switch c.state {
	case stateLive:
		it := subject()
		e.put(it)
		before = &it
	case stateExpired:
		e.put(expiring(subject(), e.unix()+10))
		e.clk.advance(10e9)
	}

	err := w.do(e, c.conds)
	call := w.name + "(" + c.name + ")"
	if c.want == nil {
		wantErr(t, call, err, nil)
		w.check(e, before)
		return
	}
	wantCondErr(t, call, err, c.want)
	if w.name == "Transact CheckOp" || w.name == "Transact PutOp" {
		var tx *store.TxCanceledError
		if !errors.As(err, &tx) {
			t.Fatalf("%s = %v, want a *store.TxCanceledError", call, err)
		}
		wantIndex := 0
		if w.name == "Transact PutOp" {
			wantIndex = 1
		}
		if tx.Index != wantIndex || tx.Key != key("p", "subject") || !errors.Is(tx.Err, c.want) {
			t.Fatalf("%s = TxCanceledError{Index %d, Key %s, Err %v}, want {%d, p / subject, %v}", call, tx.Index, tx.Key, tx.Err, wantIndex, c.want)
		}
		e.wantAbsent(key("p", "witness"))
	}
	// A failed write leaves the key as it was.
	if before == nil {
		e.wantAbsent(key("p", "subject"))
	} else {
		e.wantItem(*before)
	}
}
