package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// pickRequest is an elicitation input request of a modern task.
func pickRequest(message string) map[string]any {
	return map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": message,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"pick": map[string]any{"type": "string"}}}}}
}

func picking(ctx context.Context, c *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"pick": "a"}}, nil
}

func TestAFailedInputCancelsItsTask(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(true)
	f.script = []map[string]any{f.task("input_required", map[string]any{"inputRequests": map[string]any{"pick": pickRequest("Which one?")}})}
	c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet,
		ElicitForm: func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("nobody at the keyboard")
		}})
	_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
	var te *mcp.TaskError
	require.ErrorAs(t, err, &te, "the caller learns which task")
	assert.Equal(t, "t1", te.TaskID)
	var ie *mcp.InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "pick", ie.Key)
	assert.ErrorContains(t, err, "nobody at the keyboard")
	select {
	case id := <-f.cancelled:
		assert.Equal(t, "t1", id, "the task is not left waiting for input")
	case <-time.After(10 * time.Second):
		t.Fatal("no tasks/cancel")
	}
}

func TestTaskInputIsBoundedPerCall(t *testing.T) {
	parallel(t)
	t.Run("2026-07-28: a task asking for new input at every poll", func(t *testing.T) {
		noLeaks(t)
		f := newTaskFake(true)
		var polls atomic.Int32
		srv := f.server()
		srv.Handlers["tasks/get"] = func(s *mcptest.Session, m *mcptest.Message) {
			n := polls.Add(1)
			inputs := map[string]any{}
			for i := range 10 {
				inputs[fmt.Sprintf("k%d-%d", n, i)] = pickRequest("again?")
			}
			s.Reply(m.ID, withMember(f.task("input_required", map[string]any{"inputRequests": inputs}), "resultType", "complete"))
		}
		var asked atomic.Int32
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, ElicitForm: func(ctx context.Context, c *mcp.Connection, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return picking(ctx, c, r)
		}})
		_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "slow", nil)
		require.ErrorIs(t, err, mcp.ErrInputRounds)
		var te *mcp.TaskError
		require.ErrorAs(t, err, &te)
		assert.EqualValues(t, 60, asked.Load(), "6 rounds of 10 answers; the 7th would pass 64")
		assert.Equal(t, "t1", <-f.cancelled)
	})
	t.Run("2026-07-28: the rounds of the call and of its task share one bound", func(t *testing.T) {
		noLeaks(t)
		f := newTaskFake(true)
		var calls atomic.Int32
		srv := f.server()
		srv.Handlers["tools/call"] = func(s *mcptest.Session, m *mcptest.Message) {
			if calls.Add(1) <= 5 { // 5 rounds of multi round-trip input first
				s.Reply(m.ID, inputRequired(map[string]any{fmt.Sprint("r", calls.Load()): pickRequest("first?")}, ""))
				return
			}
			s.Reply(m.ID, withMember(f.task("working", nil), "resultType", "task"))
		}
		var polls atomic.Int32
		srv.Handlers["tasks/get"] = func(s *mcptest.Session, m *mcptest.Message) {
			n := polls.Add(1)
			s.Reply(m.ID, withMember(f.task("input_required", map[string]any{"inputRequests": map[string]any{fmt.Sprint("t", n): pickRequest("then?")}}), "resultType", "complete"))
		}
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, ElicitForm: picking})
		_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "slow", nil)
		require.ErrorIs(t, err, mcp.ErrInputRounds)
		assert.EqualValues(t, 6, calls.Load())
		assert.EqualValues(t, 4, polls.Load(), "3 task rounds after 5 of the call; the 4th status is one round too many")
	})
	t.Run("2025-11-25: requests for a task's input past the bound stop the call", func(t *testing.T) {
		noLeaks(t)
		f := newTaskFake(false)
		f.script = []map[string]any{f.task("input_required", nil)}
		refused := make(chan json.RawMessage, 1)
		srv := f.server()
		srv.OnMessage = func(m *mcptest.Message) {
			if m.Method == "" && m.Error != nil {
				select {
				case refused <- m.Error:
				default:
				}
			}
		}
		f.onResult = func(s *mcptest.Session, m *mcptest.Message) {
			// tasks/result never ends; the server asks and asks.
			go func() {
				for i := range 200 {
					params := map[string]any{"maxTokens": 5, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "more"}}},
						"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": "t1"}}}
					if s.Request(fmt.Sprint("s", i), "sampling/createMessage", params) != nil {
						return
					}
				}
			}()
		}
		var sampled atomic.Int32
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, MaxServerRequests: 256,
			Sampling: func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				sampled.Add(1)
				return &mcp.CreateMessageResult{Role: "assistant", Content: []mcp.Content{{Type: "text", Text: "ok"}}, Model: "m"}, nil
			}})
		_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "slow", nil)
		require.ErrorIs(t, err, mcp.ErrInputRounds)
		var te *mcp.TaskError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "t1", te.TaskID)
		assert.Equal(t, "t1", <-f.cancelled)
		assert.LessOrEqual(t, sampled.Load(), int32(64))
		assert.Contains(t, string(<-refused), "too many rounds")
	})
}

func TestSeveralInputsAreAnsweredAtOnce(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(true)
	done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "both"}}}
	f.script = []map[string]any{
		f.task("input_required", map[string]any{"inputRequests": map[string]any{"a": pickRequest("first"), "b": pickRequest("second")}}),
		f.task("completed", map[string]any{"result": done}),
	}
	// Each handler waits for the other: they end only if they run at once.
	var arrived atomic.Int32
	both := make(chan struct{})
	c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet, ElicitForm: func(ctx context.Context, c *mcp.Connection, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if arrived.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"pick": r.Message}}, nil
	}})
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
	require.NoError(t, err)
	assert.Equal(t, "both", res.Text())
	update := <-f.updates
	assert.JSONEq(t, `{"action":"accept","content":{"pick":"first"}}`, gjson(t, update, "inputResponses", "a"))
	assert.JSONEq(t, `{"action":"accept","content":{"pick":"second"}}`, gjson(t, update, "inputResponses", "b"))

	t.Run("and the first to fail ends the others", func(t *testing.T) {
		f := newTaskFake(true)
		f.script = []map[string]any{f.task("input_required", map[string]any{"inputRequests": map[string]any{"a": pickRequest("fails"), "b": pickRequest("waits")}})}
		c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet, ElicitForm: func(ctx context.Context, c *mcp.Connection, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if r.Message == "fails" {
				return nil, errors.New("refused")
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}})
		_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
		var ie *mcp.InputError
		require.ErrorAs(t, err, &ie)
		assert.Equal(t, "a", ie.Key, "the cause, not the input it ended")
	})
}

func TestModernTasksListenForTheirStatus(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(true)
	done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "notified"}}}
	srv := f.server()
	filters := make(chan json.RawMessage, 8)
	srv.Handlers["tools/call"] = func(s *mcptest.Session, m *mcptest.Message) {
		s.Reply(m.ID, withMember(f.task("working", map[string]any{"pollIntervalMs": 60000}), "resultType", "task"))
	}
	srv.Handlers["tasks/get"] = func(s *mcptest.Session, m *mcptest.Message) {
		s.ReplyError(m.ID, mcp.CodeInternalError, "polled: the client did not listen")
	}
	srv.Handlers["subscriptions/listen"] = func(s *mcptest.Session, m *mcptest.Message) {
		filters <- m.Params
		var p struct {
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		}
		json.Unmarshal(m.Params, &p)
		for _, id := range p.Notifications.TaskIDs {
			if id == "t1" { // the listen stays open; the status comes on it
				s.Notify("notifications/tasks", f.task("completed", map[string]any{"result": done}))
			}
		}
	}
	var statuses atomic.Int32
	c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, TaskStatus: func(c *mcp.Connection, t *mcp.Task) { statuses.Add(1) }})
	res, err := c.CallTool(ctxTimeout(t, 30*time.Second), "slow", nil)
	require.NoError(t, err)
	assert.Equal(t, "notified", res.Text())
	assert.Positive(t, statuses.Load(), "Options.TaskStatus saw it")
	assert.JSONEq(t, `["t1"]`, gjson(t, <-filters, "notifications", "taskIds"))
}

func TestInputsAtOnceAreBoundedByMaxServerRequests(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(true)
	inputs := map[string]any{}
	for i := range 6 {
		inputs[fmt.Sprint("k", i)] = pickRequest(fmt.Sprint(i))
	}
	done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}
	f.script = []map[string]any{f.task("input_required", map[string]any{"inputRequests": inputs}), f.task("completed", map[string]any{"result": done})}
	var now, most atomic.Int32
	release := make(chan struct{})
	c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet, MaxServerRequests: 2,
		ElicitForm: func(ctx context.Context, c *mcp.Connection, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			n := now.Add(1)
			defer now.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select { // held until the test has seen two at once
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return picking(ctx, c, r)
		}})
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
		out <- outcome{res, err}
	}()
	require.Eventually(t, func() bool { return now.Load() == 2 }, 10*time.Second, time.Millisecond)
	close(release)
	o := <-out
	require.NoError(t, o.err)
	assert.Equal(t, "ok", o.res.Text())
	assert.LessOrEqual(t, most.Load(), int32(2), "no more handlers at once than MaxServerRequests")
	update := <-f.updates
	for i := range 6 {
		assert.NotEqual(t, "null", gjson(t, update, "inputResponses", fmt.Sprint("k", i)))
	}
}
