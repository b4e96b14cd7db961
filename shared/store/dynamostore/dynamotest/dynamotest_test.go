package dynamotest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

func TestListenAndServeServesATableUntilCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- dynamotest.ListenAndServe(ctx, "127.0.0.1:0", "custody", func(url string) { urls <- url })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("ListenAndServe = %v before it was ready", err)
	case <-time.After(30 * time.Second):
		t.Fatal("ListenAndServe not ready after 30s")
	}
	s := dynamostore.New(dynamotest.NewClient(url), "custody", dynamostore.Options{})
	it := store.Item{PK: "p", SK: "s", Version: 1, Attrs: map[string]any{"n": int64(1)}}
	if err := s.Put(ctx, it, store.NotExists()); err != nil {
		t.Fatalf("Put = %v", err)
	}
	if got, err := s.Get(ctx, it.Key()); err != nil || got.Int("n") != 1 {
		t.Fatalf("Get = %+v, %v; want the item", got, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe after cancel = %v, want nil", err)
	}
	if _, err := s.Get(context.Background(), it.Key()); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Get after shutdown = %v, want ErrUnavailable", err)
	}
}
