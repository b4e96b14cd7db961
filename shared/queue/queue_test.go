package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
)

func TestParseMessageRefusesABodyThatIsNotAMessageWithErrInvalid(t *testing.T) {
	for _, body := range []string{
		"",
		"not json",
		`[]`,
		`{"tenant":"firm-a"}`,
		`{"tenant":"","taskId":"task-1"}`,
		`{"tenant":1,"taskId":"task-1"}`,
		"{\"tenant\":\"firm-\xff\",\"taskId\":\"task-1\"}",
	} {
		if m, err := queue.ParseMessage(body); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("ParseMessage(%q) = %+v, %v, want ErrInvalid", body, m, err)
		}
	}
}

func TestABodyParsesBackToItsMessageAndUnknownMembersAreIgnored(t *testing.T) {
	for _, m := range []queue.Message{
		{Tenant: "firm-a", TaskID: "task-1"},
		{Tenant: "hale-ortiz", TaskID: "t_Zk9\"quoted\"\u2028é"},
	} {
		body, err := m.Body()
		if err != nil {
			t.Fatalf("Body(%+v) = %v", m, err)
		}
		if got, err := queue.ParseMessage(body); err != nil || got != m {
			t.Errorf("ParseMessage(Body(%+v)) = %+v, %v, want it back", m, got, err)
		}
	}
	got, err := queue.ParseMessage(`{"tenant":"firm-a","taskId":"task-1","attempt":2}`)
	if want := (queue.Message{Tenant: "firm-a", TaskID: "task-1"}); err != nil || got != want {
		t.Errorf("ParseMessage(with an unknown member) = %+v, %v, want %+v", got, err, want)
	}
}

func TestDispatchRefusesOptionsOutOfRangeWithErrInvalid(t *testing.T) {
	q, err := memqueue.New(memqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts queue.DispatchOptions
	}{
		{"a batch size over 10", queue.DispatchOptions{BatchSize: 11}},
		{"a negative batch size", queue.DispatchOptions{BatchSize: -1}},
		{"a wait over 20 s", queue.DispatchOptions{WaitTime: 21 * time.Second}},
		{"a negative maximum concurrency", queue.DispatchOptions{MaximumConcurrency: -1}},
		{"a negative timeout", queue.DispatchOptions{Timeout: -time.Second}},
	} {
		t.Run(tc.name+" is ErrInvalid", func(t *testing.T) {
			if _, err := queue.Dispatch(q, nil, &tc.opts); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("Dispatch(%+v) = %v, want ErrInvalid", tc.opts, err)
			}
		})
	}
}
