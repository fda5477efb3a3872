// Package latelog is a logger that logs through slog.Default until it is
// told which logger to log through: a transport whose own Logger is not
// set logs through one, so that one logger set in the Connection's Options
// gets every line of the Connection and of its transport.
package latelog

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
)

// Target is where a late logger logs.
type Target struct{ target atomic.Pointer[slog.Logger] }

// New returns a logger that logs through its Target, and the Target.
func New() (*slog.Logger, *Target) {
	late := &Target{}
	return slog.New(lateHandler{late: late}), late
}

// Use makes the logger log through lg from now on (nil: no change). A
// nil Target ignores it.
func (l *Target) Use(lg *slog.Logger) {
	if l != nil && lg != nil {
		l.target.Store(lg)
	}
}

// lateHandler is the slog.Handler of a late logger; ops are the WithAttrs and
// WithGroup calls made on it, applied to the target's handler once per
// target (built is the last such handler).
type lateHandler struct {
	late  *Target
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
