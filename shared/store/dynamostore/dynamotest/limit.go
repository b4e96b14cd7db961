package dynamotest

import (
	"encoding/json"
)

// A Query with both a Limit and a FilterExpression: DynamoDB reads at most
// Limit items that match the key condition, then filters them, and returns
// a LastEvaluatedKey when it stopped because of the Limit. minidyn walks
// every item of the table (not only the partition) in key order and, as soon
// as a FilterExpression is present, counts each item it walks toward the
// Limit, matched by the key condition or not. A small Limit then returns a
// few or no items with a LastEvaluatedKey, and a client that pages until it
// holds enough items (dynamostore does) makes dozens of requests where
// DynamoDB answers in one — the request count depends on the whole table's
// size, and the round trips a test pins would be the emulator's.
//
// limitedQuery answers such a Query as DynamoDB does, with two emulator
// Queries from the same ExclusiveStartKey and no Limit: one without the
// filter (the items the key condition matches, in order; the first Limit of
// them are what DynamoDB would read) and one with it (which of those the
// filter keeps). A Query with a ProjectionExpression or a Select, which the
// engine never sends, is passed through unrepaired (ok false).
func (h *repairs) limitedQuery(body []byte) (resp response, ok bool) {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return response{}, false
	}
	var limit int
	if json.Unmarshal(req["Limit"], &limit) != nil || limit <= 0 ||
		req["FilterExpression"] == nil || req["ProjectionExpression"] != nil || req["Select"] != nil {
		return response{}, false
	}
	var table, index string
	_ = json.Unmarshal(req["TableName"], &table)
	_ = json.Unmarshal(req["IndexName"], &index)
	s, err := h.schemaOf(table)
	if err != nil {
		return answer(err), true
	}

	// The items the key condition matches: no filter, no limit, and only
	// the placeholders the key condition uses (the emulator, like DynamoDB,
	// refuses unused ones).
	keyed := map[string]json.RawMessage{}
	for k, v := range req {
		switch k {
		case "Limit", "FilterExpression", "ExpressionAttributeNames", "ExpressionAttributeValues":
		default:
			keyed[k] = v
		}
	}
	var cond string
	_ = json.Unmarshal(req["KeyConditionExpression"], &cond)
	var names map[string]string
	var values attrs
	_ = json.Unmarshal(req["ExpressionAttributeNames"], &names)
	_ = json.Unmarshal(req["ExpressionAttributeValues"], &values)
	n, v := placeholdersIn(cond, names, values)
	if len(n) > 0 {
		keyed["ExpressionAttributeNames"] = mustJSON(n)
	}
	if len(v) > 0 {
		keyed["ExpressionAttributeValues"] = mustJSON(v)
	}
	var matched struct{ Items []attrs }
	if err := h.call("Query", keyed, &matched); err != nil {
		return answer(err), true
	}
	read := matched.Items[:min(limit, len(matched.Items))]

	// Which of them the filter keeps.
	filtered := map[string]json.RawMessage{}
	for k, v := range req {
		if k != "Limit" {
			filtered[k] = v
		}
	}
	var kept struct{ Items []attrs }
	if err := h.call("Query", filtered, &kept); err != nil {
		return answer(err), true
	}
	keep := map[string]bool{}
	for _, it := range kept.Items {
		keep[string(mustJSON(s.keyOf(it)))] = true
	}
	out := map[string]any{"ScannedCount": len(read)}
	items := make([]attrs, 0, len(read))
	for _, it := range read {
		if keep[string(mustJSON(s.keyOf(it)))] {
			items = append(items, it)
		}
	}
	out["Items"], out["Count"] = items, len(items)
	if len(read) == limit {
		// Stopped by the Limit: the last item read is where to go on, with
		// its index key on an index (DynamoDB's LastEvaluatedKey).
		last := read[len(read)-1]
		lek := s.keyOf(last)
		if index != "" {
			for _, idx := range s.indexes {
				for _, name := range idx {
					if val, ok := last[name]; ok {
						lek[name] = val
					}
				}
			}
		}
		out["LastEvaluatedKey"] = lek
	}
	return response{status: 200, ctype: "application/x-amz-json-1.0", body: mustJSON(out)}, true
}
