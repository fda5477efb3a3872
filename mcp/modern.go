package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// modern is the era of per-request metadata (2026-07-28 and after): no
// session, what the client is and may do in every request's _meta,
// subscriptions through subscriptions/listen, and tasks and input
// requests (MRTR) that the server chooses.
type modern struct {
	version string
	fields  []byte // the _meta members, encoded once, without the braces
}

var _ era = (*modern)(nil)

func (m *modern) requestMeta() []byte { return m.fields }

// ping: a modern server has no ping; server/discover answers as well.
func (*modern) ping(ctx context.Context, c *Connection) error {
	return c.callObject(ctx, "server/discover", nil, nil)
}

// setLoggingLevel: logging/setLevel is gone; the level travels in the
// _meta of every later request, and the server sends log messages only
// for requests that carry it.
func (m *modern) setLoggingLevel(ctx context.Context, c *Connection, level LoggingLevel) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.level.Store(&level)
	c.meta.Store(c.buildMeta(m.version, level))
	return nil
}

// subscribe: the URI joins (or leaves) the filter of the Connection's
// subscriptions/listen, which is opened again with it.
func (*modern) subscribe(ctx context.Context, c *Connection, params *SubscribeParams, on bool) error {
	return c.subscribe(ctx, params, on)
}

// rootsChanged: a modern server asks for the roots with each request
// that needs them.
func (*modern) rootsChanged(context.Context, *Connection) error { return nil }

func (*modern) listen(c *Connection) { c.startListening() }

// keepTools keeps a listing for as long as its cache hints allow.
func (*modern) keepTools(c *Connection, tools []Tool, gen uint64, ttl time.Duration) {
	if ttl > 0 {
		c.toolCache.SetFor(tools, gen, ttl)
	}
}

// mirrorsToolHeaders: over Streamable HTTP, a tool's x-mcp-header
// parameters go in Mcp-Param headers too.
func (*modern) mirrorsToolHeaders(c *Connection) bool { return c.overHTTP() }

// roundTrip sends a request and returns its raw, complete result: an
// InputRequiredResult is answered and the request sent again, within
// budget (made when the server first asks for input if nil: the budget of
// one call, shared with its task). Each round is a new
// request, bounded by ctx like the first. A request the stream broke is
// sent again once, and one refused for its version once after agreeing
// on another.
func (*modern) roundTrip(ctx context.Context, c *Connection, method string, params any, budget *inputBudget) ([]byte, *inputBudget, error) {
	raw, err := c.roundTripOnce(ctx, method, params)
	if err != nil && ctx.Err() == nil && streamBroken(err) {
		raw, err = c.roundTripOnce(ctx, method, params) // a new request, as the spec asks
	}
	if err == nil {
		// the common case: nothing to retry
	} else if supported, ok := unsupportedVersion(err); ok && ctx.Err() == nil && method != "server/discover" {
		// The server refused the version agreed on (a server that answers
		// server/discover but serves the rest in another era): agree on
		// another, once, and send the request again.
		if rerr := c.renegotiate(ctx, supported); rerr != nil {
			return nil, budget, rerr
		}
		raw, err = c.roundTripOnce(ctx, method, params)
	}
	for err == nil && isInputRequired(raw) {
		if budget == nil {
			budget = &inputBudget{}
		}
		var ir inputRequired
		if err := json.Unmarshal(raw, &ir); err != nil {
			return nil, budget, wrap(method, &badResult{err})
		}
		if len(ir.InputRequests) > c.maxServerRequests() {
			return nil, budget, wrap(method, fmt.Errorf("the server asks for %d inputs at once, more than %d", len(ir.InputRequests), c.maxServerRequests()))
		}
		if berr := budget.spend(1, len(ir.InputRequests)); berr != nil {
			return nil, budget, wrap(method, berr)
		}
		responses, ierr := c.answerInputs(ctx, ir.InputRequests)
		if ierr != nil {
			return nil, budget, wrap(method, ierr)
		}
		if params, ierr = withInput(params, responses, ir.RequestState); ierr != nil {
			return nil, budget, wrap(method, ierr)
		}
		raw, err = c.roundTripOnce(ctx, method, params) // the loop's err: a failed retry ends it with its error
	}
	return raw, budget, err
}

// needsTask: the server decides.
func (*modern) needsTask(context.Context, *Connection, string) bool { return false }

// taskCall: a call is a call; the server decides whether it becomes a task.
func (*modern) taskCall(_ context.Context, _ *Connection, name string, arguments []byte) (any, error) {
	return jsonrpc.ToolCall{Name: name, Arguments: arguments}, nil
}

// callResult follows the task the server made of a call.
func (*modern) callResult(ctx context.Context, c *Connection, raw []byte, _ bool, progress func(Progress), budget *inputBudget) ([]byte, error) {
	if c.opts.DisableTasks {
		return raw, nil
	}
	raw, _, err := c.followIfTask(ctx, raw, progress, budget, false)
	return raw, err
}

// unaskedTask: an empty result is a result (callResult followed any task).
func (*modern) unaskedTask(_ context.Context, _ *Connection, _ []byte, res *CallToolResult, _ func(Progress), _ *inputBudget) (*CallToolResult, error) {
	return res, nil
}

// handleShapes: only resultType "task" makes a handle.
func (*modern) handleShapes() bool { return false }

// inputByResult: a task's input requests come in its status, answered
// with tasks/update.
func (*modern) inputByResult() bool { return false }

func (m *modern) tasks(context.Context, *Connection) ([]*Task, error) {
	return nil, fmt.Errorf("mcp: tasks/list: the tasks extension of %s has no task list", m.version)
}

// taskResult is an ended task's result, which its status carries.
func (*modern) taskResult(_ context.Context, t *Task) ([]byte, error) {
	switch t.Status {
	case TaskCompleted:
		if len(t.Result) == 0 {
			return nil, wrap("tasks/get", fmt.Errorf("%w: a completed task without a result", ErrBadResult))
		}
		return t.Result, nil
	case TaskFailed:
		if t.Err == nil {
			return nil, wrap("tasks/get", fmt.Errorf("%w: a failed task without an error", ErrBadResult))
		}
		return nil, t.Err
	default:
		return nil, fmt.Errorf("mcp: task %s: %w", t.ID, ErrTaskCancelled)
	}
}

// servedTask: a modern server's requests come as input requests, never
// as tasks.
func (*modern) servedTask(*Connection, *request) *taskRequest { return nil }

// elicitationIDs: 2026-07-28 dropped elicitationId.
func (*modern) elicitationIDs() bool { return false }
