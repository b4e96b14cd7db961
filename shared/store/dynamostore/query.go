package dynamostore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/custodymcp/custody/shared/store"
)

// Query returns one page of live items of a partition of the table (strongly
// consistent) or of GSI1 (eventually consistent on DynamoDB). It reads until
// it holds Limit+1 live items or the partition ends, so NextToken is set
// exactly when another live item follows (see "Queries" in the package doc).
// A range whose From is above To keeps nothing (an empty page, no request).
// An unknown index, an invalid partition, a Prefix with a range, a Limit
// outside 0..store.MaxQueryLimit or a token of another query is ErrInvalid.
func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	limit, err := store.ValidateQuery(q)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamostore: query: %w", err)
	}
	start, err := decodeToken(q)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamostore: query: %w", err)
	}
	if q.SK.From != "" && q.SK.To != "" && q.SK.From > q.SK.To {
		// Nothing is both >= From and <= To; DynamoDB would refuse the
		// BETWEEN, the port answers an empty page.
		return store.Page{}, nil
	}
	now := s.clock()
	e := newExpr(now)
	in := &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String(keyCondition(e, q)),
		FilterExpression:       aws.String(e.live()),
		ScanIndexForward:       aws.Bool(!q.Descending),
	}
	if q.Index == "" {
		in.ConsistentRead = aws.Bool(true)
	} else {
		in.IndexName = aws.String(q.Index)
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.Names(), e.Values()

	want := limit + 1
	items := make([]store.Item, 0, min(want, 64))
	op := fmt.Sprintf("query %s %q", indexLabel(q.Index), q.PK)
	for len(items) < want {
		// Limit counts the items DynamoDB reads, expired ones included.
		in.ExclusiveStartKey, in.Limit = start, aws.Int32(int32(want-len(items)))
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return store.Page{}, translate(op, err)
		}
		for _, m := range out.Items {
			it, err := liveItem(m, now)
			if err != nil {
				return store.Page{}, err
			}
			if it != nil && len(items) < want {
				items = append(items, *it)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	if len(items) <= limit {
		return store.Page{Items: items}, nil
	}
	items = items[:limit]
	return store.Page{Items: items, NextToken: encodeToken(q, items[limit-1])}, nil
}

func indexLabel(index string) string {
	if index == "" {
		return "table"
	}
	return index
}

// keyCondition is the KeyConditionExpression of q: the partition and at most
// one sort-key clause (begins_with, BETWEEN, >= or <=).
func keyCondition(e *expr, q store.Query) string {
	pk, sk := attrPK, attrSK
	if q.Index == store.IndexGSI1 {
		pk, sk = attrGSI1PK, attrGSI1SK
	}
	cond := e.name(pk) + " = " + e.value(str(q.PK))
	switch c := q.SK; {
	case c.Prefix != "":
		cond += fmt.Sprintf(" AND begins_with(%s, %s)", e.name(sk), e.value(str(c.Prefix)))
	case c.From != "" && c.To != "":
		cond += fmt.Sprintf(" AND %s BETWEEN %s AND %s", e.name(sk), e.value(str(c.From)), e.value(str(c.To)))
	case c.From != "":
		cond += fmt.Sprintf(" AND %s >= %s", e.name(sk), e.value(str(c.From)))
	case c.To != "":
		cond += fmt.Sprintf(" AND %s <= %s", e.name(sk), e.value(str(c.To)))
	}
	return cond
}

// pageToken is the JSON inside a page token: the query's fingerprint and the
// key of the last item returned (its index key too on GSI1), which becomes
// the next ExclusiveStartKey.
type pageToken struct {
	Query  string `json:"q"`
	PK     string `json:"pk"`
	SK     string `json:"sk"`
	GSI1PK string `json:"gpk,omitempty"`
	GSI1SK string `json:"gsk,omitempty"`
}

// fingerprint identifies the query a token continues: index, partition,
// sort-key condition and direction, but not the limit, which may change
// between pages.
func fingerprint(q store.Query) string {
	b, _ := json.Marshal([]any{q.Index, q.PK, q.SK.Prefix, q.SK.From, q.SK.To, q.Descending})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

func encodeToken(q store.Query, last store.Item) string {
	t := pageToken{Query: fingerprint(q), PK: last.PK, SK: last.SK}
	if q.Index == store.IndexGSI1 {
		t.GSI1PK, t.GSI1SK = last.GSI1PK, last.GSI1SK
	}
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken returns the ExclusiveStartKey of q.PageToken (nil for ""), or
// ErrInvalid when the token is malformed or belongs to another query.
func decodeToken(q store.Query) (av, error) {
	if q.PageToken == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(q.PageToken)
	var t pageToken
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		return nil, fmt.Errorf("malformed page token: %w", store.ErrInvalid)
	}
	if t.Query != fingerprint(q) || store.ValidateKey(store.Key{PK: t.PK, SK: t.SK}) != nil {
		return nil, fmt.Errorf("page token of another query: %w", store.ErrInvalid)
	}
	start := keyAV(store.Key{PK: t.PK, SK: t.SK})
	if q.Index == "" {
		if t.PK != q.PK {
			return nil, fmt.Errorf("page token of another partition: %w", store.ErrInvalid)
		}
		return start, nil
	}
	if t.GSI1PK != q.PK || t.GSI1SK == "" {
		return nil, fmt.Errorf("page token of another partition: %w", store.ErrInvalid)
	}
	start[attrGSI1PK], start[attrGSI1SK] = str(t.GSI1PK), str(t.GSI1SK)
	return start, nil
}
