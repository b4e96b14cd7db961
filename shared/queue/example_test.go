package queue_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
)

// A worker handler receives batches as Lambda's SQS event source delivers
// them and names the records it could not finish; a Dispatcher gives it
// the in-process engine's messages the same way.
func ExampleDispatch() {
	q, err := memqueue.New(memqueue.Options{})
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	worker := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			m, err := queue.ParseMessage(r.Body)
			if err != nil {
				continue // a poison message: retrying will not mend it, so it is deleted
			}
			fmt.Printf("run task %s of %s (receive %s)\n", m.TaskID, m.Tenant, r.Attributes["ApproximateReceiveCount"])
			// A record that failed would be named here:
			// resp.BatchItemFailures = append(resp.BatchItemFailures,
			// 	events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
		close(done)
		return resp, nil
	}
	d, err := queue.Dispatch(q, worker, nil)
	if err != nil {
		panic(err)
	}
	if err := q.Send(context.Background(), queue.Message{Tenant: "demo", TaskID: "t_1"}); err != nil {
		panic(err)
	}
	<-done
	if err := d.Stop(context.Background()); err != nil {
		panic(err)
	}
	// Output: run task t_1 of demo (receive 1)
}
