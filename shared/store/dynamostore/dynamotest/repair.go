package dynamotest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"

	"github.com/truora/minidyn/interpreter/language"
)

// repairs sits in front of minidyn v0.8.2 and corrects the behaviours in
// which it departs from DynamoDB in ways the storage port can see, so that
// the conformance suite tests the engine rather than the emulator. Each
// repair uses only the emulator's own API, and requests are served one at a
// time (minidyn serializes most of them under one lock anyway), so a request
// the layer splits into several emulator calls stays atomic.
//
//   - UpdateItem ignores REMOVE of a top-level attribute, rewrites every
//     number of the item through float64 (int64 extremes come back wrong),
//     and corrupts the emulator's GSI bookkeeping when an update puts an item
//     into an index (the entry of another item is overwritten). So no
//     UpdateItem reaches the emulator: the layer parses the expression with
//     minidyn's own parser, applies it to the stored item (SET, ADD of
//     integers, REMOVE: the grammar the engine writes) and writes the result
//     with a PutItem under the request's condition, which minidyn evaluates;
//     in a transaction the Update becomes that Put.
//   - A PutItem that takes an item out of an index leaves its old index entry
//     behind; a later DeleteItem of the item then misaligns the index and
//     other items vanish from index queries. After such a Put the layer
//     re-puts the item with its old index keys, deletes it (which removes
//     the entry properly) and puts it again.
//   - PutItem and DeleteItem (single or in TransactWriteItems) ignore
//     ReturnValuesOnConditionCheckFailure ALL_OLD: the layer reads the item
//     before the write and adds it to the ConditionalCheckFailedException or
//     the cancellation reason.
//   - A Query whose ExclusiveStartKey names an item that no longer exists
//     returns nothing (minidyn looks for that exact item to start after).
//     The layer puts a placeholder at that key for the duration of the query.
//   - A Query with a Limit and a FilterExpression counts every item of the
//     table it walks toward the Limit, not only those the key condition
//     matches, so a small Limit pages through the whole table. The layer
//     applies the Limit to the key condition's items itself (limit.go).
//   - An empty binary attribute is stored without its type: it comes back
//     as {}, and any condition, filter or update over its item fails. The
//     layer swaps it for a marker value on the way in and back on the way
//     out.
//
// Gaps left alone: keys are joined as PK+"."+SK (PK "a.b"/SK "c" and PK
// "a"/SK "b.c" are one item, and table order is that of the joined string);
// a page token whose item still exists but has moved in the index resumes at
// the item's new place; no TableStatus, no TTL API, no 400 KB limit; ADD of
// decimals; TransactWriteItems ignores its ClientRequestToken, so a resend
// of an applied transaction is evaluated again (and fails its conditions)
// where DynamoDB answers it as a success without writing: the engine does
// not rely on the token (see dynamostore's "Retries"), and tests of the
// resend need no repair. When an internal call is refused (under EmulateFailure, or for a
// missing table), the client gets that refusal, as it would have for its own
// request.
type repairs struct {
	emu     http.Handler
	mu      sync.Mutex
	schemas map[string]*schema
}

func newRepairs(emu http.Handler) *repairs {
	return &repairs{emu: emu, schemas: map[string]*schema{}}
}

// attrs is an item or key in DynamoDB JSON, values kept byte for byte.
type attrs = map[string]json.RawMessage

// schema is what the layer needs to know of a table.
type schema struct {
	name    string
	key     []string   // HASH then RANGE attribute names
	indexes [][]string // each GSI's key attribute names
}

// response is one answer of the emulator.
type response struct {
	status int
	ctype  string
	body   []byte
}

func (r response) ok() bool { return r.status == http.StatusOK }

// errorType is the __type of an error response, without its namespace.
func (r response) errorType() string {
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Type[strings.LastIndexByte(e.Type, '#')+1:]
}

func (h *repairs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body = bytes.ReplaceAll(body, emptyBinary, binaryMarker)
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndexByte(target, '.')+1:]
	h.mu.Lock()
	var resp response
	switch op {
	case "PutItem":
		resp = h.putItem(body)
	case "DeleteItem":
		resp = h.deleteItem(body)
	case "UpdateItem":
		resp = h.updateItem(body)
	case "TransactWriteItems":
		resp = h.transactWriteItems(body)
	case "Query":
		resp = h.query(body)
	case "CreateTable", "DeleteTable", "UpdateTable":
		h.forgetSchemas()
		resp = h.send(op, body)
	default:
		resp = h.send(op, body)
	}
	h.mu.Unlock()
	resp.body = bytes.ReplaceAll(resp.body, binaryMarker, emptyBinary)
	w.Header().Set("Content-Type", resp.ctype)
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

// send passes one request body to the emulator.
func (h *repairs) send(op string, body []byte) response {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	w := httptest.NewRecorder()
	h.emu.ServeHTTP(w, r)
	return response{status: w.Code, ctype: w.Header().Get("Content-Type"), body: w.Body.Bytes()}
}

// call sends in as JSON and decodes a successful answer into out (nil: drop
// it); an unsuccessful answer is an error.
func (h *repairs) call(op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	resp := h.send(op, body)
	if !resp.ok() {
		return &callError{op: op, resp: resp}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp.body, out)
}

// callError is an internal call the emulator refused.
type callError struct {
	op   string
	resp response
}

func (e *callError) Error() string {
	return fmt.Sprintf("dynamotest: internal %s: %d %s", e.op, e.resp.status, e.resp.body)
}

// answer is the response to a request whose repair failed with err: the
// emulator's own refusal of the internal call (an emulated failure, a
// missing table), else a 500.
func answer(err error) response {
	if ce, ok := err.(*callError); ok {
		return ce.resp
	}
	return internalError(err)
}

func (h *repairs) forgetSchemas() {
	for name := range h.schemas {
		delete(h.schemas, name)
	}
}

// schemaOf describes table (cached).
func (h *repairs) schemaOf(table string) (*schema, error) {
	if s, ok := h.schemas[table]; ok {
		return s, nil
	}
	type keyElem struct{ AttributeName, KeyType string }
	var out struct {
		Table struct {
			KeySchema              []keyElem
			GlobalSecondaryIndexes []struct{ KeySchema []keyElem }
		}
	}
	if err := h.call("DescribeTable", map[string]string{"TableName": table}, &out); err != nil {
		return nil, err
	}
	s := &schema{name: table}
	names := func(ks []keyElem) []string {
		var hash, rng []string
		for _, k := range ks {
			if k.KeyType == "HASH" {
				hash = append(hash, k.AttributeName)
			} else {
				rng = append(rng, k.AttributeName)
			}
		}
		return append(hash, rng...)
	}
	s.key = names(out.Table.KeySchema)
	for _, gsi := range out.Table.GlobalSecondaryIndexes {
		s.indexes = append(s.indexes, names(gsi.KeySchema))
	}
	h.schemas[table] = s
	return s, nil
}

// keyOf is the table key of item.
func (s *schema) keyOf(item attrs) attrs {
	k := attrs{}
	for _, n := range s.key {
		if v, ok := item[n]; ok {
			k[n] = v
		}
	}
	return k
}

// get reads the item at key of table, nil when absent.
func (h *repairs) get(table string, key attrs) (attrs, error) {
	var out struct{ Item attrs }
	err := h.call("GetItem", map[string]any{"TableName": table, "Key": key, "ConsistentRead": true}, &out)
	if err != nil || len(out.Item) == 0 {
		return nil, err
	}
	return out.Item, nil
}

func (h *repairs) put(table string, item attrs) error {
	return h.call("PutItem", map[string]any{"TableName": table, "Item": item}, nil)
}

func (h *repairs) del(table string, key attrs) error {
	return h.call("DeleteItem", map[string]any{"TableName": table, "Key": key}, nil)
}

// writeRequest holds the fields of PutItem, DeleteItem, UpdateItem and the
// operations of TransactWriteItems that the layer reads.
type writeRequest struct {
	TableName                           string
	Item                                attrs
	Key                                 attrs
	UpdateExpression                    string
	ConditionExpression                 string
	ExpressionAttributeNames            map[string]string
	ExpressionAttributeValues           attrs
	ReturnValues                        string
	ReturnValuesOnConditionCheckFailure string
}

// prepared is a write the layer has read the item for.
type prepared struct {
	req writeRequest
	s   *schema
	key attrs
	old attrs // the stored item, nil when absent
}

// prepare reads the write request op and the item it addresses. A body
// that is not JSON is left to the emulator to refuse.
func (h *repairs) prepare(op string, body []byte) (*prepared, error) {
	var p prepared
	if err := json.Unmarshal(body, &p.req); err != nil {
		return nil, &callError{op: op, resp: h.send(op, body)}
	}
	return &p, h.load(&p)
}

func (h *repairs) load(p *prepared) error {
	s, err := h.schemaOf(p.req.TableName)
	if err != nil {
		return err
	}
	p.s, p.key = s, p.req.Key
	if p.req.Item != nil {
		p.key = s.keyOf(p.req.Item)
	}
	p.old, err = h.get(p.req.TableName, p.key)
	return err
}

func (h *repairs) putItem(body []byte) response {
	p, err := h.prepare("PutItem", body)
	if err != nil {
		return answer(err)
	}
	return h.afterWrite(p, p.req.Item, h.send("PutItem", body))
}

func (h *repairs) deleteItem(body []byte) response {
	p, err := h.prepare("DeleteItem", body)
	if err != nil {
		return answer(err)
	}
	return h.afterWrite(p, nil, h.send("DeleteItem", body))
}

// afterWrite completes a single write's answer: the old item on a failed
// condition (ALL_OLD), a clean index after success.
func (h *repairs) afterWrite(p *prepared, written attrs, resp response) response {
	switch {
	case resp.ok() && written != nil:
		if err := h.cleanIndexes(p.s, p.old, written); err != nil {
			return internalError(err)
		}
	case resp.errorType() == "ConditionalCheckFailedException" &&
		p.req.ReturnValuesOnConditionCheckFailure == "ALL_OLD" && p.old != nil:
		var e map[string]any
		if json.Unmarshal(resp.body, &e) == nil && e["Item"] == nil {
			e["Item"] = p.old
			resp.body, _ = json.Marshal(e)
		}
	}
	return resp
}

// cleanIndexes removes the index entries a Put of written over old left
// behind (see the type's doc).
func (h *repairs) cleanIndexes(s *schema, old, written attrs) error {
	var stale []string
	for _, idx := range s.indexes {
		if has(old, idx) && !has(written, idx) {
			stale = append(stale, idx...)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	withOld := attrs{}
	for k, v := range written {
		withOld[k] = v
	}
	for _, n := range stale {
		withOld[n] = old[n]
	}
	if err := h.put(s.name, withOld); err != nil {
		return err
	}
	if err := h.del(s.name, s.keyOf(written)); err != nil {
		return err
	}
	return h.put(s.name, written)
}

func has(item attrs, names []string) bool {
	for _, n := range names {
		if _, ok := item[n]; !ok {
			return false
		}
	}
	return item != nil
}

func (h *repairs) updateItem(body []byte) response {
	p, err := h.prepare("UpdateItem", body)
	if err != nil {
		return answer(err)
	}
	written, failed, err := h.applyUpdate(p)
	switch {
	case err != nil:
		return answer(err)
	case failed != nil:
		return *failed
	}
	resp := h.afterWrite(p, written, h.send("PutItem", mustJSON(conditionalPut(p, written))))
	if !resp.ok() {
		return resp
	}
	out := map[string]attrs{}
	switch p.req.ReturnValues {
	case "ALL_NEW":
		out["Attributes"] = written
	case "ALL_OLD":
		if p.old != nil {
			out["Attributes"] = p.old
		}
	case "", "NONE":
	default:
		return internalError(fmt.Errorf("ReturnValues %s is not supported by dynamotest", p.req.ReturnValues))
	}
	resp.body = mustJSON(out)
	return resp
}

// conditionalPut is the PutItem that writes an update's result under the
// update's condition.
func conditionalPut(p *prepared, written attrs) map[string]any {
	put := map[string]any{"TableName": p.req.TableName, "Item": written}
	if c := p.req.ConditionExpression; c != "" {
		put["ConditionExpression"] = c
		names, values := placeholdersIn(c, p.req.ExpressionAttributeNames, p.req.ExpressionAttributeValues)
		if len(names) > 0 {
			put["ExpressionAttributeNames"] = names
		}
		if len(values) > 0 {
			put["ExpressionAttributeValues"] = values
		}
	}
	if rv := p.req.ReturnValuesOnConditionCheckFailure; rv != "" {
		put["ReturnValuesOnConditionCheckFailure"] = rv
	}
	return put
}

// applyUpdate evaluates p's update expression on p.old (or on the bare key
// when absent) as DynamoDB does, for the grammar the engine writes: SET of
// top-level attributes to values, ADD of integers to numbers (an absent
// attribute counts as 0), REMOVE of top-level attributes. A DynamoDB
// refusal (ADD to an attribute that is not a number, a key attribute
// updated) comes back as failed, a ValidationException.
func (h *repairs) applyUpdate(p *prepared) (written attrs, failed *response, err error) {
	written = attrs{}
	for k, v := range p.key {
		written[k] = v
	}
	for k, v := range p.old {
		written[k] = v
	}
	refuse := func(format string, a ...any) (attrs, *response, error) {
		resp := validationError(fmt.Sprintf(format, a...))
		return nil, &resp, nil
	}
	parser := language.NewUpdateParser(language.NewLexer(p.req.UpdateExpression))
	stmt := parser.ParseUpdateExpression()
	ue, ok := stmt.Expression.(*language.UpdateExpression)
	if len(parser.Errors()) > 0 || !ok {
		return refuse("Invalid UpdateExpression: %q: %v", p.req.UpdateExpression, parser.Errors())
	}
	name := func(e language.Expression) (string, bool) {
		id, ok := e.(*language.Identifier)
		if !ok {
			return "", false
		}
		if real, ok := p.req.ExpressionAttributeNames[id.Value]; ok {
			return real, true
		}
		return id.Value, !strings.HasPrefix(id.Value, "#")
	}
	value := func(e language.Expression) (json.RawMessage, bool) {
		id, ok := e.(*language.Identifier)
		if !ok {
			return nil, false
		}
		v, ok := p.req.ExpressionAttributeValues[id.Value]
		return v, ok
	}
	for _, e := range ue.Expressions {
		a, ok := e.(*language.ActionExpression)
		if !ok {
			return refuse("unsupported update action %s", e)
		}
		n, ok := name(a.Left)
		if !ok {
			return refuse("dynamotest supports top-level attribute names only: %s", a.Left)
		}
		if _, isKey := p.key[n]; isKey {
			return refuse("Cannot update attribute %s. This attribute is part of the key", n)
		}
		switch a.Token.Type {
		case language.REMOVE:
			delete(written, n)
		case language.SET:
			v, ok := value(a.Right)
			if !ok {
				return refuse("dynamotest supports SET name = :value only: %s", a)
			}
			written[n] = v
		case language.ADD:
			v, ok := value(a.Right)
			if !ok {
				return refuse("dynamotest supports ADD name :value only: %s", a)
			}
			sum, ok := addIntegers(written[n], v)
			if !ok {
				return refuse("An operand in the update expression has an incorrect data type")
			}
			written[n] = sum
		default:
			return refuse("dynamotest does not support %s", a.Token.Type)
		}
	}
	return written, nil, nil
}

// addIntegers adds two DynamoDB integer numbers exactly (minidyn's own
// arithmetic goes through float64); cur nil counts as 0.
func addIntegers(cur, delta json.RawMessage) (json.RawMessage, bool) {
	parse := func(raw json.RawMessage) (*big.Int, bool) {
		var n struct{ N *string }
		var v map[string]json.RawMessage
		if json.Unmarshal(raw, &v) != nil || len(v) != 1 || json.Unmarshal(raw, &n) != nil || n.N == nil {
			return nil, false
		}
		return new(big.Int).SetString(*n.N, 10)
	}
	d, ok := parse(delta)
	if !ok {
		return nil, false
	}
	sum := new(big.Int)
	if cur != nil {
		c, ok := parse(cur)
		if !ok {
			return nil, false
		}
		sum.Set(c)
	}
	sum.Add(sum, d)
	return mustJSON(map[string]string{"N": sum.String()}), true
}

func validationError(msg string) response {
	body := mustJSON(map[string]string{"__type": "com.amazon.coral.validate#ValidationException", "message": msg})
	return response{status: http.StatusBadRequest, ctype: "application/x-amz-json-1.0", body: body}
}

var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// placeholdersIn returns the names and values expr uses (the emulator, like
// DynamoDB, refuses unused ones).
func placeholdersIn(expr string, names map[string]string, values attrs) (map[string]string, attrs) {
	n, v := map[string]string{}, attrs{}
	for _, p := range placeholder.FindAllString(expr, -1) {
		if x, ok := names[p]; ok {
			n[p] = x
		}
		if x, ok := values[p]; ok {
			v[p] = x
		}
	}
	return n, v
}

func (h *repairs) transactWriteItems(body []byte) response {
	var top map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["TransactItems"], &items) != nil {
		return h.send("TransactWriteItems", body)
	}
	ops := make([]*prepared, len(items))
	written := make([]attrs, len(items))
	rewritten := make([]map[string]any, len(items))
	for i, it := range items {
		for kind, raw := range it {
			p := &prepared{}
			if json.Unmarshal(raw, &p.req) != nil {
				return h.send("TransactWriteItems", body)
			}
			if err := h.load(p); err != nil {
				return answer(err)
			}
			ops[i], rewritten[i] = p, map[string]any{kind: raw}
			switch kind {
			case "Put":
				written[i] = p.req.Item
			case "Update":
				w, failed, err := h.applyUpdate(p)
				switch {
				case err != nil:
					return answer(err)
				case failed != nil:
					return *failed
				}
				written[i] = w
				rewritten[i] = map[string]any{"Put": conditionalPut(p, w)}
			}
		}
	}
	top["TransactItems"] = mustJSON(rewritten)
	resp := h.send("TransactWriteItems", mustJSON(top))
	switch {
	case resp.ok():
		for i, p := range ops {
			if written[i] != nil {
				if err := h.cleanIndexes(p.s, p.old, written[i]); err != nil {
					return internalError(err)
				}
			}
		}
	case resp.errorType() == "TransactionCanceledException":
		var e map[string]any
		if json.Unmarshal(resp.body, &e) != nil {
			return resp
		}
		reasons, _ := e["CancellationReasons"].([]any)
		for i, r := range reasons {
			reason, _ := r.(map[string]any)
			if i < len(ops) && reason != nil && reason["Code"] == "ConditionalCheckFailed" && reason["Item"] == nil &&
				ops[i].req.ReturnValuesOnConditionCheckFailure == "ALL_OLD" && ops[i].old != nil {
				reason["Item"] = ops[i].old
			}
		}
		resp.body = mustJSON(e)
	}
	return resp
}

func (h *repairs) query(body []byte) response {
	var req struct {
		TableName         string
		ExclusiveStartKey attrs
	}
	if json.Unmarshal(body, &req) != nil || len(req.ExclusiveStartKey) == 0 {
		return h.sendQuery(body)
	}
	s, err := h.schemaOf(req.TableName)
	if err != nil {
		return answer(err)
	}
	key := s.keyOf(req.ExclusiveStartKey)
	old, err := h.get(req.TableName, key)
	if err != nil {
		return answer(err)
	}
	if old != nil {
		return h.sendQuery(body)
	}
	if err := h.put(req.TableName, req.ExclusiveStartKey); err != nil {
		return answer(err)
	}
	resp := h.sendQuery(body)
	if err := h.del(req.TableName, key); err != nil {
		return internalError(err)
	}
	return resp
}

// sendQuery passes a Query to the emulator, through limitedQuery when it
// has a Limit and a FilterExpression.
func (h *repairs) sendQuery(body []byte) response {
	if resp, ok := h.limitedQuery(body); ok {
		return resp
	}
	return h.send("Query", body)
}

// minidyn stores an empty binary without its type: it answers {} for it and
// cannot evaluate any expression over an item holding one. Between client
// and emulator, the layer swaps the empty binary for a marker value. Both
// forms are exact byte sequences of DynamoDB JSON that cannot occur inside a
// JSON string (its quotes would be escaped).
var (
	emptyBinary  = []byte(`{"B":""}`)
	binaryMarker = []byte(`{"B":"` + base64.StdEncoding.EncodeToString([]byte("\x00dynamotest:empty-binary\x00")) + `"}`)
)

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("dynamotest: %v", err))
	}
	return b
}

// internalError answers a failure of the layer itself as a 500
// InternalServerError (which the SDK retries).
func internalError(err error) response {
	body := mustJSON(map[string]string{"__type": "InternalServerError", "message": err.Error()})
	return response{status: http.StatusInternalServerError, ctype: "application/x-amz-json-1.0", body: body}
}
