package dynamotest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

type item = map[string]types.AttributeValue

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

var cmpAV = cmpopts.IgnoreUnexported(types.AttributeValueMemberS{}, types.AttributeValueMemberN{}, types.AttributeValueMemberB{})

// Each case is a DynamoDB behaviour minidyn v0.8.2 gets wrong on its own and
// the repair layer restores (repair.go).
func TestServerBehavesLikeDynamoDBWhereMinidynDoesNot(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*dynamodb.Client, string) {
		srv := dynamotest.NewServer(t)
		c := srv.Client()
		return c, dynamotest.CreateTable(t, c)
	}
	key := item{"PK": s("p"), "SK": s("a")}
	put := func(t *testing.T, c *dynamodb.Client, table string, it item) {
		t.Helper()
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: it}); err != nil {
			t.Fatalf("PutItem = %v", err)
		}
	}
	get := func(t *testing.T, c *dynamodb.Client, table string) item {
		t.Helper()
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatalf("GetItem = %v", err)
		}
		return out.Item
	}

	t.Run("UpdateItem removes, sets and adds exactly", func(t *testing.T) {
		c, table := setup(t)
		put(t, c, table, item{"PK": s("p"), "SK": s("a"), "gone": s("x"), "big": n("9223372036854775806"), "min": n("-9223372036854775808")})
		out, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &table, Key: key,
			UpdateExpression:          aws.String("ADD #big :one, fresh :one SET #s = :s REMOVE gone"),
			ExpressionAttributeNames:  map[string]string{"#big": "big", "#s": "s"},
			ExpressionAttributeValues: item{":one": n("1"), ":s": s("v")},
			ReturnValues:              types.ReturnValueAllNew,
		})
		if err != nil {
			t.Fatalf("UpdateItem = %v", err)
		}
		want := item{"PK": s("p"), "SK": s("a"), "big": n("9223372036854775807"), "min": n("-9223372036854775808"), "fresh": n("1"), "s": s("v")}
		if d := cmp.Diff(want, out.Attributes, cmpAV); d != "" {
			t.Errorf("UpdateItem ALL_NEW (-want +got):\n%s", d)
		}
		if d := cmp.Diff(want, get(t, c, table), cmpAV); d != "" {
			t.Errorf("GetItem after UpdateItem (-want +got):\n%s", d)
		}
	})

	t.Run("ADD to a string is a ValidationException", func(t *testing.T) {
		c, table := setup(t)
		put(t, c, table, item{"PK": s("p"), "SK": s("a"), "x": s("1")})
		_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &table, Key: key, UpdateExpression: aws.String("ADD x :one"),
			ExpressionAttributeValues: item{":one": n("1")},
		})
		var apiErr interface{ ErrorCode() string }
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ValidationException" {
			t.Errorf("UpdateItem = %v, want ValidationException", err)
		}
	})

	t.Run("a failed conditional PutItem returns the old item", func(t *testing.T) {
		c, table := setup(t)
		old := item{"PK": s("p"), "SK": s("a"), "v": n("3")}
		put(t, c, table, old)
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &table, Item: key, ConditionExpression: aws.String("attribute_not_exists(PK)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			t.Fatalf("PutItem = %v, want ConditionalCheckFailedException", err)
		}
		if d := cmp.Diff(old, ccf.Item, cmpAV); d != "" {
			t.Errorf("ConditionalCheckFailedException.Item (-want +got):\n%s", d)
		}
	})

	t.Run("an empty binary keeps its type", func(t *testing.T) {
		c, table := setup(t)
		put(t, c, table, item{"PK": s("p"), "SK": s("a"), "e": &types.AttributeValueMemberB{Value: []byte{}}, "x": s("1")})
		_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &table, Key: key, UpdateExpression: aws.String("SET x = :x"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: item{":x": s("2")},
		})
		if err != nil {
			t.Fatalf("UpdateItem of an item holding an empty binary = %v", err)
		}
		if b, ok := get(t, c, table)["e"].(*types.AttributeValueMemberB); !ok || len(b.Value) != 0 {
			t.Errorf("GetItem e = %#v, want an empty B", get(t, c, table)["e"])
		}
	})

	t.Run("a query resumes after a deleted ExclusiveStartKey", func(t *testing.T) {
		c, table := setup(t)
		for _, sk := range []string{"a", "b", "c"} {
			put(t, c, table, item{"PK": s("p"), "SK": s(sk)})
		}
		if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key}); err != nil {
			t.Fatalf("DeleteItem = %v", err)
		}
		out, err := c.Query(ctx, &dynamodb.QueryInput{
			TableName: &table, KeyConditionExpression: aws.String("PK = :p"),
			ExpressionAttributeValues: item{":p": s("p")}, ExclusiveStartKey: key,
		})
		if err != nil || len(out.Items) != 2 {
			t.Fatalf("Query after a deleted start = %d items, %v; want b and c", len(out.Items), err)
		}
		if len(get(t, c, table)) != 0 {
			t.Errorf("the placeholder outlived the query")
		}
	})

	t.Run("an item leaving the index by PutItem then deleted keeps the index intact", func(t *testing.T) {
		c, table := setup(t)
		for _, sk := range []string{"a", "b", "c"} {
			put(t, c, table, item{"PK": s("p"), "SK": s(sk), "GSI1PK": s("g"), "GSI1SK": s(sk)})
		}
		put(t, c, table, key) // a leaves the index
		if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key}); err != nil {
			t.Fatalf("DeleteItem = %v", err)
		}
		out, err := c.Query(ctx, &dynamodb.QueryInput{
			TableName: &table, IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :g"),
			ExpressionAttributeValues: item{":g": s("g")},
		})
		if err != nil || len(out.Items) != 2 {
			t.Fatalf("index query = %d items, %v; want b and c", len(out.Items), err)
		}
	})
}
