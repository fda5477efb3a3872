package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	noLeaks(t)
	cfg := configOf(t, map[string]any{
		"dies":   scenarioEntry("exit-before-init"),
		"hangs":  scenarioEntry("never-init"),
		"works":  scenarioEntry("basic"),
		"broken": map[string]any{"command": "x", "args": []string{"${MCPLUG_TEST_SURELY_UNSET}"}},
		"remote": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"}, // nothing listens there
		"off":    map[string]any{"command": "x", "disabled": true},
	})
	const timeout = 700 * time.Millisecond
	m := newManager(t, cfg, &mcp.ManagerOptions{ConnectTimeout: timeout})

	start := time.Now()
	err := m.Connect(ctxTimeout(t, 30*time.Second))
	elapsed := time.Since(start)
	require.Error(t, err, "Connect reports the failures")
	assert.GreaterOrEqual(t, elapsed, timeout, "it waits for the hanging server's timeout")
	assert.Less(t, elapsed, timeout+3*time.Second, "and not much longer")

	tools, err := m.Tools(ctxTimeout(t, 5*time.Second))
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

	assert.Equal(t, mcp.StateFailed, st["hangs"].State)
	assert.ErrorIs(t, st["hangs"].Err, context.DeadlineExceeded)
	assert.Contains(t, st["hangs"].Err.Error(), "MCP_TIMEOUT")

	var ce *mcp.ConfigError
	assert.Equal(t, mcp.StateFailed, st["broken"].State)
	require.ErrorAs(t, st["broken"].Err, &ce)
	assert.Equal(t, "test.mcp.json", ce.File)

	assert.Equal(t, mcp.StateFailed, st["remote"].State)
	assert.Contains(t, st["remote"].Err.Error(), "connection refused")
	assert.Equal(t, mcp.StateDisabled, st["off"].State)
	assert.NoError(t, st["off"].Err)

	res, err := m.CallTool(ctxTimeout(t, 5*time.Second), "mcp__works__add", map[string]int{"a": 17, "b": 25})
	require.NoError(t, err)
	assert.Equal(t, "42", res.Text())
}

func TestManagerTimeoutsFromEnvironment(t *testing.T) {
	t.Run("MCP_TIMEOUT bounds the handshake", func(t *testing.T) {
		noLeaks(t)
		t.Setenv("MCP_TIMEOUT", "300")
		m := newManager(t, configOf(t, map[string]any{"hangs": scenarioEntry("never-init")}), nil)
		start := time.Now()
		require.Error(t, m.Connect(ctxTimeout(t, 30*time.Second)))
		assert.Less(t, time.Since(start), 3*time.Second)
		assert.ErrorIs(t, m.Status()[0].Err, context.DeadlineExceeded)
	})
	t.Run("MCP_TOOL_TIMEOUT bounds a call", func(t *testing.T) {
		noLeaks(t)
		t.Setenv("MCP_TOOL_TIMEOUT", "200")
		m := newManager(t, nil, nil)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(*mcptest.Session, *mcptest.Message) {}}}
		require.NoError(t, m.Add("slow", srv.Transport()))
		start := time.Now()
		_, err := m.CallTool(context.Background(), "mcp__slow__echo", nil)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 3*time.Second)
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

func TestManagerNames(t *testing.T) {
	noLeaks(t)
	long := strings.Repeat("very_long_tool_name_", 4) + "xxxxxxxxxx" // 90 bytes
	require.Len(t, long, 90)
	srv := namingServer
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("my server", srv("get.file").Transport()))
	require.NoError(t, m.Add("données", srv("créer").Transport()))
	require.NoError(t, m.Add("a__b", srv("c__d", long).Transport()))
	require.NoError(t, m.Add("dup.x", srv("same").Transport()))
	require.NoError(t, m.Add("dup_x", srv("same").Transport()))

	tools, err := m.Tools(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	names := map[string]bool{}
	for _, tl := range tools {
		assert.Regexp(t, valid, tl.Name)
		assert.False(t, names[tl.Name], "names are unique: %s", tl.Name)
		names[tl.Name] = true
	}
	assert.True(t, names["mcp__my_server__get_file"])
	assert.True(t, names["mcp__donn_es__cr_er"], "each non-ASCII rune becomes one _")
	assert.True(t, names["mcp__a__b__c__d"])
	longName := mcp.ExposedName("a__b", long)
	assert.Len(t, longName, 64)
	assert.True(t, names[longName])
	assert.Equal(t, longName, mcp.ExposedName("a__b", long), "shortening is stable")
	assert.NotEqual(t, longName, mcp.ExposedName("a__b", long+"2"), "shortened names stay distinct")
	assert.False(t, names["mcp__dup_x__same"], "colliding names are not shadowed: neither keeps the plain name")
	assert.Len(t, tools, 6)

	// Every exposed name routes back to its server and tool.
	for _, tl := range tools {
		res, err := m.CallTool(ctxTimeout(t, 5*time.Second), tl.Name, nil)
		require.NoError(t, err, tl.Name)
		want := map[string]string{
			"mcp__my_server__get_file": "get.file", "mcp__donn_es__cr_er": "créer",
			"mcp__a__b__c__d": "c__d", longName: long,
		}[tl.Name]
		if want == "" {
			want = "same"
		}
		assert.Equal(t, want, res.Text(), tl.Name)
		assert.Contains(t, tl.Description, "MCP tool ", "a tool without a description gets one")
	}

	st := statusOf(m)
	require.Len(t, st["dup.x"].Warnings, 1, "the collision is reported for both servers")
	require.Len(t, st["dup_x"].Warnings, 1)
	assert.Contains(t, st["dup.x"].Warnings[0], "mcp__dup_x__same")

	_, err = m.CallTool(ctxTimeout(t, 5*time.Second), "mcp__nope__nothing", nil)
	assert.ErrorIs(t, err, mcp.ErrUnknownTool)
	assert.Contains(t, err.Error(), "mcp__nope__nothing")
}

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

func TestManagerToolListChanged(t *testing.T) {
	noLeaks(t)
	var lists atomic.Int32
	var mu sync.Mutex
	tools := []json.RawMessage{mcptest.DefaultTools[0]}
	srv := &mcptest.Server{
		OnMessage: func(m *mcptest.Message) {
			if m.Method == "tools/list" {
				lists.Add(1)
			}
		},
		Handlers: map[string]mcptest.Handler{
			"tools/list": func(s *mcptest.Session, m *mcptest.Message) {
				mu.Lock()
				defer mu.Unlock()
				s.Reply(m.ID, map[string]any{"tools": tools})
			},
			"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				mu.Lock()
				tools = append(tools, mcptest.DefaultTools[1])
				mu.Unlock()
				var burst strings.Builder
				for range 50 {
					burst.WriteString(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
				}
				s.WriteRaw(burst.String())
				s.Reply(m.ID, mcptest.TextResult("burst sent"))
			},
		},
	}
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("live", srv.Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	got, err := m.Tools(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp__live__echo"}, toolNames(got))
	require.Equal(t, int32(1), lists.Load())

	_, err = m.CallTool(ctx, "mcp__live__echo", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := m.Tools(ctx)
		return err == nil && len(got) == 2
	}, 5*time.Second, time.Millisecond, "the new tool shows up")
	require.NoError(t, m.Close()) // waits for the refreshes
	relists := lists.Load() - 1
	assert.GreaterOrEqual(t, relists, int32(1))
	assert.LessOrEqual(t, relists, int32(2), "a burst of 50 notifications causes at most two re-lists")
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

func TestManagerExposedNamesAreUnique(t *testing.T) {
	noLeaks(t)
	echoing := namingServer
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("twice", echoing("same", "same", "other").Transport()))
	require.NoError(t, m.Add("a", echoing("_x").Transport()))
	require.NoError(t, m.Add("a_", echoing("x").Transport()))
	require.NoError(t, m.Add("b", echoing("y", "y.").Transport()))

	tools, err := m.Tools(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, tl := range tools {
		assert.False(t, seen[tl.Name], "exposed twice: %s", tl.Name)
		seen[tl.Name] = true
	}
	assert.Len(t, tools, 6, "a tool listed twice is exposed once")
	assert.False(t, seen["mcp__a___x"], "neither of two colliding servers keeps the plain name")
	st := statusOf(m)
	require.NotEmpty(t, st["twice"].Warnings)
	assert.Contains(t, st["twice"].Warnings[0], "more than once")
	assert.NotEmpty(t, st["a"].Warnings)
	assert.NotEmpty(t, st["a_"].Warnings)
	for _, tl := range tools { // each routes to its own tool
		res, err := m.CallTool(ctxTimeout(t, 5*time.Second), tl.Name, nil)
		require.NoError(t, err)
		assert.NotEmpty(t, res.Text())
	}
}

func TestManagerAsAHost(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	asked := map[string]string{} // server → what it asked for
	m := newManager(t, nil, &mcp.ManagerOptions{ServerOptions: func(name string, _ *mcp.ServerConfig) *mcp.Options {
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
