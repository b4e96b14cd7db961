package blobtest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/blob"
)

// Operation names of the port, for Rule.Op and Faulty.Calls.
const (
	OpPutObject               = "PutObject"
	OpGetObject               = "GetObject"
	OpHeadObject              = "HeadObject"
	OpCopyObject              = "CopyObject"
	OpDeleteObject            = "DeleteObject"
	OpPutObjectTagging        = "PutObjectTagging"
	OpGetObjectTagging        = "GetObjectTagging"
	OpCreateMultipartUpload   = "CreateMultipartUpload"
	OpPresignUploadPart       = "PresignUploadPart"
	OpListParts               = "ListParts"
	OpCompleteMultipartUpload = "CompleteMultipartUpload"
	OpAbortMultipartUpload    = "AbortMultipartUpload"
	OpPresignGetObject        = "PresignGetObject"
)

// Rule selects calls of a Faulty store and says what goes wrong with them.
// Without Delay, Hook, Block, Err or CutAfter a matching call simply
// proceeds.
type Rule struct {
	// Op is the operation to affect (OpGetObject …); "" matches every one.
	Op string
	// Ref, when set, keeps only calls addressing an object it accepts (the
	// destination of a CopyObject, the upload's object for multipart
	// calls).
	Ref func(blob.Ref) bool
	// Nth, when positive, limits the rule to the Nth call it matches (1 is
	// the first); zero affects every matching call.
	Nth int
	// Delay holds the call this long first; a context that ends meanwhile
	// fails it with blob.ErrUnavailable.
	Delay time.Duration
	// Block holds the call until its context is done, then fails it with
	// blob.ErrUnavailable: a hung S3 meeting a deadline.
	Block bool
	// Err fails the call with an error wrapping Err without reaching the
	// engine (unless After).
	Err error
	// After runs the call on the engine first, then fails it with Err: a
	// request S3 carried out whose answer was lost.
	After bool
	// Hook, when set, runs before the call goes on (after Delay): a test's
	// rendezvous, such as letting another request run while this one
	// waits between its reads and its write.
	Hook func()
	// CutAfter, for GetObject, serves the object's first CutAfter bytes
	// and then fails the read with blob.ErrUnavailable (a stream broken
	// by the network). It takes effect only when Err is nil.
	CutAfter int64
	// StreamHook, for GetObject, runs once after the object's first
	// StreamHookAfter bytes were read, before the read goes on: a test's
	// rendezvous in the middle of a stream (stopping a scanner while an
	// object streams to it). It takes effect only when Err is nil.
	StreamHook      func()
	StreamHookAfter int64
}

// Prefix returns a Rule.Ref predicate accepting the objects of bucket
// whose key begins with prefix (blob.PrefixIncoming …).
func Prefix(bucket blob.Bucket, prefix string) func(blob.Ref) bool {
	return func(r blob.Ref) bool { return r.Bucket == bucket && strings.HasPrefix(r.Key, prefix) }
}

// Faulty is a blob.Store decorating a real engine with failures, delays
// and hangs chosen by Rules, counting calls per operation: the failure
// paths of the upload lane are tested with it over s3local, as the
// store's are with storetest.Faulty (docs/decisions.md "Pipeline choices": a
// decorator over a real engine, never a mock). Safe for concurrent use.
type Faulty struct {
	inner blob.Store

	mu    sync.Mutex
	rules []*ruleState
	calls map[string]int
}

type ruleState struct {
	Rule
	matched int
}

var _ blob.Store = (*Faulty)(nil)

// NewFaulty returns a Faulty over inner with no rules: every call passes
// through.
func NewFaulty(inner blob.Store) *Faulty {
	return &Faulty{inner: inner, calls: map[string]int{}}
}

// Add appends a rule and returns f. For each call, every rule whose Op and
// Ref match counts the call; the first of them (in the order added) whose
// Nth is zero or equals its count decides what happens.
func (f *Faulty) Add(r Rule) *Faulty {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &ruleState{Rule: r})
	return f
}

// Reset removes every rule; call counts are kept.
func (f *Faulty) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Calls returns how many calls op has received, failed ones included.
func (f *Faulty) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// Unwrap returns the decorated engine.
func (f *Faulty) Unwrap() blob.Store { return f.inner }

func (f *Faulty) match(op string, ref blob.Ref) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	var chosen *Rule
	for _, r := range f.rules {
		if (r.Op != "" && r.Op != op) || (r.Ref != nil && !r.Ref(ref)) {
			continue
		}
		r.matched++
		if chosen == nil && (r.Nth <= 0 || r.Nth == r.matched) {
			rule := r.Rule
			chosen = &rule
		}
	}
	return chosen
}

// do runs call under the rule that matches op and ref; it returns the rule
// for GetObject's CutAfter.
func (f *Faulty) do(ctx context.Context, op string, ref blob.Ref, call func() error) (*Rule, error) {
	r := f.match(op, ref)
	if r == nil {
		return nil, call()
	}
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return r, fmt.Errorf("blobtest: %s %s delayed past its deadline: %w: %w", op, ref, blob.ErrUnavailable, ctx.Err())
		}
	}
	if r.Hook != nil {
		r.Hook()
	}
	if r.Block {
		<-ctx.Done()
		return r, fmt.Errorf("blobtest: %s %s blocked: %w: %w", op, ref, blob.ErrUnavailable, ctx.Err())
	}
	if r.Err == nil {
		return r, call()
	}
	if r.After {
		if err := call(); err != nil {
			return r, err
		}
		return r, fmt.Errorf("blobtest: %s %s applied, then injected failure: %w", op, ref, r.Err)
	}
	return r, fmt.Errorf("blobtest: %s %s injected failure: %w", op, ref, r.Err)
}

// PutObject implements blob.Objects.
func (f *Faulty) PutObject(ctx context.Context, ref blob.Ref, body io.ReadSeeker, opts blob.PutOptions) error {
	_, err := f.do(ctx, OpPutObject, ref, func() error { return f.inner.PutObject(ctx, ref, body, opts) })
	return err
}

// GetObject implements blob.Objects.
func (f *Faulty) GetObject(ctx context.Context, ref blob.Ref) (*blob.Object, error) {
	var obj *blob.Object
	r, err := f.do(ctx, OpGetObject, ref, func() (err error) {
		obj, err = f.inner.GetObject(ctx, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r != nil && r.Err == nil && r.CutAfter > 0 {
		obj.Body = &cutBody{rc: obj.Body, left: r.CutAfter, ref: ref}
	}
	if r != nil && r.Err == nil && r.StreamHook != nil {
		obj.Body = &hookedBody{rc: obj.Body, left: r.StreamHookAfter, hook: r.StreamHook}
	}
	return obj, nil
}

// hookedBody runs hook once after left bytes.
type hookedBody struct {
	rc   io.ReadCloser
	left int64
	hook func()
}

func (h *hookedBody) Read(p []byte) (int, error) {
	if h.hook != nil && h.left <= 0 {
		h.hook()
		h.hook = nil
	}
	if h.hook != nil && int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.rc.Read(p)
	h.left -= int64(n)
	return n, err
}

func (h *hookedBody) Close() error { return h.rc.Close() }

// cutBody ends a stream with blob.ErrUnavailable after left bytes.
type cutBody struct {
	rc   io.ReadCloser
	left int64
	ref  blob.Ref
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("blobtest: read %s: %w: %w", c.ref, blob.ErrUnavailable, io.ErrUnexpectedEOF)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cutBody) Close() error { return c.rc.Close() }

// HeadObject implements blob.Objects.
func (f *Faulty) HeadObject(ctx context.Context, ref blob.Ref) (blob.ObjectInfo, error) {
	var info blob.ObjectInfo
	_, err := f.do(ctx, OpHeadObject, ref, func() (err error) {
		info, err = f.inner.HeadObject(ctx, ref)
		return err
	})
	if err != nil {
		return blob.ObjectInfo{}, err
	}
	return info, nil
}

// CopyObject implements blob.Objects; rules match the destination.
func (f *Faulty) CopyObject(ctx context.Context, src, dst blob.Ref) error {
	_, err := f.do(ctx, OpCopyObject, dst, func() error { return f.inner.CopyObject(ctx, src, dst) })
	return err
}

// DeleteObject implements blob.Objects.
func (f *Faulty) DeleteObject(ctx context.Context, ref blob.Ref) error {
	_, err := f.do(ctx, OpDeleteObject, ref, func() error { return f.inner.DeleteObject(ctx, ref) })
	return err
}

// PutObjectTagging implements blob.Tagging.
func (f *Faulty) PutObjectTagging(ctx context.Context, ref blob.Ref, tags map[string]string) error {
	_, err := f.do(ctx, OpPutObjectTagging, ref, func() error { return f.inner.PutObjectTagging(ctx, ref, tags) })
	return err
}

// GetObjectTagging implements blob.Tagging.
func (f *Faulty) GetObjectTagging(ctx context.Context, ref blob.Ref) (map[string]string, error) {
	var tags map[string]string
	_, err := f.do(ctx, OpGetObjectTagging, ref, func() (err error) {
		tags, err = f.inner.GetObjectTagging(ctx, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	return tags, nil
}

// CreateMultipartUpload implements blob.Multipart.
func (f *Faulty) CreateMultipartUpload(ctx context.Context, ref blob.Ref, opts blob.CreateOptions) (blob.Upload, error) {
	var up blob.Upload
	_, err := f.do(ctx, OpCreateMultipartUpload, ref, func() (err error) {
		up, err = f.inner.CreateMultipartUpload(ctx, ref, opts)
		return err
	})
	if err != nil {
		return blob.Upload{}, err
	}
	return up, nil
}

// PresignUploadPart implements blob.Multipart.
func (f *Faulty) PresignUploadPart(ctx context.Context, up blob.Upload, part blob.PartRequest) (blob.PresignedRequest, error) {
	var req blob.PresignedRequest
	_, err := f.do(ctx, OpPresignUploadPart, up.Ref, func() (err error) {
		req, err = f.inner.PresignUploadPart(ctx, up, part)
		return err
	})
	if err != nil {
		return blob.PresignedRequest{}, err
	}
	return req, nil
}

// ListParts implements blob.Multipart.
func (f *Faulty) ListParts(ctx context.Context, up blob.Upload) ([]blob.Part, error) {
	var parts []blob.Part
	_, err := f.do(ctx, OpListParts, up.Ref, func() (err error) {
		parts, err = f.inner.ListParts(ctx, up)
		return err
	})
	if err != nil {
		return nil, err
	}
	return parts, nil
}

// CompleteMultipartUpload implements blob.Multipart.
func (f *Faulty) CompleteMultipartUpload(ctx context.Context, up blob.Upload, parts []blob.Part) error {
	_, err := f.do(ctx, OpCompleteMultipartUpload, up.Ref, func() error { return f.inner.CompleteMultipartUpload(ctx, up, parts) })
	return err
}

// AbortMultipartUpload implements blob.Multipart.
func (f *Faulty) AbortMultipartUpload(ctx context.Context, up blob.Upload) error {
	_, err := f.do(ctx, OpAbortMultipartUpload, up.Ref, func() error { return f.inner.AbortMultipartUpload(ctx, up) })
	return err
}

// PresignGetObject implements blob.Presigner.
func (f *Faulty) PresignGetObject(ctx context.Context, ref blob.Ref, opts blob.GetURLOptions) (blob.PresignedRequest, error) {
	var req blob.PresignedRequest
	_, err := f.do(ctx, OpPresignGetObject, ref, func() (err error) {
		req, err = f.inner.PresignGetObject(ctx, ref, opts)
		return err
	})
	if err != nil {
		return blob.PresignedRequest{}, err
	}
	return req, nil
}
