package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// taskFake is a server whose tool "slow" runs as a task. Its tasks/get
// answers follow script (the last one repeats); a 2025-11-25 server then
// answers tasks/result with result (or, when set, onResult).
type taskFake struct {
	modern   bool
	script   []map[string]any
	result   any
	onResult func(s *mcptest.Session, m *mcptest.Message)
	onCall   func(s *mcptest.Session, m *mcptest.Message, task map[string]any)

	mu        sync.Mutex
	gets      []time.Time
	calls     []json.RawMessage
	cancelled chan string
	updates   chan json.RawMessage
}

func newTaskFake(modern bool, script ...map[string]any) *taskFake {
	return &taskFake{modern: modern, script: script, cancelled: make(chan string, 8), updates: make(chan json.RawMessage, 8)}
}

// task is the wire form of task "t1" with status and extra members.
func (f *taskFake) task(status string, extra map[string]any) map[string]any {
	t := map[string]any{"taskId": "t1", "status": status, "createdAt": "2026-12-01T10:00:00Z", "lastUpdatedAt": "2026-12-01T10:00:01Z"}
	if f.modern {
		t["ttlMs"], t["pollIntervalMs"] = 60000, 1
	} else {
		t["ttl"], t["pollInterval"] = 60000, 1
	}
	for k, v := range extra {
		t[k] = v
	}
	return t
}

func (f *taskFake) server() *mcptest.Server {
	srv := &mcptest.Server{
		Tools: []json.RawMessage{mcptest.Raw(map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"},
			"execution": map[string]any{"taskSupport": "required"}})},
		Capabilities: map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
			"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
	}
	if f.modern {
		srv.Versions = mcptest.Modern
		srv.Capabilities = map[string]any{"tools": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}
	}
	srv.Handlers = map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			f.mu.Lock()
			f.calls = append(f.calls, m.Params)
			f.mu.Unlock()
			var p struct {
				Task json.RawMessage `json:"task"`
			}
			json.Unmarshal(m.Params, &p)
			seed := f.task("working", map[string]any{"statusMessage": "started"})
			if f.onCall != nil {
				f.onCall(s, m, seed)
				return
			}
			switch {
			case f.modern:
				seed["resultType"] = "task"
				s.Reply(m.ID, seed)
			case p.Task == nil:
				s.ReplyError(m.ID, mcp.CodeMethodNotFound, "slow must run as a task")
			default:
				s.Reply(m.ID, map[string]any{"task": seed})
			}
		},
		"tasks/get": func(s *mcptest.Session, m *mcptest.Message) {
			f.mu.Lock()
			f.gets = append(f.gets, time.Now())
			step := f.script[min(len(f.gets)-1, len(f.script)-1)]
			f.mu.Unlock()
			if f.modern {
				step = withMember(step, "resultType", "complete")
			}
			s.Reply(m.ID, step)
		},
		"tasks/result": func(s *mcptest.Session, m *mcptest.Message) {
			if f.onResult != nil {
				f.onResult(s, m)
				return
			}
			s.Reply(m.ID, f.result)
		},
		"tasks/cancel": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct{ TaskID string }
			json.Unmarshal(m.Params, &p)
			f.cancelled <- p.TaskID
			if f.modern {
				s.Reply(m.ID, map[string]any{"resultType": "complete"}) // an acknowledgement
				return
			}
			s.Reply(m.ID, f.task("cancelled", map[string]any{"statusMessage": "cancelled by request"}))
		},
		"tasks/update": func(s *mcptest.Session, m *mcptest.Message) {
			f.updates <- m.Params
			s.Reply(m.ID, map[string]any{"resultType": "complete"})
		},
		"tasks/list": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, map[string]any{"tasks": []any{f.task("working", nil)}})
		},
	}
	return srv
}

func withMember(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for kk, vv := range m {
		out[kk] = vv
	}
	return out
}

func (f *taskFake) polls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.gets)
}

var eras = []struct {
	name   string
	modern bool
}{{"2025-11-25", false}, {"2026-07-28", true}}

func TestToolTasks(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Run("a task that completes returns the tool's result, its status messages reported", func(t *testing.T) {
				noLeaks(t)
				f := newTaskFake(era.modern)
				done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
				f.script = []map[string]any{
					f.task("working", map[string]any{"statusMessage": "step 1"}),
					f.task("working", map[string]any{"statusMessage": "step 2"}),
					f.task("completed", map[string]any{"result": done}),
				}
				f.result = done
				c := connect(t, f.server().Transport())
				var mu sync.Mutex
				var messages []string
				ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Progress: func(p mcp.Progress) {
					mu.Lock()
					messages = append(messages, p.Message)
					mu.Unlock()
				}})
				res, err := c.CallTool(ctx, "slow", map[string]any{"n": 1})
				require.NoError(t, err)
				assert.Equal(t, "done", res.Text())
				mu.Lock()
				assert.Equal(t, []string{"started", "step 1", "step 2"}, messages)
				mu.Unlock()
				if !era.modern {
					f.mu.Lock()
					assert.Contains(t, string(f.calls[0]), `"task":{}`, "asked for a task: the tool requires one")
					f.mu.Unlock()
				}
			})
			t.Run("a task that fails returns its JSON-RPC error", func(t *testing.T) {
				noLeaks(t)
				f := newTaskFake(era.modern)
				f.script = []map[string]any{f.task("failed", map[string]any{"error": map[string]any{"code": -32050, "message": "disk full"}})}
				f.onResult = func(s *mcptest.Session, m *mcptest.Message) { s.ReplyError(m.ID, -32050, "disk full") }
				c := connect(t, f.server().Transport())
				_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
				var rpcErr *mcp.Error
				require.ErrorAs(t, err, &rpcErr)
				assert.EqualValues(t, -32050, rpcErr.Code)
			})
			t.Run("the caller's ctx ending cancels the task on the server", func(t *testing.T) {
				noLeaks(t)
				f := newTaskFake(era.modern)
				f.script = []map[string]any{f.task("working", nil)}
				c := connect(t, f.server().Transport())
				ctx, cancel := context.WithCancel(context.Background())
				errc := make(chan error, 1)
				go func() {
					_, err := c.CallTool(ctx, "slow", nil)
					errc <- err
				}()
				require.Eventually(t, func() bool { return f.polls() >= 2 }, 10*time.Second, time.Millisecond, "polling")
				cancel()
				assert.ErrorIs(t, <-errc, context.Canceled)
				select {
				case id := <-f.cancelled:
					assert.Equal(t, "t1", id)
				case <-time.After(10 * time.Second):
					t.Fatal("no tasks/cancel")
				}
			})
			t.Run("input the task asks for reaches the elicitation handler", func(t *testing.T) {
				noLeaks(t)
				f := newTaskFake(era.modern)
				ask := map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "Which one?",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"pick": map[string]any{"type": "string"}}}}}
				if era.modern {
					f.script = []map[string]any{
						f.task("input_required", map[string]any{"inputRequests": map[string]any{"pick": ask}}),
						f.task("input_required", map[string]any{"inputRequests": map[string]any{"pick": ask}}), // seen again: not asked twice
						f.task("completed", map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "picked"}}}}),
					}
				} else {
					f.script = []map[string]any{f.task("input_required", nil)}
					answers := make(chan *mcptest.Message, 1)
					srv := f.server()
					srv.OnMessage = func(m *mcptest.Message) {
						if m.Method == "" && string(m.ID) == `"e1"` {
							answers <- m
						}
					}
					f.onResult = func(s *mcptest.Session, m *mcptest.Message) {
						params := withMember(ask["params"].(map[string]any), "_meta", map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": "t1"}})
						s.Request("e1", "elicitation/create", params)
						go func() {
							a := <-answers
							var r struct{ Content map[string]any }
							json.Unmarshal(a.Result, &r)
							s.Reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(r.Content["pick"])}}})
						}()
					}
					var asked atomic.Int32
					c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, ElicitForm: func(ctx context.Context, c *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"pick": "picked"}}, nil
					}})
					res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
					require.NoError(t, err)
					assert.Equal(t, "picked", res.Text())
					assert.EqualValues(t, 1, asked.Load())
					return
				}
				var asked atomic.Int32
				c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet, ElicitForm: func(ctx context.Context, c *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"pick": "picked"}}, nil
				}})
				res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
				require.NoError(t, err)
				assert.Equal(t, "picked", res.Text())
				assert.EqualValues(t, 1, asked.Load(), "one question, however often it is shown")
				update := <-f.updates
				assert.JSONEq(t, `{"action":"accept","content":{"pick":"picked"}}`, gjson(t, update, "inputResponses", "pick"))
			})
			t.Run("a flood of status notifications costs nothing", func(t *testing.T) {
				noLeaks(t)
				f := newTaskFake(era.modern)
				done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
				f.script = []map[string]any{f.task("working", nil), f.task("completed", map[string]any{"result": done})}
				f.result = done
				method := "notifications/tasks/status"
				if era.modern {
					method = "notifications/tasks"
				}
				f.onCall = func(s *mcptest.Session, m *mcptest.Message, seed map[string]any) {
					for range 10000 {
						s.Notify(method, f.task("working", map[string]any{"statusMessage": "busy"}))
					}
					if era.modern {
						s.Reply(m.ID, withMember(seed, "resultType", "task"))
					} else {
						s.Reply(m.ID, map[string]any{"task": seed})
					}
				}
				var seen atomic.Int32
				c := connectWith(t, f.server().Transport(), &mcp.Options{Logger: quiet, TaskStatus: func(c *mcp.Connection, t *mcp.Task) { seen.Add(1) }})
				res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
				require.NoError(t, err)
				assert.Equal(t, "done", res.Text())
				assert.Positive(t, seen.Load())
			})
			t.Run("polls no faster than the floor", func(t *testing.T) {
				f := newTaskFake(era.modern)
				done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
				f.script = []map[string]any{f.task("working", nil), f.task("working", nil), f.task("completed", map[string]any{"result": done})}
				f.result = done
				c := connect(t, f.server().Transport())
				_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
				require.NoError(t, err)
				f.mu.Lock()
				defer f.mu.Unlock()
				require.Len(t, f.gets, 3)
				for i := 1; i < len(f.gets); i++ {
					assert.GreaterOrEqual(t, f.gets[i].Sub(f.gets[i-1]), mcp.MinTaskPollInterval, "the server asked for 1 ms")
				}
			})
		})
	}
}

// gjson returns the JSON of the member at path in raw.
func gjson(t *testing.T, raw json.RawMessage, path ...string) string {
	t.Helper()
	for _, k := range path {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &m))
		raw = m[k]
	}
	return string(raw)
}

func connectWith(t *testing.T, tr mcp.Transport, opts *mcp.Options) *mcp.Connection {
	t.Helper()
	c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tr, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestModernServerMayAnswerAnyCallWithATask(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(true)
	f.script = []map[string]any{f.task("completed", map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "late"}}}})}
	srv := f.server()
	srv.Tools = []json.RawMessage{mcptest.Raw(map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"}})} // no execution
	c := connect(t, srv.Transport())
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
	require.NoError(t, err)
	assert.Equal(t, "late", res.Text())

	t.Run("unless the client turned tasks off", func(t *testing.T) {
		var caps json.RawMessage
		srv.OnMessage = func(m *mcptest.Message) {
			if m.Method == "tools/call" {
				caps = json.RawMessage(gjson(t, m.Params, "_meta", "io.modelcontextprotocol/clientCapabilities"))
			}
		}
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, DisableTasks: true})
		c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
		assert.NotContains(t, string(caps), mcp.ExtensionTasks)
	})
}

func TestExplicitTaskAPI(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			noLeaks(t)
			f := newTaskFake(era.modern)
			done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
			f.script = []map[string]any{f.task("working", nil), f.task("completed", map[string]any{"result": done})}
			f.result = done
			c := connect(t, f.server().Transport())
			ctx := ctxTimeout(t, 10*time.Second)
			task, err := c.StartToolTask(ctx, "slow", nil)
			require.NoError(t, err)
			assert.Equal(t, "t1", task.ID)
			assert.Equal(t, mcp.TaskWorking, task.Status)
			assert.Equal(t, "started", task.StatusMessage)
			assert.Equal(t, time.Minute, task.TTL)
			assert.Equal(t, 2026, task.CreatedAt.Year())

			tools, err := c.Tools(ctx)
			require.NoError(t, err)
			assert.Equal(t, "required", tools[0].TaskSupport())

			got, err := c.GetTask(ctx, "t1")
			require.NoError(t, err)
			assert.Equal(t, mcp.TaskWorking, got.Status)
			if !era.modern {
				list, err := c.Tasks(ctx)
				require.NoError(t, err)
				require.Len(t, list, 1)
				assert.Equal(t, "t1", list[0].ID)
			} else {
				_, err := c.Tasks(ctx)
				assert.ErrorContains(t, err, "no task list")
				assert.Contains(t, c.InitializeResult().Capabilities.Extensions, mcp.ExtensionTasks, "the server's extensions")
			}
			res, err := task.Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text())

			cancelled, err := c.CancelTask(ctx, "t1")
			require.NoError(t, err)
			assert.Equal(t, "t1", <-f.cancelled)
			if era.modern {
				assert.Nil(t, cancelled, "an acknowledgement only")
			} else {
				require.NotNil(t, cancelled, "the task the server returns")
				assert.Equal(t, mcp.TaskCancelled, cancelled.Status)
				assert.Equal(t, "cancelled by request", cancelled.StatusMessage)
			}
		})
	}
}

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

func TestAToolOutsideTheListingIsLookedUpOnce(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(false)
	srv := f.server()
	var lists atomic.Int32
	srv.OnMessage = func(m *mcptest.Message) {
		if m.Method == "tools/list" {
			lists.Add(1)
		}
	}
	srv.Handlers["tools/call"] = func(s *mcptest.Session, m *mcptest.Message) { s.Reply(m.ID, mcptest.TextResult("plain")) }
	c := connect(t, srv.Transport())
	for range 3 {
		res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "hidden", nil)
		require.NoError(t, err)
		assert.Equal(t, "plain", res.Text())
	}
	assert.EqualValues(t, 1, lists.Load(), "one listing to learn that the tool asks for no task")
}

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

func TestACancelledTaskEndsWithErrTaskCancelled(t *testing.T) {
	noLeaks(t)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			f := newTaskFake(era.modern)
			f.script = []map[string]any{f.task("working", nil), f.task("cancelled", nil)}
			var results atomic.Int32
			f.onResult = func(s *mcptest.Session, m *mcptest.Message) {
				results.Add(1)
				s.ReplyError(m.ID, mcp.CodeInternalError, "Task t1 has no result stored")
			}
			c := connect(t, f.server().Transport())
			ctx := ctxTimeout(t, 10*time.Second)
			task, err := c.StartToolTask(ctx, "slow", nil)
			require.NoError(t, err)
			_, err = task.Wait(ctx)
			assert.ErrorIs(t, err, mcp.ErrTaskCancelled)
			assert.Zero(t, results.Load(), "no result asked of a cancelled task")
		})
	}
	t.Run("2025-11-25, cancelled while tasks/result waited", func(t *testing.T) {
		f := newTaskFake(false)
		f.script = []map[string]any{f.task("input_required", nil), f.task("cancelled", nil)}
		f.onResult = func(s *mcptest.Session, m *mcptest.Message) {
			s.ReplyError(m.ID, mcp.CodeInternalError, "Task t1 has no result stored")
		}
		c := connect(t, f.server().Transport())
		_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
		assert.ErrorIs(t, err, mcp.ErrTaskCancelled)
		var rpcErr *mcp.Error
		assert.ErrorAs(t, err, &rpcErr, "the server's error is kept")
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

func TestATaskTTLCanBeAskedFor(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(false)
	done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
	f.script = []map[string]any{f.task("completed", nil)}
	f.result = done
	c := connect(t, f.server().Transport())
	ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{TaskTTL: 90 * time.Second})
	_, err := c.StartToolTask(ctx, "slow", nil)
	require.NoError(t, err)
	_, err = c.CallTool(ctx, "slow", nil)
	require.NoError(t, err)
	_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
	require.NoError(t, err)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.calls, 3)
	assert.JSONEq(t, `{"ttl":90000}`, gjson(t, f.calls[0], "task"), "StartToolTask")
	assert.JSONEq(t, `{"ttl":90000}`, gjson(t, f.calls[1], "task"), "CallTool")
	assert.JSONEq(t, `{}`, gjson(t, f.calls[2], "task"), "none asked: the server's default")
}
