package dynamotest_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// TestQueryLimitCountsWhatTheKeyConditionReads holds the repair of
// limit.go: with a FilterExpression, Limit counts the items the key
// condition reads (filtered out or not) and nothing else, as on DynamoDB —
// minidyn alone counts every item of the table it walks.
func TestQueryLimitCountsWhatTheKeyConditionReads(t *testing.T) {
	ctx := context.Background()
	var queries atomic.Int64
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Query") {
				queries.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := dynamotest.NewServer(t, count)
	c := srv.Client()
	table := dynamotest.CreateTable(t, c)
	put := func(pk, sk string, gone bool) {
		t.Helper()
		it := item{"PK": s(pk), "SK": s(sk), "GSI1PK": s("g" + pk), "GSI1SK": s(sk)}
		if gone {
			it["gone"] = &types.AttributeValueMemberBOOL{Value: true}
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	// Many items before and after partition "b", so a Limit counted over
	// the table would page through them.
	for i := range 40 {
		put("a", string(rune('a'+i%26))+string(rune('a'+i/26)), false)
		put("c", string(rune('a'+i%26))+string(rune('a'+i/26)), false)
	}
	put("b", "1", false)
	put("b", "2", true)
	put("b", "3", false)

	for _, index := range []string{"", "GSI1"} {
		t.Run("index "+index, func(t *testing.T) {
			pkName, pk := "PK", "b"
			if index != "" {
				pkName, pk = "GSI1PK", "gb"
			}
			in := &dynamodb.QueryInput{
				TableName:                 &table,
				KeyConditionExpression:    aws.String("#pk = :pk"),
				FilterExpression:          aws.String("attribute_not_exists(gone)"),
				ExpressionAttributeNames:  map[string]string{"#pk": pkName},
				ExpressionAttributeValues: item{":pk": s(pk)},
				Limit:                     aws.Int32(2),
			}
			if index != "" {
				in.IndexName = aws.String(index)
			}
			queries.Store(0)
			// Page 1 reads b/1 and b/2 (the Limit), keeps b/1, stops at b/2.
			out, err := c.Query(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := sks(out.Items); !cmp.Equal(got, []string{"1"}) || out.ScannedCount != 2 || len(out.LastEvaluatedKey) == 0 {
				t.Fatalf("page 1 = %v (scanned %d, next %v); want [1], 2 scanned, a LastEvaluatedKey", got, out.ScannedCount, out.LastEvaluatedKey)
			}
			if index != "" {
				if _, ok := out.LastEvaluatedKey["GSI1PK"]; !ok {
					t.Errorf("index page LastEvaluatedKey %v lacks the index key", out.LastEvaluatedKey)
				}
			}
			// Page 2 reads b/3 only: under the Limit, so the end.
			in.ExclusiveStartKey = out.LastEvaluatedKey
			out, err = c.Query(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := sks(out.Items); !cmp.Equal(got, []string{"3"}) || len(out.LastEvaluatedKey) != 0 {
				t.Errorf("page 2 = %v (next %v); want [3] and the end", got, out.LastEvaluatedKey)
			}
			if n := queries.Load(); n != 2 {
				t.Errorf("%d Query requests, want 2", n)
			}
		})
	}

	t.Run("the engine reads a small page in one request", func(t *testing.T) {
		st := dynamostore.New(c, table, dynamostore.Options{})
		queries.Store(0)
		page, err := st.Query(ctx, store.Query{PK: "c", Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 3 || page.NextToken == "" {
			t.Errorf("page = %d items, token %q; want 3 and more", len(page.Items), page.NextToken)
		}
		if n := queries.Load(); n != 1 {
			t.Errorf("%d Query requests for a page of 3, want 1 (Limit 4 of the partition)", n)
		}
	})
}

func sks(items []item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["SK"].(*types.AttributeValueMemberS).Value)
	}
	return out
}
