package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// The other direction (2025-11-25): a server may ask the client to run
// its sampling or elicitation request as a task (a "task" member in the
// params), when the client offers tasks.requests.sampling.createMessage or
// tasks.requests.elicitation.create, which it does when the handler is
// set. The client answers at once with the task, runs the handler in the
// background, and serves the server's tasks/get, tasks/result, tasks/list
// and tasks/cancel for it.

// servedTaskTTL is how long a task run for the server is kept after its
// creation, unless the server asked for less; maxServedTaskTTL bounds what
// it may ask for.
const (
	servedTaskTTL    = 5 * time.Minute
	maxServedTaskTTL = time.Hour
)

// servedPollInterval is the polling interval suggested to the server.
const servedPollInterval = 500 * time.Millisecond

// taskStore keeps the tasks run for the server.
type taskStore struct {
	mu    sync.Mutex
	byID  map[string]*servedTask
	order []string // by creation, for tasks/list
	next  uint64
}

type servedTask struct {
	id      string
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc
	done    chan struct{} // closed at a terminal status
	mu      sync.Mutex
	status  TaskStatus
	message string
	updated time.Time
	result  any
	err     *Error
}

func (t *servedTask) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
		"ttl":           t.ttl.Milliseconds(),
		"pollInterval":  servedPollInterval.Milliseconds(),
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	return w
}

func (t *servedTask) finish(status TaskStatus, result any, err *Error, message string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.Terminal() {
		return false
	}
	t.status, t.result, t.err, t.message, t.updated = status, result, err, message, time.Now()
	close(t.done)
	return true
}

// purge drops the tasks whose TTL has passed; s.mu is held.
func (s *taskStore) purge(now time.Time) {
	s.order = slices.DeleteFunc(s.order, func(id string) bool {
		t := s.byID[id]
		if now.Sub(t.created) < t.ttl {
			return false
		}
		t.cancel()
		delete(s.byID, id)
		return true
	})
}

func (s *taskStore) get(id string) *servedTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(time.Now())
	return s.byID[id]
}

// taskMember returns the "task" member of a request's params, or nil.
func taskMember(params json.RawMessage) *taskRequest {
	var p struct {
		Task *taskRequest `json:"task"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Task
}

// serveAsTask runs a server request as a task: it answers at once with
// the task, then runs serve in the background, under the connection's
// life and the task's cancellation. When the client runs MaxTasks tasks
// already (or keeps four times as many, ended ones included), the request
// is refused with CodeServerBusy.
func (d *dispatcher) serveAsTask(req *request, tr *taskRequest, serve func(ctx context.Context) (any, *Error)) {
	c := d.c
	s := &c.served
	now := time.Now()
	ttl := servedTaskTTL
	if tr.TTL != nil && *tr.TTL > 0 {
		ttl = min(time.Duration(*tr.TTL)*time.Millisecond, maxServedTaskTTL)
	}
	s.mu.Lock()
	s.purge(now)
	live := 0
	for _, id := range s.order {
		if !s.byID[id].statusNow().Terminal() {
			live++
		}
	}
	if live >= c.maxTasks() || len(s.order) >= 4*c.maxTasks() {
		s.mu.Unlock()
		d.reply(req.ID, nil, &Error{Code: CodeServerBusy, Message: fmt.Sprintf("this client runs %d tasks already", len(s.order))})
		return
	}
	s.next++
	ctx, cancel := context.WithCancel(c.life)
	t := &servedTask{id: "mcplug-task-" + strconv.FormatUint(s.next, 10), created: now, updated: now, ttl: ttl,
		cancel: cancel, done: make(chan struct{}), status: TaskWorking}
	if s.byID == nil {
		s.byID = map[string]*servedTask{}
	}
	s.byID[t.id] = t
	s.order = append(s.order, t.id)
	s.mu.Unlock()

	d.reply(req.ID, map[string]any{"task": t.wire()}, nil)
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer cancel()
		hctx, end := ctx, func(Outcome) {}
		if o := c.opts.Observer; o != nil {
			op := c.operation(req.Method, 0, req.Params)
			op.RequestID, op.TaskID = req.peerID(), t.id
			hctx, end = o.StartHandler(ctx, op, jsonrpc.StringMeta(req.Params))
		}
		result, rpcErr := serve(hctx)
		if rpcErr != nil {
			end(Outcome{Err: rpcErr})
		} else {
			end(Outcome{Err: ctx.Err()})
		}
		switch {
		case ctx.Err() != nil && c.life.Err() == nil:
			t.finish(TaskCancelled, nil, &Error{Code: CodeInternalError, Message: "the task was cancelled"}, "cancelled")
		case rpcErr != nil:
			t.finish(TaskFailed, nil, rpcErr, rpcErr.Message)
		default:
			t.finish(TaskCompleted, result, nil, "")
		}
		if c.life.Err() == nil {
			nctx, ncancel := context.WithTimeout(c.life, time.Second)
			c.Notify(nctx, "notifications/tasks/status", t.wire())
			ncancel()
		}
	}()
}

func (t *servedTask) statusNow() TaskStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// serveTaskRequest serves the server's tasks/get, tasks/result,
// tasks/list and tasks/cancel for the tasks the client runs for it.
// tasks/result waits for the task, under ctx.
func (d *dispatcher) serveTaskRequest(ctx context.Context, req *request) (any, *Error) {
	c := d.c
	var p struct {
		TaskID string `json:"taskId"`
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(req.Params, &p)
	if req.Method == "tasks/list" {
		return c.served.list(p.Cursor)
	}
	t := c.served.get(p.TaskID)
	if t == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "unknown task: " + p.TaskID}
	}
	switch req.Method {
	case "tasks/get":
		return t.wire(), nil
	case "tasks/cancel":
		// A task that has ended stays as it ended (the spec's MUST: -32602
		// for a terminal task), a cancelled one included.
		if !t.finish(TaskCancelled, nil, &Error{Code: CodeInternalError, Message: "the task was cancelled"}, "cancelled at the server's request") {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("task %s has ended (%s)", t.id, t.statusNow())}
		}
		t.cancel()
		return t.wire(), nil
	}
	select { // tasks/result
	case <-t.done:
	case <-ctx.Done():
		return nil, &Error{Code: CodeInternalError, Message: "the connection ended"}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	res, err := withRelatedTask(t.result, t.id)
	if err != nil {
		return nil, &Error{Code: CodeInternalError, Message: err.Error()}
	}
	return res, nil
}

// servedPage is the size of a tasks/list page.
const servedPage = 50

func (s *taskStore) list(cursor string) (any, *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(time.Now())
	start := 0
	if cursor != "" {
		i := slices.Index(s.order, cursor)
		if i < 0 {
			return nil, &Error{Code: CodeInvalidParams, Message: "unknown cursor"}
		}
		start = i
	}
	end := min(start+servedPage, len(s.order))
	tasks := []any{}
	for _, id := range s.order[start:end] {
		tasks = append(tasks, s.byID[id].wire())
	}
	res := map[string]any{"tasks": tasks}
	if end < len(s.order) {
		res["nextCursor"] = s.order[end]
	}
	return res, nil
}

// withRelatedTask adds _meta io.modelcontextprotocol/related-task to a
// result, as the answer to tasks/result carries it.
func withRelatedTask(result any, id string) (json.RawMessage, error) {
	return withMeta(result, map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": id}})
}
