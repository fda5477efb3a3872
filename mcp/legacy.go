package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// legacy is the era of the initialize handshake (2025-11-25 and before):
// a session the server keeps, methods for what the modern revision moved
// into _meta, and tasks asked for by the client.
type legacy struct{}

var _ era = legacy{}

func (legacy) requestMeta() []byte { return nil }

func (legacy) ping(ctx context.Context, c *Connection) error {
	return c.callObject(ctx, "ping", nil, nil)
}

func (legacy) setLoggingLevel(ctx context.Context, c *Connection, level LoggingLevel) error {
	return c.callObject(ctx, "logging/setLevel", map[string]LoggingLevel{"level": level}, nil)
}

func (legacy) subscribe(ctx context.Context, c *Connection, params *SubscribeParams, on bool) error {
	if on {
		return c.callObject(ctx, "resources/subscribe", params, nil)
	}
	return c.callObject(ctx, "resources/unsubscribe", params, nil)
}

func (legacy) rootsChanged(ctx context.Context, c *Connection) error {
	return c.Notify(ctx, "notifications/roots/list_changed", nil)
}

// listen: the server sends its notifications unasked.
func (legacy) listen(*Connection) {}

// keepTools keeps a listing while the server promises to say when it
// changes.
func (legacy) keepTools(c *Connection, tools []Tool, gen uint64, _ time.Duration) {
	if caps := c.InitializeResult().Capabilities.Tools; caps != nil && caps.ListChanged {
		c.toolCache.Set(tools, gen)
	}
}

// mirrorsToolHeaders: the 2025-11-25 transport has no Mcp-Param headers.
func (legacy) mirrorsToolHeaders(*Connection) bool { return false }

func (legacy) roundTrip(ctx context.Context, c *Connection, method string, params any, budget *inputBudget) ([]byte, *inputBudget, error) {
	raw, err := c.roundTripOnce(ctx, method, params)
	return raw, budget, err
}

// needsTask: a tool that requires a task is called as one.
func (legacy) needsTask(ctx context.Context, c *Connection, name string) bool {
	if c.opts.DisableTasks || !c.serverToolTasks() {
		return false
	}
	return c.taskSupportOf(ctx, name) == "required"
}

// taskCall is the params of a call that asks for a task: the server must
// offer tasks for tool calls and the tool must allow one.
func (legacy) taskCall(ctx context.Context, c *Connection, name string, arguments []byte) (any, error) {
	if !c.serverToolTasks() {
		return nil, fmt.Errorf("mcp: tools/call %s: %w: the server offers no tasks for tool calls", name, ErrNoTaskSupport)
	}
	// A tool whose taskSupport is absent or forbidden must not be called
	// as a task.
	if support := c.taskSupportOf(ctx, name); support != "optional" && support != "required" {
		if support == "" {
			support = "absent"
		}
		return nil, fmt.Errorf("mcp: tools/call %s: %w: its execution.taskSupport is %s", name, ErrNoTaskSupport, support)
	}
	return taskCallParams{Name: name, Arguments: arguments, Augmentation: taskRequest{TTL: taskTTL(ctx)}}, nil
}

// callResult follows the task a call asked for.
func (legacy) callResult(ctx context.Context, c *Connection, raw []byte, asked bool, progress func(Progress), budget *inputBudget) ([]byte, error) {
	if !asked {
		return raw, nil
	}
	raw, _, err := c.followIfTask(ctx, raw, progress, budget, false)
	return raw, err
}

// unaskedTask follows a task handle that answers a call which asked for
// no task, rather than lose the work; res is the call's result as decoded,
// empty.
func (legacy) unaskedTask(ctx context.Context, c *Connection, raw []byte, res *CallToolResult, progress func(Progress), budget *inputBudget) (*CallToolResult, error) {
	followed, isTask, err := c.followIfTask(ctx, raw, progress, budget, true)
	if err != nil || !isTask {
		return res, err
	}
	return decodeToolResult(followed)
}

// handleShapes: a "task" member and no "content" is a handle too.
func (legacy) handleShapes() bool { return true }

// inputByResult: a task's input requests come while tasks/result waits.
func (legacy) inputByResult() bool { return true }

func (legacy) tasks(ctx context.Context, c *Connection) ([]*Task, error) {
	var out []*Task
	for w, err := range seq[wireTask](ctx, c.pager(), "tasks/list", "tasks") {
		if err != nil {
			return out, err
		}
		t, err := c.newTask(&w)
		if err != nil {
			return out, wrap("tasks/list", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// taskResult fetches an ended task's result with tasks/result, which
// waits for the task to end and carries the server's requests for input
// meanwhile.
func (legacy) taskResult(ctx context.Context, t *Task) ([]byte, error) {
	c := t.conn
	if t.Status == TaskCancelled {
		// A cancelled task has no result to fetch (servers answer
		// tasks/result for one with an error of their choosing).
		return nil, fmt.Errorf("mcp: task %s: %w", t.ID, ErrTaskCancelled)
	}
	raw, err := c.roundTrip(ctx, "tasks/result", taskParams{TaskID: t.ID})
	var rpcErr *Error
	if err != nil && errors.As(err, &rpcErr) && ctx.Err() == nil {
		// The task may have been cancelled while tasks/result waited.
		if now, gerr := c.GetTask(ctx, t.ID); gerr == nil && now.Status == TaskCancelled {
			return nil, fmt.Errorf("mcp: task %s: %w (tasks/result: %w)", t.ID, ErrTaskCancelled, err)
		}
	}
	return raw, err
}

// servedTask is what a server request asks to be run as a task.
func (legacy) servedTask(c *Connection, req *request) *taskRequest {
	if c.opts.DisableTasks {
		return nil
	}
	return taskMember(req.Params)
}

// elicitationIDs: a url-mode elicitation names itself.
func (legacy) elicitationIDs() bool { return true }
