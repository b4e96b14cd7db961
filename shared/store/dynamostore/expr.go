package dynamostore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

// expr builds the expressions of one request. Every attribute name and value
// goes through a placeholder (#n0, :v0, …); no caller string is ever spliced
// into an expression. DynamoDB refuses unused placeholders, so they are
// created on first use.
type expr struct {
	now    int64 // the request's clock, epoch seconds
	names  map[string]string
	byName map[string]string
	values map[string]types.AttributeValue
}

func newExpr(now int64) *expr { return &expr{now: now} }

// name returns the placeholder of attribute name n.
func (e *expr) name(n string) string {
	if p, ok := e.byName[n]; ok {
		return p
	}
	if e.names == nil {
		e.names, e.byName = map[string]string{}, map[string]string{}
	}
	p := fmt.Sprintf("#n%d", len(e.names))
	e.names[p], e.byName[n] = n, p
	return p
}

// value returns a new placeholder bound to v.
func (e *expr) value(v types.AttributeValue) string {
	if e.values == nil {
		e.values = map[string]types.AttributeValue{}
	}
	p := fmt.Sprintf(":v%d", len(e.values))
	e.values[p] = v
	return p
}

// nowValue is the placeholder of the request's clock, bound once.
func (e *expr) nowValue() string {
	if _, ok := e.values[":now"]; !ok {
		if e.values == nil {
			e.values = map[string]types.AttributeValue{}
		}
		e.values[":now"] = num(e.now)
	}
	return ":now"
}

// Names and Values are the request's ExpressionAttributeNames and
// ExpressionAttributeValues (nil when unused: DynamoDB refuses empty maps).
func (e *expr) Names() map[string]string                { return e.names }
func (e *expr) Values() map[string]types.AttributeValue { return e.values }

// live holds for an item with no expiry or one after now. On an absent item
// it holds too; callers pair it with attribute_exists where that matters.
func (e *expr) live() string {
	x := e.name(TTLAttribute)
	return fmt.Sprintf("(attribute_not_exists(%s) OR %s > %s)", x, x, e.nowValue())
}

// absentOrExpired holds when no live item has the key (store.CondNotExists).
func (e *expr) absentOrExpired() string {
	return fmt.Sprintf("(attribute_not_exists(%s) OR %s <= %s)", e.name(attrPK), e.name(TTLAttribute), e.nowValue())
}

// presentAndExpired holds when an expired item is still stored.
func (e *expr) presentAndExpired() string {
	return fmt.Sprintf("(attribute_exists(%s) AND %s <= %s)", e.name(attrPK), e.name(TTLAttribute), e.nowValue())
}

// absentOrLive holds unless an expired item is stored: the guard that keeps
// an UpdateItem from merging into an expired item (see the package doc).
func (e *expr) absentOrLive() string {
	x := e.name(TTLAttribute)
	return fmt.Sprintf("(attribute_not_exists(%s) OR attribute_not_exists(%s) OR %s > %s)",
		e.name(attrPK), x, x, e.nowValue())
}

// notWrittenBy holds unless the stored item carries token: the guard of
// every write that stores an item, so the SDK's resend of a write already
// applied fails instead of applying it again, and its old item (ALL_OLD)
// shows the token (see "Retries" in the package doc).
func (e *expr) notWrittenBy(token string) string {
	x := e.name(store.WriteTokenAttr)
	return fmt.Sprintf("(attribute_not_exists(%s) OR %s <> %s)", x, x, e.value(str(token)))
}

// condition is the condition expression of one port condition
// (store.ValidateConditions has checked its shape).
func (e *expr) condition(c store.Condition) string {
	switch c.Kind {
	case store.CondNotExists:
		return e.absentOrExpired()
	case store.CondExists:
		return fmt.Sprintf("(attribute_exists(%s) AND %s)", e.name(attrPK), e.live())
	case store.CondVersionEquals:
		return fmt.Sprintf("(%s = %s AND %s)", e.name(attrVersion), e.value(num(c.Version)), e.live())
	case store.CondAttrEquals:
		// "a IN (:v)" means "a = :v" in DynamoDB (false when the types
		// differ); minidyn refuses "=" between different types instead.
		return fmt.Sprintf("(%s IN (%s) AND %s)", e.name(c.Attr), e.value(attrValue(c.Value)), e.live())
	case store.CondAttrBelow:
		// Absent attribute, absent or expired item, or a number below the
		// bound ("<" is false for another type, as the port says).
		// attribute_type first: "<" between types is false in DynamoDB and
		// an error in minidyn, which evaluates AND left to right.
		a := e.name(c.Attr)
		return fmt.Sprintf("(attribute_not_exists(%s) OR (attribute_type(%s, %s) AND %s < %s) OR %s)",
			a, a, e.value(str("N")), a, e.value(attrValue(c.Value)), e.presentAndExpired())
	}
	panic(fmt.Sprintf("dynamostore: unvalidated condition kind %d", c.Kind))
}

// conditions joins the conditions and extra clauses with AND; "" when there
// are none.
func (e *expr) conditions(conds []store.Condition, extra ...string) string {
	parts := make([]string, 0, len(conds)+len(extra))
	for _, c := range conds {
		parts = append(parts, e.condition(c))
	}
	parts = append(parts, extra...)
	return strings.Join(parts, " AND ")
}

// update is the UpdateExpression of u written by the call whose write
// token is token (store.ValidateUpdate has refused an attribute named
// twice, which DynamoDB refuses too). Version is incremented with ADD, so
// an absent item becomes version 1, as in store.ApplyUpdate; an expiry of 0
// and empty index keys are removed, since the engine stores neither; the
// token replaces the previous writer's.
func (e *expr) update(u store.Update, token string) string {
	set := []string{e.name(store.WriteTokenAttr) + " = " + e.value(str(token))}
	var remove []string
	add := []string{e.name(attrVersion) + " " + e.value(num(1))}
	for _, n := range sortedKeys(u.Set) {
		set = append(set, e.name(n)+" = "+e.value(attrValue(u.Set[n])))
	}
	for _, n := range sortedKeys(u.Add) {
		add = append(add, e.name(n)+" "+e.value(num(u.Add[n])))
	}
	for _, n := range u.Remove {
		remove = append(remove, e.name(n))
	}
	if u.ExpiresAt != nil {
		if *u.ExpiresAt == 0 {
			remove = append(remove, e.name(TTLAttribute))
		} else {
			set = append(set, e.name(TTLAttribute)+" = "+e.value(num(*u.ExpiresAt)))
		}
	}
	if u.GSI1PK != nil { // with GSI1SK: both set or both ""
		if *u.GSI1PK == "" {
			remove = append(remove, e.name(attrGSI1PK), e.name(attrGSI1SK))
		} else {
			set = append(set, e.name(attrGSI1PK)+" = "+e.value(str(*u.GSI1PK)),
				e.name(attrGSI1SK)+" = "+e.value(str(*u.GSI1SK)))
		}
	}
	clauses := []string{"ADD " + strings.Join(add, ", "), "SET " + strings.Join(set, ", ")}
	if len(remove) > 0 {
		clauses = append(clauses, "REMOVE "+strings.Join(remove, ", "))
	}
	return strings.Join(clauses, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// optional returns nil for "" (an absent expression), else &s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
