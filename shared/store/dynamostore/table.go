package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

// Attribute names of the table (store.ReservedAttr lists the same names).
const (
	attrPK      = "PK"
	attrSK      = "SK"
	attrGSI1PK  = "GSI1PK"
	attrGSI1SK  = "GSI1SK"
	attrVersion = "version"
	// TTLAttribute is the table's TTL attribute: expiry in epoch seconds
	// (type N), stored only when non-zero. template.yaml's
	// TimeToLiveSpecification names it too.
	TTLAttribute = "expires_at"
)

// ValidTableName reports whether name follows DynamoDB's rule for table
// names: 3 to 255 characters of a-z, A-Z, 0-9, '_', '.' and '-'
// (DynamoDB Developer Guide, "Naming rules"). It is a plain loop rather
// than a regular expression: a compiled {3,255} repetition costs about a
// millisecond of start-up in every binary that links it.
func ValidTableName(name string) bool {
	if len(name) < 3 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// CreateTableInput returns the definition of Custody's one table under the
// given name: PK/SK strings (HASH/RANGE), the global secondary index
// store.IndexGSI1 on GSI1PK/GSI1SK projecting ALL, on-demand billing
// (PAY_PER_REQUEST) and server-side encryption. It is the single source of
// the table's shape: CreateTable uses it and a test holds template.yaml to
// it. TTL is not part of a CreateTable call (see EnableTTL).
func CreateTableInput(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(hash, rng string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange},
		}
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{str(attrPK), str(attrSK), str(attrGSI1PK), str(attrGSI1SK)},
		KeySchema:            key(attrPK, attrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String(store.IndexGSI1),
			KeySchema:  key(attrGSI1PK, attrGSI1SK),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		BillingMode:      types.BillingModePayPerRequest,
		SSESpecification: &types.SSESpecification{Enabled: aws.Bool(true)},
	}
}

// TimeToLiveSpecification returns the table's TTL setting: enabled on
// TTLAttribute. template.yaml must equal it.
func TimeToLiveSpecification() *types.TimeToLiveSpecification {
	return &types.TimeToLiveSpecification{AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true)}
}

// tableWaitLimit bounds CreateTable's wait when ctx has no deadline. A new
// on-demand table is usually ACTIVE within seconds.
const tableWaitLimit = 5 * time.Minute

// CreateTable creates the table named name (CreateTableInput) and waits until
// it and its index are ACTIVE, polling DescribeTable with a backoff from 20 ms
// to 2 s for at most 5 minutes or until ctx ends. It does not enable TTL,
// which is a separate API (EnableTTL); the engine filters expired items
// itself, so TTL only saves storage.
//
// minidyn reports no TableStatus at all (its DescribeTable leaves it empty),
// so a described table without a status counts as created; index statuses
// are still awaited (minidyn reports those). Errors are translated like the
// engine's (a table that already exists is store.ErrExists).
func CreateTable(ctx context.Context, client *dynamodb.Client, name string) error {
	if _, err := client.CreateTable(ctx, CreateTableInput(name)); err != nil {
		return translate("create table "+name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, tableWaitLimit)
	defer cancel()
	delay := 20 * time.Millisecond
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		var notFound *types.ResourceNotFoundException
		switch {
		case errors.As(err, &notFound):
			// Not visible yet (DynamoDB is eventually consistent here too).
		case err != nil:
			return translate("describe table "+name, err)
		case tableReady(out.Table):
			return nil
		}
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("dynamostore: wait for table %s: %w: %w", name, store.ErrUnavailable, err)
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// tableReady reports whether the table and its indexes are ACTIVE. An empty
// TableStatus is minidyn's: it never reports one.
func tableReady(t *types.TableDescription) bool {
	if t == nil || (t.TableStatus != types.TableStatusActive && t.TableStatus != "") {
		return false
	}
	for _, gsi := range t.GlobalSecondaryIndexes {
		if gsi.IndexStatus != types.IndexStatusActive && gsi.IndexStatus != "" {
			return false
		}
	}
	return true
}

// EnableTTL turns on DynamoDB's TTL deletion on TTLAttribute for the table
// (UpdateTimeToLive; on AWS the template does it). minidyn has no TTL API,
// so against the emulator it fails.
func EnableTTL(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(name),
		TimeToLiveSpecification: TimeToLiveSpecification(),
	})
	if err != nil {
		return translate("enable TTL on "+name, err)
	}
	return nil
}

// sleep waits d or until ctx ends (then it returns ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
