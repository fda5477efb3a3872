package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// CallOptions tune one request. Attach them to the request's context with
// WithCallOptions; every method of Connection honours them.
type CallOptions struct {
	// Progress, if set, receives the request's notifications/progress, in
	// order and before the request returns, on the goroutine that reads
	// the server: it must return quickly and not call the Connection.
	Progress func(Progress)

	// Timeout, if set, fails the request when no response comes within it.
	// With ResetOnProgress, each progress notification starts it anew, but
	// never past MaxTimeout.
	Timeout         time.Duration
	ResetOnProgress bool
	// MaxTimeout bounds the whole request however much progress arrives.
	// Zero means 10 times Timeout.
	MaxTimeout time.Duration

	// Meta, if set, is added to the request's _meta (where the
	// io.modelcontextprotocol/ keys are the protocol's).
	Meta map[string]any

	// TaskTTL, if set, is the ttl asked for a 2025-11-25 task (the server
	// may keep it for less: Task.TTL); a 2026-07-28 server decides alone.
	TaskTTL time.Duration
}

// taskTTL is the task.ttl asked for in ctx's call options, or nil.
func taskTTL(ctx context.Context) *int64 {
	o := callOptionsFrom(ctx)
	if o == nil || o.TaskTTL <= 0 {
		return nil
	}
	ms := max(o.TaskTTL.Milliseconds(), 1)
	return &ms
}

// Progress is a notifications/progress for a request.
type Progress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

type callOptionsKey struct{}

// WithCallOptions returns a context that carries call options for the
// requests made with it.
func WithCallOptions(ctx context.Context, opts CallOptions) context.Context {
	return context.WithValue(ctx, callOptionsKey{}, &opts)
}

func callOptionsFrom(ctx context.Context) *CallOptions {
	o, _ := ctx.Value(callOptionsKey{}).(*CallOptions)
	return o
}

// progressWatch is a request that wants its progress.
type progressWatch struct {
	fn    func(Progress)
	reset func()
}

// progressTable maps progress tokens to requests.
type progressTable struct {
	mu    sync.Mutex
	next  uint64
	byTok map[string]*progressWatch
}

func (t *progressTable) add(w *progressWatch) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	tok := fmt.Sprintf("mcplug-%d", t.next)
	if t.byTok == nil {
		t.byTok = map[string]*progressWatch{}
	}
	t.byTok[tok] = w
	return tok
}

func (t *progressTable) remove(tok string) {
	t.mu.Lock()
	delete(t.byTok, tok)
	t.mu.Unlock()
}

func (t *progressTable) get(tok string) *progressWatch {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byTok[tok]
}

// withProgressToken returns params with _meta.progressToken set.
func withProgressToken(params any, tok string) (json.RawMessage, error) {
	return withMeta(params, map[string]any{"progressToken": tok})
}

// withMeta returns params with the members of add set in its _meta.
func withMeta(params any, add map[string]any) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("mcp: params must be a JSON object to carry _meta")
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := fields["_meta"]; ok {
		json.Unmarshal(m, &meta)
	}
	for k, v := range add {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("mcp: _meta %q: %w", k, err)
		}
		meta[k] = b
	}
	fields["_meta"], _ = json.Marshal(meta)
	return json.Marshal(fields)
}

// errNoProgress is the cause of a request that timed out under CallOptions.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("mcp: no response within %v", e.d)
}

func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// applyCallOptions prepares a request made under opts: the params to send,
// the context to wait with, and the cleanup to run afterwards.
func (c *Connection) applyCallOptions(ctx context.Context, opts *CallOptions, params any) (any, context.Context, func(), error) {
	cleanup := func() {}
	if len(opts.Meta) > 0 {
		p, err := withMeta(params, opts.Meta)
		if err != nil {
			return nil, nil, nil, err
		}
		params = p
	}
	if opts.Timeout > 0 {
		max := opts.MaxTimeout
		if max <= 0 {
			max = 10 * opts.Timeout
		}
		var cancelMax context.CancelFunc
		ctx, cancelMax = context.WithTimeoutCause(ctx, max, &timeoutError{max})
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		timer := time.AfterFunc(opts.Timeout, func() { cancel(&timeoutError{opts.Timeout}) })
		prev := cleanup
		cleanup = func() { timer.Stop(); cancel(nil); cancelMax(); prev() }
		if opts.ResetOnProgress {
			opts = &CallOptions{Progress: opts.Progress, Timeout: opts.Timeout}
			fn := opts.Progress
			w := &progressWatch{fn: fn, reset: func() { timer.Reset(opts.Timeout) }}
			return c.watchProgress(ctx, w, params, cleanup)
		}
	}
	if opts.Progress != nil {
		return c.watchProgress(ctx, &progressWatch{fn: opts.Progress}, params, cleanup)
	}
	return params, ctx, cleanup, nil
}

func (c *Connection) watchProgress(ctx context.Context, w *progressWatch, params any, cleanup func()) (any, context.Context, func(), error) {
	tok := c.progress.add(w)
	p, err := withProgressToken(params, tok)
	done := func() { c.progress.remove(tok); cleanup() }
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	return p, ctx, done, nil
}

// onProgress delivers a notifications/progress.
func (c *Connection) onProgress(params json.RawMessage) {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
		Progress
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var tok string
	if json.Unmarshal(p.Token, &tok) != nil {
		tok = string(p.Token)
	}
	w := c.progress.get(tok)
	if w == nil {
		return // a late or unknown token: dropped, as the spec allows
	}
	if w.reset != nil {
		w.reset()
	}
	if w.fn != nil {
		w.fn(p.Progress)
	}
}
