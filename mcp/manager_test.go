package mcp_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newManager(t *testing.T, cfg *mcp.Config, opts *mcp.ManagerOptions) *mcp.Manager {
	t.Helper()
	if opts == nil {
		opts = &mcp.ManagerOptions{}
	}
	opts.Logger = quiet
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 300 * time.Millisecond
	}
	m := mcp.NewManager(cfg, opts)
	t.Cleanup(func() { m.Close() })
	return m
}

func statusOf(m *mcp.Manager) map[string]mcp.ServerStatus {
	out := map[string]mcp.ServerStatus{}
	for _, s := range m.Status() {
		out[s.Name] = s
	}
	return out
}

func toolNames(tools []mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

func TestManagerOneBadServerNeverHurtsTheOthers(t *testing.T) {
	t.Run("servers that die, cannot be read, refuse or are off leave the others working", func(t *testing.T) {
		noLeaks(t)
		cfg := configOf(t, map[string]any{
			"dies":   scenarioEntry("exit-before-init"),
			"works":  scenarioEntry("basic"),
			"broken": map[string]any{"command": "x", "args": []string{"${MCPLUG_TEST_SURELY_UNSET}"}},
			"remote": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"}, // nothing listens there
			"off":    map[string]any{"command": "x", "disabled": true},
		})
		// No server here is given up for its time: a minute stands for never.
		m := newManager(t, cfg, &mcp.ManagerOptions{ConnectTimeout: time.Minute})
		require.Error(t, m.Connect(ctxTimeout(t, 2*time.Minute)), "Connect reports the failures")

		tools, err := m.Tools(ctxTimeout(t, time.Minute))
		require.NoError(t, err)
		assert.Equal(t, []string{"mcp__works__echo", "mcp__works__add"}, toolNames(tools))

		st := statusOf(m)
		assert.Equal(t, mcp.StateConnected, st["works"].State)
		assert.Equal(t, 2, st["works"].Tools)
		assert.Equal(t, "fake", st["works"].ServerInfo.Name)
		assert.Equal(t, "stdio", st["works"].Transport)

		assert.Equal(t, mcp.StateFailed, st["dies"].State)
		var exit *mcp.ExitError
		require.ErrorAs(t, st["dies"].Err, &exit)
		assert.Equal(t, 3, exit.Code)
		assert.Contains(t, st["dies"].Err.Error(), "API_TOKEN is not set")

		var ce *config.Error
		assert.Equal(t, mcp.StateFailed, st["broken"].State)
		require.ErrorAs(t, st["broken"].Err, &ce)
		assert.Equal(t, "test.mcp.json", ce.File)

		assert.Equal(t, mcp.StateFailed, st["remote"].State)
		assert.Contains(t, st["remote"].Err.Error(), "connection refused")
		assert.Equal(t, mcp.StateDisabled, st["off"].State)
		assert.NoError(t, st["off"].Err)

		res, err := m.CallTool(ctxTimeout(t, time.Minute), "mcp__works__add", map[string]int{"a": 17, "b": 25})
		require.NoError(t, err)
		assert.Equal(t, "42", res.Text())
	})
	t.Run("a server that hangs is given up at its timeout and the others work", func(t *testing.T) {
		// In fake time: the working server's start takes no time at all,
		// however busy the machine, and the timeout is exact.
		synctest.Test(t, func(t *testing.T) {
			hangs := &mcptest.Server{Handlers: map[string]mcptest.Handler{"initialize": func(*mcptest.Session, *mcptest.Message) {}}}
			const timeout = 700 * time.Millisecond
			m := mcp.NewManager(nil, &mcp.ManagerOptions{ConnectTimeout: timeout, Logger: quiet})
			defer m.Close()
			require.NoError(t, m.Add("hangs", hangs.Transport()))
			require.NoError(t, m.Add("works", (&mcptest.Server{}).Transport()))

			start := time.Now()
			err := m.Connect(context.Background())
			require.Error(t, err, "Connect reports the failure")
			assert.Equal(t, timeout, time.Since(start), "it waits for the hanging server's timeout, and no longer")

			tools, err := m.Tools(context.Background())
			require.NoError(t, err)
			assert.Equal(t, []string{"mcp__works__echo", "mcp__works__add"}, toolNames(tools))
			st := statusOf(m)
			assert.Equal(t, mcp.StateConnected, st["works"].State)
			assert.Equal(t, mcp.StateFailed, st["hangs"].State)
			assert.ErrorIs(t, st["hangs"].Err, context.DeadlineExceeded)
			assert.Contains(t, st["hangs"].Err.Error(), "MCP_TIMEOUT")

			res, err := m.CallTool(context.Background(), "mcp__works__add", map[string]int{"a": 17, "b": 25})
			require.NoError(t, err)
			assert.Equal(t, "42", res.Text())
			require.NoError(t, m.Close())
		})
	})
}

func TestManagerTimeoutsFromEnvironment(t *testing.T) {
	t.Run("MCP_TIMEOUT bounds the handshake", func(t *testing.T) {
		noLeaks(t)
		t.Setenv("MCP_TIMEOUT", "300")
		m := newManager(t, configOf(t, map[string]any{"hangs": scenarioEntry("never-init")}), nil)
		start := time.Now()
		require.Error(t, m.Connect(ctxTimeout(t, 2*time.Minute)))
		elapsed := time.Since(start)
		assert.GreaterOrEqual(t, elapsed, 300*time.Millisecond)
		assert.Less(t, elapsed, time.Minute, "the server never answers: without the bound, Connect waits for ever")
		assert.ErrorIs(t, m.Status()[0].Err, context.DeadlineExceeded)
	})
	t.Run("MCP_TOOL_TIMEOUT bounds a call", func(t *testing.T) {
		t.Setenv("MCP_TOOL_TIMEOUT", "200")
		synctest.Test(t, func(t *testing.T) { // in fake time: the bound is exact
			m := newManager(t, nil, nil)
			srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(*mcptest.Session, *mcptest.Message) {}}}
			require.NoError(t, m.Add("slow", srv.Transport()))
			start := time.Now()
			_, err := m.CallTool(context.Background(), "mcp__slow__echo", nil)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, 200*time.Millisecond, time.Since(start))
			require.NoError(t, m.Close())
		})
	})
}

// namingServer lists the given tools, each answering with its own name.
func namingServer(tools ...string) *mcptest.Server {
	s := &mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{}}
	for _, n := range tools {
		s.Tools = append(s.Tools, mcptest.Raw(map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}}))
		s.ToolFuncs[n] = func(map[string]any) any { return mcptest.TextResult(n) }
	}
	return s
}

func TestManagerLazyAndClosed(t *testing.T) {
	noLeaks(t)
	var dials atomic.Int32
	srv := &mcptest.Server{}
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("lazy", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		dials.Add(1)
		return srv.Transport().Connect(ctx)
	})))
	assert.Equal(t, mcp.StatePending, m.Status()[0].State)
	assert.Equal(t, int32(0), dials.Load(), "nothing starts before it is used")
	res, err := m.CallTool(ctxTimeout(t, 5*time.Second), "mcp__lazy__echo", map[string]string{"text": "x"})
	require.NoError(t, err, "the first use connects")
	assert.Equal(t, "x", res.Text())
	require.NoError(t, m.Connect(context.Background()))
	assert.Equal(t, int32(1), dials.Load(), "Connect is idempotent")
	assert.Error(t, m.Add("lazy", srv.Transport()), "names are unique")

	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	_, err = m.Tools(context.Background())
	assert.ErrorIs(t, err, mcp.ErrClosed)
	_, err = m.CallTool(context.Background(), "mcp__lazy__echo", nil)
	assert.ErrorIs(t, err, mcp.ErrClosed)
	assert.ErrorIs(t, m.Add("new", srv.Transport()), mcp.ErrClosed)
}

func TestManagerCloseManyServers(t *testing.T) {
	noLeaks(t)
	servers := map[string]any{}
	for i := range 20 {
		servers[fmt.Sprintf("s%02d", i)] = scenarioEntry("basic")
	}
	m := newManager(t, configOf(t, servers), nil)
	require.NoError(t, m.Connect(ctxTimeout(t, 60*time.Second)))
	tools, err := m.Tools(context.Background())
	require.NoError(t, err)
	assert.Len(t, tools, 40)
	for _, s := range m.Status() {
		require.Equal(t, mcp.StateConnected, s.State, s.Name)
	}
	require.Len(t, testproc.LiveChildren(), 20)
	start := time.Now()
	require.NoError(t, m.Close())
	assert.Less(t, time.Since(start), 2*time.Second, "servers close in parallel")
	assert.Empty(t, testproc.LiveChildren(), "no server process outlives Close")
}

func TestManagerAsAHost(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	asked := map[string]string{} // server → what it asked for
	m := newManager(t, nil, &mcp.ManagerOptions{ServerOptions: func(name string, _ *config.Server) *mcp.Options {
		return &mcp.Options{
			Sampling: func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				mu.Lock()
				asked[name] = "sampling"
				mu.Unlock()
				return &mcp.CreateMessageResult{Role: "assistant", Content: []mcp.Content{{Type: "text", Text: "from " + name}}, Model: "m"}, nil
			},
			ElicitForm: func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked[name] = "elicitation"
				mu.Unlock()
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
			Roots: []mcp.Root{{URI: "file:///" + name}},
		}
	}})
	require.NoError(t, m.Add("sampler", ask("sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1}).Transport()))
	require.NoError(t, m.Add("former", ask("elicitation/create", map[string]any{"message": "?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}).Transport()))
	require.NoError(t, m.Add("rooted", ask("roots/list", nil).Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	res, err := m.CallTool(ctx, "mcp__sampler__echo", nil)
	require.NoError(t, err)
	assert.Contains(t, res.Text(), "from sampler", "the handler knew which server asked")
	res, err = m.CallTool(ctx, "mcp__former__echo", nil)
	require.NoError(t, err)
	assert.Contains(t, res.Text(), `"decline"`)
	res, err = m.CallTool(ctx, "mcp__rooted__echo", nil)
	require.NoError(t, err)
	assert.Contains(t, res.Text(), "file:///rooted")
	mu.Lock()
	assert.Equal(t, map[string]string{"sampler": "sampling", "former": "elicitation"}, asked)
	mu.Unlock()

	c, err := m.Connection(ctx, "rooted")
	require.NoError(t, err)
	assert.Equal(t, "fake", c.InitializeResult().ServerInfo.Name)
	_, err = m.Connection(ctx, "nope")
	assert.Error(t, err)
}
