package mcp

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
)

// A transport whose own Logger is not set logs through a lateLogger: through
// slog.Default until the Connection over it names its Options.Logger, so
// that one logger set in Options gets every line of the Connection and of
// its transport (skipped stdout lines, failed POSTs, reconnections).

// loggerUser is a Stream that takes the Connection's logger for what it
// logs itself. Every built-in Stream is one; a Stream wrapped by the
// program keeps the logger its transport was given.
type loggerUser interface {
	useLogger(*slog.Logger)
}

var (
	_ loggerUser = (*lineStream)(nil)
	_ loggerUser = (*commandStream)(nil)
	_ loggerUser = (*httpStream)(nil)
	_ loggerUser = (*sseStream)(nil)
)

type lateLogger struct{ target atomic.Pointer[slog.Logger] }

// newLate returns a logger that logs through late's target, and late.
func newLate() (*slog.Logger, *lateLogger) {
	late := &lateLogger{}
	return slog.New(lateHandler{late: late}), late
}

// use makes l log through lg from now on (nil: no change).
func (l *lateLogger) use(lg *slog.Logger) {
	if l != nil && lg != nil {
		l.target.Store(lg)
	}
}

// lateHandler is the slog.Handler of a lateLogger; ops are the WithAttrs and
// WithGroup calls made on it, applied to the target's handler once per
// target (built is the last such handler).
type lateHandler struct {
	late  *lateLogger
	ops   []func(slog.Handler) slog.Handler
	built *atomic.Pointer[builtHandler]
}

type builtHandler struct {
	from *slog.Logger // the logger it was built on (pointers compare; handlers may not)
	h    slog.Handler
}

func (h lateHandler) handler() slog.Handler {
	target := h.late.target.Load()
	if target == nil {
		target = slog.Default()
	}
	if len(h.ops) == 0 {
		return target.Handler()
	}
	if b := h.built.Load(); b != nil && b.from == target {
		return b.h
	}
	out := target.Handler()
	for _, op := range h.ops {
		out = op(out)
	}
	h.built.Store(&builtHandler{from: target, h: out})
	return out
}

func (h lateHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.handler().Enabled(ctx, level)
}

func (h lateHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h lateHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.with(func(x slog.Handler) slog.Handler { return x.WithAttrs(attrs) })
}

func (h lateHandler) WithGroup(name string) slog.Handler {
	return h.with(func(x slog.Handler) slog.Handler { return x.WithGroup(name) })
}

func (h lateHandler) with(op func(slog.Handler) slog.Handler) slog.Handler {
	return lateHandler{late: h.late, ops: append(slices.Clip(h.ops), op), built: new(atomic.Pointer[builtHandler])}
}
