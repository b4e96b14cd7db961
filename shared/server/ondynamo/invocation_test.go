package ondynamo_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// The invocation core's faults on DynamoDB (issue 9): a write whose
// not-exists condition fails answers from its conflict path, one row for
// twenty racing calls, and its round trips pinned: one transaction for the
// first call, and on the conflict path the failed transaction, the
// handler's read of the original receipt and one more write of the bucket
// and audit row.
func TestAConditionalWriteOnDynamoDBCostsOneTransactionAndItsConflictOneMore(t *testing.T) {
	env := newDynEnv(t, servertest.Options{RegisterExtraOn: servertest.RegisterReceiptFixture})
	s := env.Initialize(t, servertest.Attorney, rev)
	env.ops.take()
	args := map[string]any{"key": "k", "text": "t"}
	for _, c := range []struct {
		name string
		want cost
	}{
		// The receipt's conditional put and the audit row: one transaction.
		{"first call: executed", authedTx(0, 0)},
		// The failed transaction, the original receipt read, then the audit
		// row alone: one PutItem (issue 19, item 6: no rate count in it).
		{"replay: the conflict path", cost{"BatchGetItem": 1, "TransactWriteItems": 1, "GetItem": 1, "PutItem": 1}},
	} {
		r := s.Post(t, []byte(toolCall(7, servertest.ReceiptTool, args)))
		if class, code := refusalClass(t, r); r.Status != http.StatusOK || class != "" || code != 0 {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
		if diff := cmp.Diff(c.want, cost(env.ops.take())); diff != "" {
			t.Errorf("%s: DynamoDB requests (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestTwentyConcurrentWritesWithOneKeyLeaveOneRowOnDynamoDB(t *testing.T) {
	env := newDynEnv(t, servertest.Options{RegisterExtraOn: servertest.RegisterReceiptFixture})
	servertest.RaceReceipts(t, env.Env, 20)
}

// Issue 8, item 3, on DynamoDB: a 200-way barrier against an
// expensive-lane limit of 60 serves no more than 60.
func TestTwoHundredConcurrentCallsServeNoMoreThanTheLimitOnDynamoDB(t *testing.T) {
	const limit, n = 60, 200
	env := newDynEnv(t, servertest.Options{
		Limits:        ratelimit.Limits{ratelimit.LaneRead: 10000, ratelimit.LaneExpensive: limit},
		MaxConcurrent: map[ratelimit.Lane]int{},
	})
	s := env.Initialize(t, servertest.Attorney, rev)
	served, limited, other := s.Barrier(t, n, "search_documents", map[string]any{"query": "delivery", "case_id": seed.Meridian})
	t.Logf("DynamoDB engine, %d-way barrier, limit %d: %d served, %d rate-limited, %d other (overshoot %d)",
		n, limit, served, limited, other, served-limit)
	if served > limit || served+limited != n || other != 0 {
		t.Errorf("served %d, limited %d, other %d; want at most %d served and the rest RATE_LIMITED", served, limited, other, limit)
	}
}
