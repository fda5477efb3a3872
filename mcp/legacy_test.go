package mcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartToolTaskAsksOnlyForWhatTheToolAllows(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(false)
	srv := f.server()
	srv.Tools = append(srv.Tools,
		mcptest.Raw(map[string]any{"name": "plain", "inputSchema": map[string]any{"type": "object"}}),
		mcptest.Raw(map[string]any{"name": "never", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "forbidden"}}),
		mcptest.Raw(map[string]any{"name": "either", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "optional"}}))
	c := connect(t, srv.Transport())
	ctx := ctxTimeout(t, 10*time.Second)
	for _, tc := range []struct{ tool, says string }{{"plain", "absent"}, {"never", "forbidden"}, {"unlisted", "absent"}} {
		_, err := c.StartToolTask(ctx, tc.tool, nil)
		require.ErrorIs(t, err, mcp.ErrNoTaskSupport, tc.tool)
		assert.ErrorContains(t, err, "taskSupport is "+tc.says)
	}
	f.mu.Lock()
	assert.Empty(t, f.calls, "no tools/call sent for a tool that is not to run as a task")
	f.mu.Unlock()

	task, err := c.StartToolTask(ctx, "either", nil)
	require.NoError(t, err)
	assert.Equal(t, "t1", task.ID)

	t.Run("nor on a server that offers no tasks for tool calls", func(t *testing.T) {
		srv := f.server()
		srv.Capabilities = map[string]any{"tools": map[string]any{}}
		c := connect(t, srv.Transport())
		_, err := c.StartToolTask(ctx, "slow", nil)
		assert.ErrorIs(t, err, mcp.ErrNoTaskSupport)
	})
	t.Run("nor with tasks turned off", func(t *testing.T) {
		c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet, DisableTasks: true})
		_, err := c.StartToolTask(ctx, "slow", nil)
		assert.ErrorIs(t, err, mcp.ErrNoTaskSupport)
	})
}

func TestATaskHandleForAPlainCallIsFollowed(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(false)
	done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done late"}}}
	f.script = []map[string]any{f.task("working", nil), f.task("completed", nil)}
	f.result = done
	srv := f.server()
	srv.Tools = []json.RawMessage{mcptest.Raw(map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"}})} // asks for no task
	f.onCall = func(s *mcptest.Session, m *mcptest.Message, seed map[string]any) {
		s.Reply(m.ID, map[string]any{"task": seed})
	}
	c := connect(t, srv.Transport())
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
	require.NoError(t, err)
	assert.Equal(t, "done late", res.Text(), "the work is not lost")
	f.mu.Lock()
	assert.NotContains(t, string(f.calls[0]), `"task"`, "no task was asked for")
	f.mu.Unlock()

	t.Run("unless tasks are off", func(t *testing.T) {
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, DisableTasks: true})
		_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
		assert.ErrorIs(t, err, mcp.ErrBadResult)
	})
}
