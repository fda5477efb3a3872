package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerRequestsAsTasks(t *testing.T) {
	// The server asks the client to run its sampling as a task, then polls
	// and fetches the result, as a 2025-11-25 server does.
	noLeaks(t)
	type answer struct{ result, err json.RawMessage }
	answers := make(chan answer, 16)
	srv := &mcptest.Server{OnMessage: func(m *mcptest.Message) {
		if m.Method == "" && m.ID != nil {
			answers <- answer{m.Result, m.Error}
		}
	}}
	var session atomic.Pointer[mcptest.Session]
	srv.Handlers = map[string]mcptest.Handler{"notifications/initialized": func(s *mcptest.Session, m *mcptest.Message) { session.Store(s) }}
	release := make(chan struct{})
	ended := make(chan error, 1)
	var sampled atomic.Int32
	c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, MaxTasks: 1,
		Sampling: func(ctx context.Context, c *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if req.Messages[0].Content[0].Text == "block" {
				<-ctx.Done()
				ended <- ctx.Err()
				return nil, ctx.Err()
			}
			sampled.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "sampled"}}, Model: "m"}, nil
		}})
	_ = c
	require.Eventually(t, func() bool { return session.Load() != nil }, 10*time.Second, time.Millisecond)
	s := session.Load()
	ask := func(id any, method string, params any) answer {
		require.NoError(t, s.Request(id, method, params))
		select {
		case a := <-answers:
			return a
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %s", method)
			return answer{}
		}
	}
	sampling := map[string]any{"task": map[string]any{"ttl": 60000}, "maxTokens": 10,
		"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}}

	created := ask(1, "sampling/createMessage", sampling)
	require.Nil(t, created.err)
	taskID := gjson(t, created.result, "task", "taskId")
	assert.JSONEq(t, `"working"`, gjson(t, created.result, "task", "status"))
	assert.JSONEq(t, `60000`, gjson(t, created.result, "task", "ttl"))

	busy := ask(2, "sampling/createMessage", sampling)
	assert.Contains(t, string(busy.err), fmt.Sprint(mcp.CodeServerBusy), "MaxTasks 1: a second task is refused")

	got := ask(3, "tasks/get", map[string]any{"taskId": json.RawMessage(taskID)})
	assert.JSONEq(t, `"working"`, gjson(t, got.result, "status"))
	list := ask(4, "tasks/list", nil)
	assert.Contains(t, string(list.result), "mcplug-task-1")

	close(release)
	result := ask(5, "tasks/result", map[string]any{"taskId": json.RawMessage(taskID)})
	require.Nil(t, result.err)
	assert.JSONEq(t, `"sampled"`, gjson(t, result.result, "content", "text"))
	assert.JSONEq(t, `{"taskId":`+taskID+`}`, gjson(t, result.result, "_meta", "io.modelcontextprotocol/related-task"))
	assert.EqualValues(t, 1, sampled.Load())

	t.Run("a task the server cancels ends its handler", func(t *testing.T) {
		block := map[string]any{"task": map[string]any{}, "maxTokens": 10,
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "block"}}}}
		blocked := ask(6, "sampling/createMessage", block)
		require.Nil(t, blocked.err)
		id := json.RawMessage(gjson(t, blocked.result, "task", "taskId"))
		cancelled := ask(7, "tasks/cancel", map[string]any{"taskId": id})
		require.Nil(t, cancelled.err)
		assert.JSONEq(t, `"cancelled"`, gjson(t, cancelled.result, "status"))
		assert.ErrorIs(t, <-ended, context.Canceled)
		result := ask(8, "tasks/result", map[string]any{"taskId": id})
		assert.Contains(t, string(result.err), "cancelled")
		unknown := ask(9, "tasks/get", map[string]any{"taskId": "nope"})
		assert.Contains(t, string(unknown.err), "unknown task")

		again := ask(10, "tasks/cancel", map[string]any{"taskId": id})
		assert.JSONEq(t, fmt.Sprint(mcp.CodeInvalidParams), gjson(t, again.err, "code"), "a cancelled task is not cancelled again")
		completed := ask(11, "tasks/cancel", map[string]any{"taskId": json.RawMessage(taskID)})
		assert.JSONEq(t, fmt.Sprint(mcp.CodeInvalidParams), gjson(t, completed.err, "code"), "nor a completed one")
		still := ask(12, "tasks/get", map[string]any{"taskId": json.RawMessage(taskID)})
		assert.JSONEq(t, `"completed"`, gjson(t, still.result, "status"))
	})
}
