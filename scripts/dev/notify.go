package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/lambdaio/s3event"
)

// notifier stands in for S3 event notifications, which the local S3
// server does not send: after each object the dev server creates in the
// staging bucket (a copy to verified/ above all) it marshals the S3
// ObjectCreated event S3 would send and hands the JSON to deliver — the
// scan gate's Handle, which decodes it as the scangate function decodes
// Lambda's payload, so the key is read URL-decoded there as on AWS. Each
// event is delivered on its own goroutine, as S3 invokes asynchronously,
// and a failed delivery is retried twice, as Lambda retries an
// asynchronous invocation (here after 2 s and 4 s, not 1 and 2 minutes),
// then logged where AWS would put it in the on-failure queue.
type notifier struct {
	blob.Store
	buckets blob.Buckets
	log     *slog.Logger

	mu      sync.Mutex
	deliver func(ctx context.Context, raw json.RawMessage) error
	ctx     context.Context
	wg      sync.WaitGroup
}

// notifyRetries are the waits before each redelivery of a failed event.
var notifyRetries = []time.Duration{2 * time.Second, 4 * time.Second}

func newNotifier(ctx context.Context, inner blob.Store, buckets blob.Buckets, log *slog.Logger) *notifier {
	return &notifier{Store: inner, buckets: buckets, log: log, ctx: ctx}
}

// start sets where events go; until then (the server is being composed)
// none are sent.
func (n *notifier) start(deliver func(ctx context.Context, raw json.RawMessage) error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deliver = deliver
}

// notifyDrain is how long a stopping server lets deliveries in flight
// finish before it cancels them (a cancelled one leaves its upload to the
// sweeper's no-verdict duty).
const notifyDrain = 10 * time.Second

// drain waits for the deliveries in flight, up to notifyDrain, then cancels
// what is left (cancel is the deliveries' context's) and waits for it.
func (n *notifier) drain(cancel context.CancelFunc) {
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(notifyDrain):
	}
	cancel()
	<-done
}

// PutObject implements blob.Objects, notifying ObjectCreated:Put.
func (n *notifier) PutObject(ctx context.Context, ref blob.Ref, body io.ReadSeeker, opts blob.PutOptions) error {
	if err := n.Store.PutObject(ctx, ref, body, opts); err != nil {
		return err
	}
	n.created(ctx, "Put", ref)
	return nil
}

// CopyObject implements blob.Objects, notifying ObjectCreated:Copy.
func (n *notifier) CopyObject(ctx context.Context, src, dst blob.Ref) error {
	if err := n.Store.CopyObject(ctx, src, dst); err != nil {
		return err
	}
	n.created(ctx, "Copy", dst)
	return nil
}

// CompleteMultipartUpload implements blob.Multipart, notifying
// ObjectCreated:CompleteMultipartUpload.
func (n *notifier) CompleteMultipartUpload(ctx context.Context, up blob.Upload, parts []blob.Part) error {
	if err := n.Store.CompleteMultipartUpload(ctx, up, parts); err != nil {
		return err
	}
	n.created(ctx, "CompleteMultipartUpload", up.Ref)
	return nil
}

// created sends the event of one object of the staging bucket, whose size
// and ETag it reads as S3 reports them.
func (n *notifier) created(ctx context.Context, name string, ref blob.Ref) {
	n.mu.Lock()
	deliver, base := n.deliver, n.ctx
	n.mu.Unlock()
	if deliver == nil || ref.Bucket != blob.Staging {
		return
	}
	info, err := n.Store.HeadObject(ctx, ref)
	if err != nil {
		n.log.Warn("local S3 notification: read the created object", "key", ref.Key, "err", err)
		return
	}
	ev := s3event.ObjectCreated(name, "us-east-1", n.buckets.Name(ref.Bucket), ref.Key, info.Size, info.ETag, time.Now())
	raw, err := json.Marshal(ev)
	if err != nil {
		n.log.Error("local S3 notification: encode the event", "err", err)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for attempt := 0; ; attempt++ {
			err := deliver(base, raw)
			if err == nil || base.Err() != nil {
				return
			}
			if attempt == len(notifyRetries) {
				n.log.Error("local S3 notification: the scan gate failed the event three times (on AWS: the on-failure queue)",
					"key", ref.Key, "err", err)
				return
			}
			select {
			case <-time.After(notifyRetries[attempt]):
			case <-base.Done():
				return
			}
		}
	}()
}
