package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// records is a slog.Handler that keeps every record, at every level.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) at(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.list {
		if rec.Level >= level {
			out = append(out, rec.Message)
		}
	}
	return out
}

// A healthy connection logs nothing at Info: the era it speaks is chosen
// quietly, the same way over every transport.
func TestAHealthyConnectionLogsNothingAtInfo(t *testing.T) {
	srv := httptest.NewServer(&mcptest.Server{})
	defer srv.Close()
	for _, tt := range []struct {
		name string
		tr   func() mcp.Transport
	}{
		{"in memory", func() mcp.Transport { return (&mcptest.Server{}).Transport() }},
		{"streamable http", func() mcp.Transport { return &mcp.StreamableHTTPTransport{URL: srv.URL + "/mcp"} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			rec := &records{}
			c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tt.tr(), &mcp.Options{Logger: slog.New(rec)})
			require.NoError(t, err)
			_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "hi"})
			require.NoError(t, err)
			c.Close()
			mcp.CloseIdleHTTPConnections()
			assert.Empty(t, rec.at(slog.LevelInfo), "records at Info or above")
		})
	}
	t.Run("an unreachable URL is not taken for a legacy server", func(t *testing.T) {
		noLeaks(t)
		rec := &records{}
		_, err := mcp.Connect(ctxTimeout(t, 10*time.Second), &mcp.StreamableHTTPTransport{URL: "http://127.0.0.1:1/mcp"}, &mcp.Options{Logger: slog.New(rec)})
		require.Error(t, err)
		for _, m := range rec.at(slog.LevelDebug) {
			assert.False(t, strings.Contains(m, "legacy"), "logged %q for a server that never answered", m)
		}
		mcp.CloseIdleHTTPConnections()
	})
}

// A failure the program sees is reported there once: a server that fails
// to start is returned by Connect and shown by Status, and tool names
// that collide are in Status's warnings; none of them is also logged at
// Warn (a CLI that prints errors would print each one again).
func TestAFailureTheProgramSeesIsNotLoggedAgain(t *testing.T) {
	noLeaks(t)
	rec := &records{}
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(rec), ShutdownTimeout: 300 * time.Millisecond})
	defer m.Close()
	require.NoError(t, m.Add("broken", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		return child("exit-before-init").Connect(ctx)
	})))
	require.NoError(t, m.Add("a_", (&mcptest.Server{}).Transport()))
	require.NoError(t, m.Add("a", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		return (&mcptest.Server{Tools: []json.RawMessage{json.RawMessage(`{"name":"_echo","inputSchema":{"type":"object"}}`)}}).Transport().Connect(ctx)
	})))
	ctx := ctxTimeout(t, 30*time.Second)
	err := m.Connect(ctx)
	require.Error(t, err)
	var exit *mcp.ExitError
	assert.ErrorAs(t, err, &exit, "Connect returns the failure")
	for range 2 {
		_, err = m.Tools(ctx)
		require.NoError(t, err)
	}
	warned := false
	for _, s := range m.Status() {
		switch s.Name {
		case "broken":
			assert.Equal(t, mcp.StateFailed, s.State)
			assert.ErrorAs(t, s.Err, &exit, "Status shows it")
		case "a", "a_":
			warned = warned || len(s.Warnings) > 0
		}
	}
	assert.True(t, warned, "the collision of mcp__a___echo is in Status")
	require.NoError(t, m.Close())
	assert.Empty(t, rec.at(slog.LevelWarn), "logged at Warn or above")
	assert.NotEmpty(t, rec.at(slog.LevelDebug), "still there at Debug")
}

// A reconnection the program asked for (Manager.Reconnect) is no server
// lost: Reconnect returns how it went, and nothing is logged at Warn.
func TestAReconnectTheProgramAskedIsNotLoggedAsALoss(t *testing.T) {
	noLeaks(t)
	rec := &records{}
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(rec)})
	defer m.Close()
	require.NoError(t, m.Add("calc", (&mcptest.Server{}).Transport()))
	ctx := ctxTimeout(t, 30*time.Second)
	require.NoError(t, m.Connect(ctx))
	require.NoError(t, m.Reconnect(ctx, "calc"))
	_, err := m.CallTool(ctx, "mcp__calc__echo", map[string]string{"text": "back"})
	require.NoError(t, err)
	assert.Equal(t, 1, m.Status()[0].Restarts)
	require.NoError(t, m.Close())
	assert.Empty(t, rec.at(slog.LevelWarn), "logged at Warn or above")
	assert.Contains(t, rec.at(slog.LevelDebug), "mcp: reconnecting on request")
}

// A server lost while a call was in flight is reported to that call (the
// crash's *ExitError) and logged at Debug only; one lost with no call in
// flight is logged at Warn, the only report the program gets.
func TestAServerLostIsReportedOnce(t *testing.T) {
	t.Run("a crash during a call is the call's error, not a warning too", func(t *testing.T) {
		noLeaks(t)
		rec := &records{}
		m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(rec), RestartBackoff: time.Millisecond})
		defer m.Close()
		require.NoError(t, m.Add("flaky", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
			return child("crash-on-call").Connect(ctx)
		})))
		ctx := ctxTimeout(t, time.Minute)
		require.NoError(t, m.Connect(ctx))
		_, err := m.CallTool(ctx, "mcp__flaky__crash", nil)
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit, "the call is told")
		res, err := m.CallTool(ctx, "mcp__flaky__echo", map[string]string{"text": "back"})
		require.NoError(t, err, "the server is brought back")
		assert.Equal(t, "back", res.Text())
		require.NoError(t, m.Close())
		assert.Empty(t, rec.at(slog.LevelWarn), "logged at Warn or above")
		assert.Contains(t, rec.at(slog.LevelDebug), "mcp: server lost; reconnecting")
	})
	t.Run("a server lost between calls is a warning", func(t *testing.T) {
		lostBetweenCalls(t, &mcptest.Server{}, nil)
	})
	// subscriptions/listen, which the library keeps open to a modern
	// server on its own, is no call of the program's.
	t.Run("a server lost with only its listen open is a warning", func(t *testing.T) {
		listening := make(chan struct{}, 2)
		lostBetweenCalls(t, &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{
			"subscriptions/listen": func(*mcptest.Session, *mcptest.Message) { listening <- struct{}{} }, // held open
		}}, listening)
	})
}

// lostBetweenCalls connects a Manager to srv, closes the stream with no
// call of the program's in flight (once listening has a value, unless it
// is nil), and checks that the loss is logged at Warn, once.
func lostBetweenCalls(t *testing.T, srv *mcptest.Server, listening <-chan struct{}) {
	noLeaks(t)
	rec := &records{}
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(rec), RestartBackoff: time.Millisecond})
	defer m.Close()
	streams := make(chan mcp.Stream, 2)
	require.NoError(t, m.Add("calc", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		st, err := srv.Transport().Connect(ctx)
		if err == nil {
			streams <- st
		}
		return st, err
	})))
	ctx := ctxTimeout(t, time.Minute)
	require.NoError(t, m.Connect(ctx))
	first := <-streams
	if listening != nil {
		<-listening
	}
	require.NoError(t, first.Close()) // the server goes away with no call of the program's in flight
	<-streams                         // and is brought back
	res, err := m.CallTool(ctx, "mcp__calc__echo", map[string]string{"text": "back"})
	require.NoError(t, err)
	assert.Equal(t, "back", res.Text())
	require.NoError(t, m.Close())
	assert.Equal(t, []string{"mcp: server lost; reconnecting"}, rec.at(slog.LevelWarn))
}

// A call that follows its task between polls is a call in flight too:
// its next poll fails with the loss, and the loss is logged at Debug.
func TestAServerLostWhileACallFollowsItsTaskIsNoWarning(t *testing.T) {
	noLeaks(t)
	rec := &records{}
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(rec), RestartBackoff: time.Millisecond})
	defer m.Close()
	connected := make(chan struct{}, 2)
	require.NoError(t, m.Add("slow", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		connected <- struct{}{}
		f := newTaskFake(true)
		f.script = []map[string]any{f.task("working", map[string]any{"pollIntervalMs": 60000})}
		srv := f.server()
		get := srv.Handlers["tasks/get"]
		srv.Handlers["tasks/get"] = func(s *mcptest.Session, m *mcptest.Message) {
			get(s, m)
			s.Close() // gone while the call waits for its next poll
		}
		srv.Handlers["subscriptions/listen"] = func(*mcptest.Session, *mcptest.Message) {} // held open
		return srv.Transport().Connect(ctx)
	})))
	ctx := ctxTimeout(t, time.Minute)
	require.NoError(t, m.Connect(ctx))
	_, err := m.CallTool(ctx, "mcp__slow__slow", nil)
	require.ErrorIs(t, err, mcp.ErrClosed, "the call is told")
	<-connected
	<-connected // brought back: the loss was logged
	require.NoError(t, m.Close())
	assert.Empty(t, rec.at(slog.LevelWarn), "logged at Warn or above")
	assert.Contains(t, rec.at(slog.LevelDebug), "mcp: server lost; reconnecting")
}
