// Package lambdalog is the functions' logger: JSON lines through
// log/slog, each carrying the current invocation's request ID.
//
// Lambda runs one invocation at a time in an execution environment, so
// the request ID is kept per process and set when an invocation starts;
// the stages, built once in main, keep logging through one *slog.Logger.
package lambdalog

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Handler adds request_id (and function) to every record.
type Handler struct {
	slog.Handler
	requestID *atomic.Pointer[string]
}

// New returns a JSON logger writing to w at the given level, and its handler.
func New(w io.Writer, level slog.Level, function string) (*slog.Logger, *Handler) {
	h := &Handler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), requestID: new(atomic.Pointer[string])}
	return slog.New(h).With("function", function), h
}

// Start records the request ID of the invocation whose context is ctx.
func (h *Handler) Start(ctx context.Context) {
	id := ""
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		id = lc.AwsRequestID
	}
	h.requestID.Store(&id)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := h.requestID.Load(); id != nil && *id != "" {
		r.AddAttrs(slog.String("request_id", *id))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{Handler: h.Handler.WithAttrs(as), requestID: h.requestID}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{Handler: h.Handler.WithGroup(name), requestID: h.requestID}
}

// ParseLevel reads a level name (DEBUG, INFO, WARN, ERROR; any case);
// an empty name is INFO.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if strings.TrimSpace(s) == "" {
		return slog.LevelInfo, nil
	}
	err := l.UnmarshalText([]byte(s))
	return l, err
}
