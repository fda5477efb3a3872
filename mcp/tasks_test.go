package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
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
	parallel(t)
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
				ctx := mcp.WithCallOptions(ctxTimeout(t, time.Minute), mcp.CallOptions{Progress: func(p mcp.Progress) {
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
				_, err := c.CallTool(ctxTimeout(t, time.Minute), "slow", nil)
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
				require.Eventually(t, func() bool { return f.polls() >= 2 }, time.Minute, time.Millisecond, "polling")
				cancel()
				assert.ErrorIs(t, <-errc, context.Canceled)
				select {
				case id := <-f.cancelled:
					assert.Equal(t, "t1", id)
				case <-time.After(time.Minute):
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
					res, err := c.CallTool(ctxTimeout(t, time.Minute), "slow", nil)
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
				res, err := c.CallTool(ctxTimeout(t, time.Minute), "slow", nil)
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
				res, err := c.CallTool(ctxTimeout(t, time.Minute), "slow", nil) // a minute stands for never
				require.NoError(t, err)
				assert.Equal(t, "done", res.Text())
				assert.Positive(t, seen.Load())
				assert.Equal(t, len(f.script), f.polls(), "the task is asked about once per status of its script, however many notifications came")
			})
			t.Run("polls no faster than the floor", func(t *testing.T) {
				f := newTaskFake(era.modern)
				done := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
				f.script = []map[string]any{f.task("working", nil), f.task("working", nil), f.task("completed", map[string]any{"result": done})}
				f.result = done
				c := connect(t, f.server().Transport())
				_, err := c.CallTool(ctxTimeout(t, time.Minute), "slow", nil)
				require.NoError(t, err)
				f.mu.Lock()
				defer f.mu.Unlock()
				require.Len(t, f.gets, 3)
				for i := 1; i < len(f.gets); i++ {
					assert.GreaterOrEqual(t, f.gets[i].Sub(f.gets[i-1]), 100*time.Millisecond, "the server asked for 1 ms")
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

func TestACancelledTaskEndsWithErrTaskCancelled(t *testing.T) {
	parallel(t)
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

// A call that follows its task learns at once that the server went
// away, not at its next poll, which may be 10 s later: in fake time, the
// call's 5 s would end first.
func TestAServerLostEndsTheFollowOfItsTaskAtOnce(t *testing.T) {
	noLeaks(t)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newTaskFake(era.modern)
				f.script = []map[string]any{f.task("working", map[string]any{"pollIntervalMs": 60000, "pollInterval": 60000})}
				srv := f.server()
				get := srv.Handlers["tasks/get"]
				srv.Handlers["tasks/get"] = func(s *mcptest.Session, m *mcptest.Message) {
					get(s, m)
					s.Close() // gone while the call waits for its next poll
				}
				srv.Handlers["subscriptions/listen"] = func(*mcptest.Session, *mcptest.Message) {} // held open
				c := connect(t, srv.Transport())
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // half the longest poll interval
				defer cancel()
				_, err := c.CallTool(ctx, "slow", nil)
				require.ErrorIs(t, err, mcp.ErrClosed)
				assert.NotErrorIs(t, err, context.DeadlineExceeded)
			})
		})
	}
}
