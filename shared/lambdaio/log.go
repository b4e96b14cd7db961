package lambdaio

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// RequestIDKey is the log key of the Lambda request id, as Lambda's own JSON
// log lines and lambdacontext.NewLogHandler name it.
const RequestIDKey = "requestId"

// HandlerRequestIDKey is where a "requestId" that a component logs of its own
// accord (shared/mcp logs its per-request id so) is kept, so that no line
// carries the key twice and requestId always means the Lambda request id.
const HandlerRequestIDKey = "handlerRequestId"

// NewLogHandler returns a slog handler writing one JSON object per line to w
// at level and above, with Lambda's key names ("timestamp", "message";
// lambdacontext.ReplaceAttr) and, on records logged with an invocation's
// context, the Lambda request id under RequestIDKey.
//
// Unlike lambdacontext.NewLogHandler it reads no environment: the format is
// always JSON (what the template's LoggingConfig declares, and what tests
// parse) and the level comes from the function's config. Use it without
// WithGroup: attributes added per record go into the innermost group.
func NewLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return &logHandler{inner: slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: level, ReplaceAttr: lambdacontext.ReplaceAttr,
	})}
}

type logHandler struct{ inner slog.Handler }

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	clash := false
	r.Attrs(func(a slog.Attr) bool {
		clash = a.Key == RequestIDKey
		return !clash
	})
	if clash {
		out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool {
			out.AddAttrs(renameRequestID(a))
			return true
		})
		r = out
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String(RequestIDKey, lc.AwsRequestID))
	}
	return h.inner.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	renamed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		renamed[i] = renameRequestID(a)
	}
	return &logHandler{inner: h.inner.WithAttrs(renamed)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{inner: h.inner.WithGroup(name)}
}

func renameRequestID(a slog.Attr) slog.Attr {
	if a.Key == RequestIDKey {
		a.Key = HandlerRequestIDKey
	}
	return a
}
