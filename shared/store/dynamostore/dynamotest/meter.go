package dynamotest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// Meter measures what a DynamoDB client's requests would cost on a table in
// on-demand capacity mode: for every request, its operation and the read
// and write request units it consumes, computed from the sizes of the items
// it reads and writes by DynamoDB's rules (Developer Guide, "DynamoDB
// item sizes and formats" and "DynamoDB read and write operations"):
//
//   - An item's size is the sum, over its attributes, of the name's UTF-8
//     bytes and the value's size (ItemSize).
//   - A strongly consistent read of an item is one read unit per 4 KB,
//     rounded up, at least one (also for an item that is not there); an
//     eventually consistent read half that; a transactional read twice it.
//     BatchGetItem rounds each item; a Query the sum of the items it returns.
//   - A write is one write unit per 1 KB of the larger of the item before
//     and after, rounded up, at least one; a transactional write (each Put,
//     Update, Delete and ConditionCheck of TransactWriteItems) twice it.
//   - A write that puts, changes or removes an item in a global secondary
//     index (ProjectionType ALL: the whole item) also writes the index: one
//     write for a new or removed index entry, two when its index key
//     changes (a delete and a put), one when it stays; each rounded up per
//     1 KB at the standard (not transactional) rate.
//
// It reads the items' before and after images with a second, unmetered
// client of the same endpoint (so it changes nothing the engine sees but
// time), which makes it a measuring aid for tests and benchmarks, never a
// production part. Known simplifications, each of which can only make the
// figure lower than DynamoDB's: a Query's items removed by its filter
// (dynamostore filters expired rows only) are not seen; SDK retries are
// one request here. A request that fails is measured as if it succeeded,
// as DynamoDB charges a failed condition.
//
// The zero value is not usable; NewMeter builds one. It is safe for
// concurrent use, but the before and after images of concurrent writes to
// one item may mix: measure one call at a time.
type Meter struct {
	images *dynamodb.Client
	on     atomic.Bool

	mu   sync.Mutex
	reqs []MeteredRequest
}

// MeteredRequest is one request a metered client sent.
type MeteredRequest struct {
	// Op is the DynamoDB operation ("GetItem", "TransactWriteItems", …).
	Op string `json:"op"`
	// ReadUnits and WriteUnits are the request units it consumes, index
	// writes included.
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
	// Items are the items it read or wrote, each with its units.
	Items []ItemUnits `json:"items"`
}

// ItemUnits is what one item of a request consumed.
type ItemUnits struct {
	// Action is "read", "query", "put", "update", "delete", "condition
	// check", or "index write".
	Action string `json:"action"`
	// Key names the item: its PK and SK joined with a space (a query's
	// items: its partition).
	Key string `json:"key"`
	// Bytes is the size the units were computed from.
	Bytes      int     `json:"bytes"`
	ReadUnits  float64 `json:"readUnits,omitempty"`
	WriteUnits float64 `json:"writeUnits,omitempty"`
}

// NewMeter returns a meter that reads item images through images: a client
// of the same endpoint without the meter's option. It starts switched on.
func NewMeter(images *dynamodb.Client) *Meter {
	m := &Meter{images: images}
	m.on.Store(true)
	return m
}

// Option adds the meter to a client's middleware stack (dynamodb.NewFromConfig
// or dynamodb.New options).
func (m *Meter) Option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("custody/dynamotest.Meter",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if !m.on.Load() {
						return next.HandleInitialize(ctx, in)
					}
					op := middleware.GetOperationName(ctx)
					pending := m.before(ctx, in.Parameters)
					out, md, err := next.HandleInitialize(ctx, in)
					m.record(ctx, op, in.Parameters, out.Result, pending)
					return out, md, err
				}), middleware.After)
		})
	}
}

// SetOn switches the meter on or off; off, requests pass unmeasured (and
// without the image reads), for timing.
func (m *Meter) SetOn(on bool) { m.on.Store(on) }

// Take returns the requests measured since the last Take, in order, and
// starts again from none.
func (m *Meter) Take() []MeteredRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.reqs
	m.reqs = nil
	return r
}

// writeOf is one item a write request touches, with its image before.
type writeOf struct {
	action        string
	table         string
	key           map[string]types.AttributeValue
	put           map[string]types.AttributeValue // the item a Put writes
	transactional bool
	before        map[string]types.AttributeValue
}

// before lists the items a write request touches and reads their images.
func (m *Meter) before(ctx context.Context, params any) []*writeOf {
	var ws []*writeOf
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		ws = append(ws, &writeOf{action: "put", table: aws.ToString(in.TableName), key: keyOf(in.Item), put: in.Item})
	case *dynamodb.UpdateItemInput:
		ws = append(ws, &writeOf{action: "update", table: aws.ToString(in.TableName), key: in.Key})
	case *dynamodb.DeleteItemInput:
		ws = append(ws, &writeOf{action: "delete", table: aws.ToString(in.TableName), key: in.Key})
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				ws = append(ws, &writeOf{action: "put", table: aws.ToString(it.Put.TableName), key: keyOf(it.Put.Item), put: it.Put.Item, transactional: true})
			case it.Update != nil:
				ws = append(ws, &writeOf{action: "update", table: aws.ToString(it.Update.TableName), key: it.Update.Key, transactional: true})
			case it.Delete != nil:
				ws = append(ws, &writeOf{action: "delete", table: aws.ToString(it.Delete.TableName), key: it.Delete.Key, transactional: true})
			case it.ConditionCheck != nil:
				ws = append(ws, &writeOf{action: "condition check", table: aws.ToString(it.ConditionCheck.TableName), key: it.ConditionCheck.Key, transactional: true})
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for table, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					ws = append(ws, &writeOf{action: "put", table: table, key: keyOf(r.PutRequest.Item), put: r.PutRequest.Item})
				case r.DeleteRequest != nil:
					ws = append(ws, &writeOf{action: "delete", table: table, key: r.DeleteRequest.Key})
				}
			}
		}
	}
	for _, w := range ws {
		w.before = m.image(ctx, w.table, w.key)
	}
	return ws
}

// image reads an item's current image (nil: absent) with the unmetered
// client, strongly consistent.
func (m *Meter) image(ctx context.Context, table string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, err := m.images.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil
	}
	return out.Item
}

// record computes a finished request's units and keeps them.
func (m *Meter) record(ctx context.Context, op string, params, result any, writes []*writeOf) {
	r := MeteredRequest{Op: op}
	read := func(action, key string, size int, units float64) {
		r.Items = append(r.Items, ItemUnits{Action: action, Key: key, Bytes: size, ReadUnits: units})
		r.ReadUnits += units
	}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		var item map[string]types.AttributeValue
		if out, ok := result.(*dynamodb.GetItemOutput); ok {
			item = out.Item
		}
		size := ItemSize(item)
		read("read", keyLabel(in.Key), size, ReadUnits(size, aws.ToBool(in.ConsistentRead)))
	case *dynamodb.BatchGetItemInput:
		out, _ := result.(*dynamodb.BatchGetItemOutput)
		for table, ka := range in.RequestItems {
			found := map[string]map[string]types.AttributeValue{}
			if out != nil {
				for _, it := range out.Responses[table] {
					found[keyLabel(keyOf(it))] = it
				}
			}
			unprocessed := map[string]bool{}
			if out != nil {
				if u, ok := out.UnprocessedKeys[table]; ok {
					for _, k := range u.Keys {
						unprocessed[keyLabel(k)] = true
					}
				}
			}
			for _, k := range ka.Keys {
				label := keyLabel(k)
				if unprocessed[label] {
					continue // not read: the client asks again
				}
				size := ItemSize(found[label])
				read("read", label, size, ReadUnits(size, aws.ToBool(ka.ConsistentRead)))
			}
		}
	case *dynamodb.TransactGetItemsInput:
		out, _ := result.(*dynamodb.TransactGetItemsOutput)
		for i, it := range in.TransactItems {
			if it.Get == nil {
				continue
			}
			var item map[string]types.AttributeValue
			if out != nil && i < len(out.Responses) {
				item = out.Responses[i].Item
			}
			size := ItemSize(item)
			read("read", keyLabel(it.Get.Key), size, 2*ReadUnits(size, true))
		}
	case *dynamodb.QueryInput:
		size := 0
		if out, ok := result.(*dynamodb.QueryOutput); ok {
			for _, it := range out.Items {
				size += ItemSize(it)
			}
		}
		// A secondary index is always read eventually consistently.
		consistent := aws.ToBool(in.ConsistentRead) && in.IndexName == nil
		label := "query " + aws.ToString(in.IndexName)
		read("query", strings.TrimSpace(label), size, ReadUnits(size, consistent))
	}
	for _, w := range writes {
		after := w.put
		if w.action != "condition check" {
			after = m.image(ctx, w.table, w.key)
			if after == nil && w.action == "put" {
				after = w.put // a failed condition: DynamoDB charges the item asked for
			}
		}
		size := max(ItemSize(w.before), ItemSize(after))
		units := WriteUnits(size)
		if w.transactional {
			units *= 2
		}
		r.Items = append(r.Items, ItemUnits{Action: w.action, Key: keyLabel(w.key), Bytes: size, WriteUnits: units})
		r.WriteUnits += units
		if w.action == "condition check" {
			continue
		}
		for _, iw := range indexWrites(w.before, after) {
			r.Items = append(r.Items, ItemUnits{Action: "index write", Key: keyLabel(w.key), Bytes: iw, WriteUnits: WriteUnits(iw)})
			r.WriteUnits += WriteUnits(iw)
		}
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, r)
	m.mu.Unlock()
}

// indexWrites are the sizes of the index writes a change from before to
// after makes in each global secondary index of the table (dynamostore's
// CreateTableInput), projected ALL.
func indexWrites(before, after map[string]types.AttributeValue) []int {
	var sizes []int
	for _, g := range dynamostore.CreateTableInput("x").GlobalSecondaryIndexes {
		var names []string
		for _, k := range g.KeySchema {
			names = append(names, aws.ToString(k.AttributeName))
		}
		inBefore, inAfter := hasAll(before, names), hasAll(after, names)
		switch {
		case inBefore && inAfter && keyLabelOf(before, names) != keyLabelOf(after, names):
			sizes = append(sizes, ItemSize(before), ItemSize(after))
		case inBefore && inAfter:
			sizes = append(sizes, max(ItemSize(before), ItemSize(after)))
		case inBefore:
			sizes = append(sizes, ItemSize(before))
		case inAfter:
			sizes = append(sizes, ItemSize(after))
		}
	}
	return sizes
}

func hasAll(item map[string]types.AttributeValue, names []string) bool {
	if item == nil {
		return false
	}
	for _, n := range names {
		if _, ok := item[n]; !ok {
			return false
		}
	}
	return true
}

// keyOf is an item's primary key (the table's key schema).
func keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	key := map[string]types.AttributeValue{}
	for _, k := range dynamostore.CreateTableInput("x").KeySchema {
		name := aws.ToString(k.AttributeName)
		if v, ok := item[name]; ok {
			key[name] = v
		}
	}
	return key
}

// keyLabel prints a primary key as "PK SK".
func keyLabel(key map[string]types.AttributeValue) string {
	var names []string
	for _, k := range dynamostore.CreateTableInput("x").KeySchema {
		names = append(names, aws.ToString(k.AttributeName))
	}
	return keyLabelOf(key, names)
}

func keyLabelOf(item map[string]types.AttributeValue, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		switch v := item[n].(type) {
		case *types.AttributeValueMemberS:
			parts[i] = v.Value
		case *types.AttributeValueMemberN:
			parts[i] = v.Value
		case nil:
		default:
			parts[i] = fmt.Sprintf("%T", v)
		}
	}
	return strings.Join(parts, " ")
}

// ReadUnits is the read request units of reading size bytes: one per 4 KB
// (4096 bytes), rounded up, at least one, strongly consistent; half that
// eventually consistent.
func ReadUnits(size int, consistent bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/4096))
	if !consistent {
		u /= 2
	}
	return u
}

// WriteUnits is the write request units of writing size bytes: one per 1 KB
// (1024 bytes), rounded up, at least one.
func WriteUnits(size int) float64 {
	return math.Max(1, math.Ceil(float64(size)/1024))
}

// ItemSize is an item's size as DynamoDB counts it: for each attribute the
// UTF-8 bytes of its name plus its value's size. nil (no item) is 0.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// valueSize is one value's size (Developer Guide, "DynamoDB item sizes and
// formats"): a string its UTF-8 bytes; a number 1 byte per two significant
// digits plus 1; a binary its bytes; a null or a Boolean 1; a set the sum of
// its elements; a list or map 3 bytes, plus 1 byte and the size of each
// element (and a map's names).
func valueSize(v types.AttributeValue) int {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return numberSize(x.Value)
	case *types.AttributeValueMemberB:
		return len(x.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range x.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range x.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range x.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range x.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is a number's size: its significant digits (leading and
// trailing zeros trimmed, sign and point dropped), one byte per two, plus 1.
func numberSize(s string) int {
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, mantissa)
	digits = strings.Trim(digits, "0")
	if utf8.RuneCountInString(digits) == 0 {
		return 1 // zero
	}
	return (len(digits)+1)/2 + 1
}
