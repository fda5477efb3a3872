package mcp_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManagerRoutesTasks(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(false)
	done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
	f.script = []map[string]any{f.task("completed", nil)}
	f.result = done
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	require.NoError(t, m.Add("jobs", f.server().Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	res, err := m.CallTool(ctx, "mcp__jobs__slow", nil)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text())
	task, err := m.StartToolTask(ctx, "mcp__jobs__slow", nil)
	require.NoError(t, err)
	res, err = task.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text())

	// The task's own methods ask its server, as the Manager has no task ids.
	got, err := task.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, mcp.TaskCompleted, got.Status)
	cancelled, err := task.Cancel(ctx)
	require.NoError(t, err)
	assert.Equal(t, "t1", <-f.cancelled)
	assert.Equal(t, mcp.TaskCancelled, cancelled.Status)
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
