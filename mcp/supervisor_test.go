package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManagerRestartsACrashedServer(t *testing.T) {
	noLeaks(t)
	m := newManager(t, configOf(t, map[string]any{"flaky": scenarioEntry("crash-on-call")}),
		&mcp.ManagerOptions{RestartBackoff: 50 * time.Millisecond})
	ctx := ctxTimeout(t, 30*time.Second)
	res, err := m.CallTool(ctx, "mcp__flaky__echo", map[string]string{"text": "before"})
	require.NoError(t, err)
	assert.Equal(t, "before", res.Text())

	_, err = m.CallTool(ctx, "mcp__flaky__crash", nil)
	var exit *mcp.ExitError
	require.ErrorAs(t, err, &exit, "the call that saw the crash fails with the crash's error")
	assert.Equal(t, 2, exit.Code)
	assert.Contains(t, err.Error(), "panic: boom")
	assert.Contains(t, []mcp.State{mcp.StateReconnecting, mcp.StateConnected}, m.Status()[0].State)

	tools, err := m.Tools(ctx)
	require.NoError(t, err)
	assert.Contains(t, toolNames(tools), "mcp__flaky__echo", "a crashed server's tools stay listed while it comes back")

	res, err = m.CallTool(ctx, "mcp__flaky__echo", map[string]string{"text": "after"})
	require.NoError(t, err, "the next call waits for the restart")
	assert.Equal(t, "after", res.Text())
	assert.Equal(t, mcp.StateConnected, m.Status()[0].State)
	assert.Equal(t, 1, m.Status()[0].Restarts)

	t.Run("a second crash restarts again", func(t *testing.T) {
		_, err := m.CallTool(ctx, "mcp__flaky__crash", nil)
		require.ErrorAs(t, err, &exit)
		res, err := m.CallTool(ctx, "mcp__flaky__echo", map[string]string{"text": "again"})
		require.NoError(t, err)
		assert.Equal(t, "again", res.Text())
		assert.Equal(t, 2, m.Status()[0].Restarts)
	})
}

func TestManagerRestartIsNotACallersToLose(t *testing.T) {
	noLeaks(t)
	m := newManager(t, configOf(t, map[string]any{"flaky": scenarioEntry("crash-on-call")}),
		&mcp.ManagerOptions{RestartBackoff: 50 * time.Millisecond})
	ctx := ctxTimeout(t, 30*time.Second)
	_, err := m.CallTool(ctx, "mcp__flaky__crash", nil)
	require.Error(t, err)
	// An impatient caller gives up while the server comes back...
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err = m.CallTool(short, "mcp__flaky__echo", map[string]string{"text": "hurry"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, mcp.ErrUnknownTool, "the server stays listed")
	// ...and the restart goes on without it.
	res, err := m.CallTool(ctx, "mcp__flaky__echo", map[string]string{"text": "patient"})
	require.NoError(t, err)
	assert.Equal(t, "patient", res.Text())
}

func TestManagerKeepsRetryingUntilClose(t *testing.T) {
	noLeaks(t)
	var dials atomic.Int32
	var healthy atomic.Bool
	healthy.Store(true)
	m := newManager(t, nil, &mcp.ManagerOptions{RestartBackoff: 5 * time.Millisecond, MaxRestartBackoff: 20 * time.Millisecond})
	require.NoError(t, m.Add("once", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		dials.Add(1)
		if !healthy.Load() {
			return nil, errors.New("cannot start now")
		}
		return child("crash-on-call").Connect(ctx)
	})))
	ctx := ctxTimeout(t, 30*time.Second)
	_, err := m.CallTool(ctx, "mcp__once__echo", map[string]string{"text": "x"})
	require.NoError(t, err)
	healthy.Store(false)
	_, err = m.CallTool(ctx, "mcp__once__crash", nil)
	require.Error(t, err)

	require.Eventually(t, func() bool { return dials.Load() >= 5 }, 10*time.Second, time.Millisecond, "a failed restart is tried again")
	st := m.Status()[0]
	assert.Equal(t, mcp.StateReconnecting, st.State)
	assert.ErrorContains(t, st.Err, "cannot start now")
	tools, err := m.Tools(ctx)
	require.NoError(t, err)
	assert.Contains(t, toolNames(tools), "mcp__once__echo", "still listed while it is being brought back")
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err = m.CallTool(short, "mcp__once__echo", nil)
	assert.ErrorContains(t, err, "reconnecting")
	assert.ErrorContains(t, err, "cannot start now")

	healthy.Store(true)
	res, err := m.CallTool(ctx, "mcp__once__echo", map[string]string{"text": "back"})
	require.NoError(t, err, "the server came back on its own")
	assert.Equal(t, "back", res.Text())

	before := dials.Load()
	require.NoError(t, m.Close())
	assert.Equal(t, before, dials.Load(), "no attempt after Close")
}

func TestManagerReconnect(t *testing.T) {
	noLeaks(t)
	var dials atomic.Int32
	fail := atomic.Bool{}
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("s", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		dials.Add(1)
		if fail.Load() {
			return nil, errors.New("down")
		}
		return (&mcptest.Server{}).Transport().Connect(ctx)
	})))
	ctx := ctxTimeout(t, 10*time.Second)
	t.Run("a connected server is connected again", func(t *testing.T) {
		require.NoError(t, m.Connect(ctx))
		require.NoError(t, m.Reconnect(ctx, "s"))
		assert.Equal(t, int32(2), dials.Load())
		assert.Equal(t, mcp.StateConnected, m.Status()[0].State)
		assert.Equal(t, 1, m.Status()[0].Restarts)
	})
	t.Run("a server whose first start failed is tried again on demand", func(t *testing.T) {
		require.NoError(t, m.Add("late", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
			if fail.Load() {
				return nil, errors.New("not yet")
			}
			return (&mcptest.Server{}).Transport().Connect(ctx)
		})))
		fail.Store(true)
		require.Error(t, m.Connect(ctx))
		assert.Equal(t, mcp.StateFailed, statusOf(m)["late"].State)
		require.ErrorContains(t, m.Reconnect(ctx, "late"), "not yet")
		fail.Store(false)
		require.NoError(t, m.Reconnect(ctx, "late"))
		_, err := m.CallTool(ctx, "mcp__late__echo", map[string]string{"text": "x"})
		require.NoError(t, err)
	})
	assert.Error(t, m.Reconnect(ctx, "nope"))
}

func TestManagerReconnectsARemoteServer(t *testing.T) {
	noLeaks(t)
	l := &legacyServer{endpoint: "/messages?s=%d", answer: func(session int, m rpcMsg) any {
		switch m.Method {
		case "tools/list":
			return map[string]any{"tools": []any{map[string]any{"name": "where", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("session %d", session)}}}
		}
		return legacyAnswer(m)
	}}
	srv := l.start(t)
	m := newManager(t, configOf(t, map[string]any{"remote": map[string]any{"type": "sse", "url": srv.URL + "/sse"}}),
		&mcp.ManagerOptions{RestartBackoff: 10 * time.Millisecond})
	ctx := ctxTimeout(t, 10*time.Second)
	res, err := m.CallTool(ctx, "mcp__remote__where", nil)
	require.NoError(t, err)
	assert.Equal(t, "session 1", res.Text())
	l.drop(1)
	require.Eventually(t, func() bool {
		res, err := m.CallTool(ctx, "mcp__remote__where", nil)
		return err == nil && res.Text() == "session 2"
	}, 10*time.Second, 5*time.Millisecond, "the Manager opened a new session")
	assert.Equal(t, 1, m.Status()[0].Restarts)
}

func TestManagerRestartKeepsTheEra(t *testing.T) {
	noLeaks(t)
	rec := &methods{}
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) { s.Close() }, // the server goes away
	}}
	m := newManager(t, nil, &mcp.ManagerOptions{RestartBackoff: time.Millisecond})
	require.NoError(t, m.Add("legacy", srv.Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	_, err := m.CallTool(ctx, "mcp__legacy__echo", map[string]string{"text": "x"})
	require.Error(t, err, "the call saw its server go")
	require.Eventually(t, func() bool { return m.Status()[0].Restarts == 1 && m.Status()[0].State == mcp.StateConnected },
		10*time.Second, time.Millisecond)
	assert.Equal(t, 1, countOf(rec.list(), "server/discover"), "the restart knew the server was legacy: no second probe")
	assert.Equal(t, 2, countOf(rec.list(), "initialize"))
}
