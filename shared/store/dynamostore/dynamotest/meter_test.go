package dynamotest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

func mS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func mN(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func TestItemSizeCountsAsDynamoDBDoes(t *testing.T) {
	tests := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"no item is 0", nil, 0},
		{"a string is its name and its UTF-8 bytes", map[string]types.AttributeValue{"PK": mS("ab"), "é": mS("ü")}, 2 + 2 + 2 + 2},
		{"a number is a byte per two significant digits, plus 1", map[string]types.AttributeValue{"a": mN("12345"), "b": mN("-0.0100"), "c": mN("0")}, 1 + 4 + 1 + 2 + 1 + 1},
		{"a Boolean and a null are 1", map[string]types.AttributeValue{"t": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true}}, 2 + 2},
		{"a binary is its bytes", map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}}, 1 + 3},
		{"a list is 3 bytes and a byte per element", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{mS("a"), mS("bc")}}}, 1 + 3 + (1 + 1) + (1 + 2)},
		{"a map adds its names", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": mS("v")}}}, 1 + 3 + (1 + 1 + 1)},
		{"a set is its elements", map[string]types.AttributeValue{"ss": &types.AttributeValueMemberSS{Value: []string{"ab", "c"}}}, 2 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dynamotest.ItemSize(tt.item); got != tt.want {
				t.Errorf("ItemSize() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRequestUnitsRoundUpPerBlock(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"a missing item still costs a read", dynamotest.ReadUnits(0, true), 1},
		{"4 KB is one read", dynamotest.ReadUnits(4096, true), 1},
		{"a byte more is two", dynamotest.ReadUnits(4097, true), 2},
		{"eventually consistent is half", dynamotest.ReadUnits(4097, false), 1},
		{"1 KB is one write", dynamotest.WriteUnits(1024), 1},
		{"a byte more is two", dynamotest.WriteUnits(1025), 2},
		{"an empty write still costs one", dynamotest.WriteUnits(0), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("units = %v, want %v", tt.got, tt.want)
			}
		})
	}
}

// The meter on a real client against the emulator: each operation's units
// from the images before and after, transactions doubled, index writes
// added for items with GSI1 keys.
func TestMeterMeasuresEachRequest(t *testing.T) {
	srv := dynamotest.NewServer(t)
	images := srv.Client()
	table := dynamotest.CreateTable(t, images)
	meter := dynamotest.NewMeter(images)
	c := srv.Client(meter.Option())
	ctx := context.Background()
	big := strings.Repeat("x", 1500) // with its keys: over 1 KB, under 2 KB
	item := map[string]types.AttributeValue{"PK": mS("P#1"), "SK": mS("S#1"), "body": mS(big)}
	indexed := map[string]types.AttributeValue{"PK": mS("P#2"), "SK": mS("S#2"), "GSI1PK": mS("G#1"), "GSI1SK": mS("1"), "v": mS("a")}

	type want struct {
		op          string
		read, write float64
		actions     []string
	}
	steps := []struct {
		name string
		do   func() error
		want want
	}{
		{"a put of a 1.5 KB item is 2 writes", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
			return err
		}, want{"PutItem", 0, 2, []string{"put"}}},
		{"a strongly consistent read of it is 1", func() error {
			_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": mS("P#1"), "SK": mS("S#1")}, ConsistentRead: aws.Bool(true)})
			return err
		}, want{"GetItem", 1, 0, []string{"read"}}},
		{"an update that shrinks it is charged the larger image", func() error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": mS("P#1"), "SK": mS("S#1")},
				UpdateExpression: aws.String("SET body = :b"), ExpressionAttributeValues: map[string]types.AttributeValue{":b": mS("y")}})
			return err
		}, want{"UpdateItem", 0, 2, []string{"update"}}},
		{"a transactional put of an indexed item is 2 writes and 1 index write", func() error {
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String(table), Item: indexed}},
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": mS("P#1"), "SK": mS("S#1")},
					ConditionExpression: aws.String("attribute_exists(PK)")}},
			}})
			return err
		}, want{"TransactWriteItems", 0, 2 + 1 + 2, []string{"put", "index write", "condition check"}}},
		{"a batch read is each item, a missing one too", func() error {
			_, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: {
				Keys:           []map[string]types.AttributeValue{{"PK": mS("P#1"), "SK": mS("S#1")}, {"PK": mS("P#9"), "SK": mS("S#9")}},
				ConsistentRead: aws.Bool(true)}}})
			return err
		}, want{"BatchGetItem", 2, 0, []string{"read", "read"}}},
		{"an index query is eventually consistent", func() error {
			_, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("GSI1"),
				KeyConditionExpression: aws.String("GSI1PK = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": mS("G#1")}})
			return err
		}, want{"Query", 0.5, 0, []string{"query"}}},
		{"a delete of the indexed item removes its index entry", func() error {
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": mS("P#2"), "SK": mS("S#2")}})
			return err
		}, want{"DeleteItem", 0, 1 + 1, []string{"delete", "index write"}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := st.do(); err != nil {
				t.Fatal(err)
			}
			reqs := meter.Take()
			if len(reqs) != 1 {
				t.Fatalf("measured %d requests, want 1: %+v", len(reqs), reqs)
			}
			r := reqs[0]
			var actions []string
			for _, it := range r.Items {
				actions = append(actions, it.Action)
			}
			got := want{r.Op, r.ReadUnits, r.WriteUnits, actions}
			if diff := cmp.Diff(st.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("measured (-want +got):\n%s\nitems %+v", diff, r.Items)
			}
		})
	}
	t.Run("switched off, nothing is measured", func(t *testing.T) {
		meter.SetOn(false)
		defer meter.SetOn(true)
		if _, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": mS("P#1"), "SK": mS("S#1")}}); err != nil {
			t.Fatal(err)
		}
		if got := meter.Take(); len(got) != 0 {
			t.Errorf("measured %+v while off", got)
		}
	})
}
