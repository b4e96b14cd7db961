package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

// Retrying UnprocessedKeys, which DynamoDB returns (with HTTP 200) when a
// partition is throttled or the response would exceed 16 MB; the SDK does
// not retry them. AWS asks for an exponential backoff: 25 ms doubling to
// 800 ms, eight requests in all (about 1.6 s of waiting), then
// ErrUnavailable.
const (
	batchGetAttempts   = 8
	batchGetFirstDelay = 25 * time.Millisecond
	batchGetMaxDelay   = 800 * time.Millisecond
)

// BatchGet reads up to store.MaxBatchGetKeys distinct keys with a strongly
// consistent BatchGetItem, retrying UnprocessedKeys with backoff (respecting
// ctx). The result is aligned with keys: nil where no live item is stored.
// More keys than the limit, an invalid key or a repeated key is ErrInvalid
// (DynamoDB refuses duplicates); unprocessed keys left after the last retry
// are ErrUnavailable.
func (s *Store) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	if err := store.ValidateBatchGet(keys); err != nil {
		return nil, fmt.Errorf("dynamostore: batch get: %w", err)
	}
	out := make([]*store.Item, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	now := s.clock()
	pending := make([]av, len(keys))
	for i, k := range keys {
		pending[i] = keyAV(k)
	}
	found := make(map[store.Key]*store.Item, len(keys))
	delay := batchGetFirstDelay
	for attempt := 1; ; attempt++ {
		resp, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{
				s.table: {Keys: pending, ConsistentRead: aws.Bool(true)},
			},
		})
		if err != nil {
			return nil, translate(fmt.Sprintf("batch get %d keys", len(keys)), err)
		}
		for _, m := range resp.Responses[s.table] {
			it, err := liveItem(m, now)
			if err != nil {
				return nil, err
			}
			if it != nil {
				found[it.Key()] = it
			}
		}
		pending = resp.UnprocessedKeys[s.table].Keys
		if len(pending) == 0 {
			break
		}
		if attempt == batchGetAttempts {
			return nil, fmt.Errorf("dynamostore: batch get: %d keys still unprocessed after %d requests: %w",
				len(pending), attempt, store.ErrUnavailable)
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, fmt.Errorf("dynamostore: batch get: %w: %w", store.ErrUnavailable, err)
		}
		delay = min(2*delay, batchGetMaxDelay)
	}
	for i, k := range keys {
		out[i] = found[k]
	}
	return out, nil
}
