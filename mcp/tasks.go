package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// Tasks: a server may answer a tools/call with a task handle and deliver
// the result later. In 2025-11-25 (experimental) the client asks for a
// task (a "task" member in the params) when the server offers
// tasks.requests.tools.call and the tool's execution.taskSupport says so;
// it polls tasks/get and fetches the result with tasks/result, which also
// carries the server's requests for input. In 2026-07-28 the extension
// io.modelcontextprotocol/tasks is declared in every request's
// capabilities, the server decides (resultType "task"), and tasks/get
// carries the result, the error, or the input requests, which the client
// answers with tasks/update.

// Bounds of task polling: the server's pollInterval is honoured within
// them; without one, defaultTaskPollInterval.
const (
	minTaskPollInterval     = 100 * time.Millisecond
	maxTaskPollInterval     = 10 * time.Second
	defaultTaskPollInterval = 500 * time.Millisecond
)

// defaultMaxTasks bounds the tasks a Connection follows at once.
const defaultMaxTasks = 16

// Task is a task of the server's, as it last reported it. Its methods ask
// the server again; a Task is not updated in place by notifications.
type Task struct {
	ID            string
	Status        TaskStatus
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// TTL is how long the server keeps the task after its creation, and
	// PollInterval the polling interval it suggests; zero when not said.
	TTL, PollInterval time.Duration
	// Result is a completed task's result and Err a failed task's error,
	// when the server gave them with the status (2026-07-28).
	Result json.RawMessage
	Err    *Error
	// InputRequests are what a 2026-07-28 task in TaskInputRequired asks
	// for, by key (see Update; Wait answers them with the Options
	// handlers). A 2025-11-25 task sends requests of its own instead.
	InputRequests map[string]InputRequest

	conn *Connection
}

// wireTask is a task as both revisions write it (ttl and pollInterval,
// or ttlMs and pollIntervalMs; the terminal payload inline or not).
type wireTask struct {
	TaskID         string                  `json:"taskId"`
	Status         TaskStatus              `json:"status"`
	StatusMessage  string                  `json:"statusMessage"`
	CreatedAt      string                  `json:"createdAt"`
	LastUpdatedAt  string                  `json:"lastUpdatedAt"`
	TTL            *float64                `json:"ttl"`
	TTLMs          *float64                `json:"ttlMs"`
	PollInterval   *float64                `json:"pollInterval"`
	PollIntervalMs *float64                `json:"pollIntervalMs"`
	Result         json.RawMessage         `json:"result"`
	Error          *wireError              `json:"error"`
	InputRequests  map[string]InputRequest `json:"inputRequests"`
}

type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// maxTaskInputs bounds the input requests of one task status.
const maxTaskInputs = 64

func (c *Connection) newTask(w *wireTask) (*Task, error) {
	if w.TaskID == "" || len(w.TaskID) > 1024 {
		return nil, fmt.Errorf("%w: a task without a valid taskId", ErrBadResult)
	}
	switch w.Status {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
	default:
		return nil, fmt.Errorf("%w: task status %q", ErrBadResult, w.Status)
	}
	if len(w.InputRequests) > maxTaskInputs {
		return nil, fmt.Errorf("%w: a task asks for %d inputs at once, more than %d", ErrBadResult, len(w.InputRequests), maxTaskInputs)
	}
	t := &Task{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage, Result: w.Result, InputRequests: w.InputRequests, conn: c}
	t.CreatedAt, _ = time.Parse(time.RFC3339, w.CreatedAt)
	t.LastUpdatedAt, _ = time.Parse(time.RFC3339, w.LastUpdatedAt)
	t.TTL = millis(w.TTLMs, w.TTL)
	t.PollInterval = millis(w.PollIntervalMs, w.PollInterval)
	if w.Error != nil {
		t.Err = &Error{Code: w.Error.Code, Message: w.Error.Message, Data: w.Error.Data}
	}
	return t, nil
}

func millis(vs ...*float64) time.Duration {
	for _, v := range vs {
		if v != nil && *v > 0 && *v < float64(1<<53) {
			return time.Duration(*v * float64(time.Millisecond))
		}
	}
	return 0
}

// taskHandle reads a result that is a task handle instead of the method's
// own result: resultType "task" (2026-07-28), or a "task" member and no
// "content" (2025-11-25). ok is false for any other result.
func (c *Connection) taskHandle(raw []byte) (t *Task, ok bool, err error) {
	var modern, legacy, content bool
	var inner []byte
	onlyResultType := !c.era().handleShapes() // the 2025-11-25 shape is not looked for
	ndjson.Members(raw, func(k, v []byte) bool {
		switch string(k) {
		case "resultType":
			modern = string(v) == `"task"`
			if onlyResultType {
				return false // the rest of a large result is not walked
			}
		case "task":
			legacy, inner = len(v) > 0 && v[0] == '{', v
		case "content":
			content = true
		}
		return true
	})
	switch {
	case modern:
		inner = raw
	case legacy && !content:
	default:
		return nil, false, nil
	}
	var w wireTask
	if err := json.Unmarshal(inner, &w); err != nil {
		return nil, true, fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	t, err = c.newTask(&w)
	return t, true, err
}

// taskWatch keeps the tasks followed: it wakes a follower when a status
// notification for its task arrives, and holds the input budget of the
// call that follows it.
type taskWatch struct {
	mu      sync.Mutex
	byID    map[string]*followed
	slots   chan struct{} // one per task followed
	maxOnce sync.Once
}

// followed is a task being followed to its end.
type followed struct {
	notified chan *wireTask // the latest notified status
	budget   *inputBudget   // the input the call may still ask for
	// stop ends the follower's wait, with the reason, when the server's
	// requests for the task's input go past the budget (2025-11-25).
	stop context.CancelCauseFunc
}

func (c *Connection) maxTasks() int {
	if c.opts.MaxTasks > 0 {
		return c.opts.MaxTasks
	}
	return defaultMaxTasks
}

func (w *taskWatch) init(max int) {
	w.maxOnce.Do(func() { w.slots = make(chan struct{}, max) })
}

// follow registers a follower of task id; its channel gets the latest
// notified status (older ones are dropped: a flood costs nothing).
func (w *taskWatch) follow(id string, budget *inputBudget, stop context.CancelCauseFunc) *followed {
	f := &followed{notified: make(chan *wireTask, 1), budget: budget, stop: stop}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID == nil {
		w.byID = map[string]*followed{}
	}
	w.byID[id] = f
	return f
}

func (w *taskWatch) unfollow(id string, f *followed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID[id] == f {
		delete(w.byID, id)
	}
}

// following reports whether a call follows a task now.
func (w *taskWatch) following() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byID) > 0
}

// ids are the tasks followed now.
func (w *taskWatch) ids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.byID))
}

func (w *taskWatch) notify(t *wireTask) {
	w.mu.Lock()
	f := w.byID[t.TaskID]
	w.mu.Unlock()
	if f == nil {
		return
	}
	select {
	case <-f.notified: // drop the older one
	default:
	}
	select {
	case f.notified <- t:
	default:
	}
}

// spendFor counts a 2025-11-25 server request for input (sampling,
// elicitation) against the budget of the call that follows its related
// task, if a call follows it. Past the budget the call stops, its task is
// cancelled, and the request gets the error returned.
func (w *taskWatch) spendFor(params json.RawMessage) *Error {
	var p struct {
		Meta struct {
			Related struct {
				TaskID string `json:"taskId"`
			} `json:"io.modelcontextprotocol/related-task"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta.Related.TaskID == "" {
		return nil
	}
	w.mu.Lock()
	f := w.byID[p.Meta.Related.TaskID]
	w.mu.Unlock()
	if f == nil {
		return nil
	}
	if err := f.budget.spend(0, 1); err != nil {
		f.stop(err)
		return &Error{Code: CodeInvalidRequest, Message: err.Error()}
	}
	return nil
}

// TaskError is the error of a call whose task did not reach its end as
// the call followed it: its input could not be answered (an *InputError,
// or ErrInputRounds past the budget of one call; the task is then
// cancelled on the server), or asking about it failed. TaskID names the
// task, for GetTask or CancelTask. Errors.Is and As see Err.
type TaskError struct {
	TaskID string
	Err    error
}

func (e *TaskError) Error() string { return "mcp: task " + e.TaskID + ": " + e.Err.Error() }

func (e *TaskError) Unwrap() error { return e.Err }

// onTaskStatus serves notifications/tasks/status (2025-11-25) and
// notifications/tasks (2026-07-28).
func (c *Connection) onTaskStatus(params json.RawMessage) {
	var w wireTask
	if json.Unmarshal(params, &w) != nil {
		return
	}
	t, err := c.newTask(&w)
	if err != nil {
		return
	}
	if f := c.opts.TaskStatus; f != nil {
		f(c, t) // first: the call that follows the task may return on this status
	}
	c.tasks.notify(&w)
}

// pollInterval is how long to wait before asking about t again.
func (t *Task) pollInterval() time.Duration {
	d := t.PollInterval
	if d == 0 {
		d = defaultTaskPollInterval
	}
	return min(max(d, minTaskPollInterval), maxTaskPollInterval)
}

// followTask follows the task t of a tools/call to its end and returns the
// call's raw result. Status messages go to the call's progress callback;
// input the task asks for is answered with the Options handlers, within
// budget (nil: the follower's own). When ctx ends first, or the input
// cannot be answered, the task is cancelled on the server.
func (c *Connection) followTask(ctx context.Context, t *Task, progress func(Progress), budget *inputBudget) ([]byte, error) {
	c.tasks.init(c.maxTasks())
	select {
	case c.tasks.slots <- struct{}{}:
	case <-ctx.Done():
		c.cancelTaskQuietly(t.ID)
		return nil, ctx.Err()
	}
	defer func() { <-c.tasks.slots }()
	if budget == nil {
		budget = &inputBudget{}
	}
	parent := ctx
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	watch := c.tasks.follow(t.ID, budget, stop)
	c.era().listen(c) // a modern server's status notifications for it
	defer func() {
		c.tasks.unfollow(t.ID, watch)
		c.era().listen(c)
	}()
	// failed ends the follow with err. The task is cancelled on the server
	// when the call gives up on it: its ctx ended (ctx's error is
	// returned), or its input cannot be answered (giveUp, or spendFor
	// stopped it).
	failed := func(err error, giveUp bool) ([]byte, error) {
		switch {
		case parent.Err() != nil:
			c.cancelTaskQuietly(t.ID)
			return nil, parent.Err()
		case ctx.Err() != nil:
			err, giveUp = context.Cause(ctx), true
		}
		if giveUp {
			c.cancelTaskQuietly(t.ID)
		}
		return nil, &TaskError{TaskID: t.ID, Err: err}
	}
	answered := map[string]bool{}
	lastMessage := ""
	for {
		if progress != nil && t.StatusMessage != "" && t.StatusMessage != lastMessage {
			lastMessage = t.StatusMessage
			progress(Progress{Message: t.StatusMessage})
		}
		if t.Status.Terminal() || (t.Status == TaskInputRequired && c.era().inputByResult()) {
			raw, err := t.result(ctx)
			if err != nil && ctx.Err() != nil {
				return failed(err, false)
			}
			return raw, err
		}
		if t.Status == TaskInputRequired {
			if err := t.answer(ctx, answered, budget); err != nil {
				return failed(err, true)
			}
		}
		timer := time.NewTimer(t.pollInterval())
		select {
		case <-timer.C:
			next, err := c.GetTask(ctx, t.ID)
			if err != nil {
				return failed(err, false)
			}
			t = next
		case w := <-watch.notified:
			timer.Stop()
			if next, err := c.newTask(w); err == nil {
				t = next
			}
		case <-ctx.Done():
			timer.Stop()
			return failed(ctx.Err(), false)
		case <-c.readOver: // the server went away: no poll will be answered
			timer.Stop()
			return failed(c.Err(), false)
		}
	}
}

// cancelTaskQuietly asks the server to cancel a task the caller gave up
// on, bounded by a second, ignoring the answer.
func (c *Connection) cancelTaskQuietly(id string) {
	ctx, cancel := context.WithTimeout(c.life(), time.Second)
	defer cancel()
	if _, err := c.CancelTask(ctx, id); err != nil {
		c.logger.Debug("mcp: could not cancel an abandoned task", "task", id, "err", err)
	}
}

// GetTask asks the server for the task's status (tasks/get).
func (c *Connection) GetTask(ctx context.Context, id string) (*Task, error) {
	raw, err := c.roundTrip(ctx, "tasks/get", taskParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, wrap("tasks/get", &badResult{err})
	}
	t, err := c.newTask(&w)
	if err != nil {
		return nil, wrap("tasks/get", err)
	}
	return t, nil
}

// CancelTask asks the server to cancel the task (tasks/cancel), which it
// may still finish, and returns it as a 2025-11-25 server reports it (nil
// from a 2026-07-28 server, which only acknowledges). An ended task is
// refused with an *Error.
func (c *Connection) CancelTask(ctx context.Context, id string) (*Task, error) {
	raw, err := c.roundTrip(ctx, "tasks/cancel", taskParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	if err := requireObject(raw); err != nil {
		return nil, wrap("tasks/cancel", err)
	}
	var w wireTask
	if json.Unmarshal(raw, &w) != nil || w.TaskID == "" {
		return nil, nil // an acknowledgement
	}
	t, err := c.newTask(&w)
	if err != nil {
		return nil, wrap("tasks/cancel", err)
	}
	return t, nil
}

// Tasks returns the server's tasks, every page of tasks/list (2025-11-25
// servers that offer tasks.list; the 2026-07-28 extension has no list).
func (c *Connection) Tasks(ctx context.Context) ([]*Task, error) {
	return c.era().tasks(ctx, c)
}

// UpdateTask gives a 2026-07-28 task the input it asked for (tasks/update):
// responses by the keys of its input requests.
func (c *Connection) UpdateTask(ctx context.Context, id string, responses map[string]any) error {
	return c.callObject(ctx, "tasks/update", taskUpdateParams{TaskID: id, InputResponses: responses}, nil)
}

// StartToolTask calls a tool as a task and returns the task without
// waiting for it (see Task.Wait). A 2025-11-25 server is asked for a task
// only when it offers tool tasks and the tool's execution.taskSupport
// allows one (else ErrNoTaskSupport); a 2026-07-28 server decides, and a
// tool it answers at once gives a completed Task with no ID.
func (c *Connection) StartToolTask(ctx context.Context, name string, args any) (*Task, error) {
	arguments, err := encodeArguments(nil, args)
	if err != nil {
		return nil, err
	}
	if c.opts.DisableTasks {
		return nil, fmt.Errorf("mcp: tools/call %s: %w: tasks are turned off (Options.DisableTasks)", name, ErrNoTaskSupport)
	}
	p, err := c.era().taskCall(ctx, c, name, arguments)
	if err != nil {
		return nil, err
	}
	raw, err := c.roundTrip(ctx, "tools/call", p)
	if err != nil {
		return nil, err
	}
	t, ok, err := c.taskHandle(raw)
	if err != nil {
		return nil, wrap("tools/call", err)
	}
	if !ok {
		return &Task{Status: TaskCompleted, Result: raw, conn: c}, nil
	}
	return t, nil
}

// Wait follows the task to its end, as CallTool does, and returns its
// result: it polls at the server's interval, held within 100 ms and 10 s
// (500 ms when the server gives none), answers the task's input requests,
// and reports status messages to the ctx's progress callback. When ctx
// ends first, the task is cancelled on the server.
func (t *Task) Wait(ctx context.Context) (*CallToolResult, error) {
	if t.ID == "" {
		return decodeToolResult(t.Result)
	}
	var progress func(Progress)
	if o := callOptionsFrom(ctx); o != nil {
		progress = o.Progress
	}
	raw, err := t.conn.followTask(ctx, t, progress, nil)
	if err != nil {
		return nil, err
	}
	return decodeToolResult(raw)
}

// Get asks the server for the task's status now (GetTask on the task's
// Connection); a task started through a Manager is asked of its server.
func (t *Task) Get(ctx context.Context) (*Task, error) {
	if t.ID == "" {
		return t, nil // answered at once: there is nothing to ask about
	}
	return t.conn.GetTask(ctx, t.ID)
}

// Update gives a 2026-07-28 task the input it asked for (UpdateTask on
// the task's Connection), by the keys of its InputRequests.
func (t *Task) Update(ctx context.Context, responses map[string]any) error {
	return t.conn.UpdateTask(ctx, t.ID, responses)
}

// Cancel asks the server to cancel the task (CancelTask on the task's
// Connection).
func (t *Task) Cancel(ctx context.Context) (*Task, error) {
	return t.conn.CancelTask(ctx, t.ID)
}

// keepProgress returns ctx whose call options carry a progress token that
// the Connection keeps until stop is called: a 2025-11-25 task reports
// progress with the token of the call that made it, after that call has
// returned.
func (c *Connection) keepProgress(ctx context.Context) (context.Context, func()) {
	o := callOptionsFrom(ctx)
	if o == nil || o.Progress == nil {
		return ctx, func() {}
	}
	tok := c.progress.add(&progressWatch{fn: o.Progress})
	kept := *o
	kept.Progress, kept.ResetOnProgress = nil, false
	kept.Meta = maps.Clone(o.Meta)
	if kept.Meta == nil {
		kept.Meta = map[string]any{}
	}
	kept.Meta["progressToken"] = tok
	return WithCallOptions(ctx, kept), func() { c.progress.remove(tok) }
}

// result fetches the raw result of a task: inline when the server gave it
// (2026-07-28), else with tasks/result, which waits for the task to end
// and carries the server's requests for input meanwhile.
func (t *Task) result(ctx context.Context) ([]byte, error) {
	return t.conn.era().taskResult(ctx, t)
}

// answer serves the input requests of a 2026-07-28 task not answered yet,
// with the same handlers as any server request, within budget, and sends
// the answers with tasks/update.
func (t *Task) answer(ctx context.Context, answered map[string]bool, budget *inputBudget) error {
	c := t.conn
	pending := map[string]InputRequest{}
	for k, r := range t.InputRequests {
		if !answered[k] {
			pending[k] = r
		}
	}
	if len(pending) == 0 {
		return nil
	}
	if err := budget.spend(1, len(pending)); err != nil {
		return wrap("tasks/update", err)
	}
	responses, err := c.answerInputs(ctx, pending)
	if err != nil {
		return wrap("tasks/update", err)
	}
	if err := c.UpdateTask(ctx, t.ID, responses); err != nil {
		return err
	}
	for k := range pending {
		answered[k] = true
	}
	return nil
}

// decodeToolResult decodes and checks a raw CallToolResult.
func decodeToolResult(raw []byte) (*CallToolResult, error) {
	if err := requireObject(raw); err != nil {
		return nil, wrap("tools/call", err)
	}
	res, err := decodeCallToolResult(raw)
	if err != nil {
		return nil, wrap("tools/call", err)
	}
	if err := checkContent(res.Content); err != nil {
		return nil, wrap("tools/call", err)
	}
	return res, nil
}

// serverToolTasks reports whether a 2025-11-25 server offers task-augmented
// tool calls (tasks.requests.tools.call); read once, at the handshake.
func (c *Connection) serverToolTasks() bool { return c.toolTasks.Load() }

// TaskSupport is the tool's execution.taskSupport (2025-11-25): "" when
// absent, else "forbidden", "optional" or "required".
func (t *Tool) TaskSupport() string { return toolTaskSupport(t) }

// toolTaskSupport is a tool's execution.taskSupport as last listed: "",
// "forbidden", "optional" or "required".
func toolTaskSupport(t *Tool) string {
	if len(t.Execution) == 0 {
		return ""
	}
	var e struct {
		TaskSupport string `json:"taskSupport"`
	}
	json.Unmarshal(t.Execution, &e)
	return strings.ToLower(e.TaskSupport)
}

// followIfTask follows the task that raw, a tools/call result, is a handle
// of, and returns the task's raw result; raw itself when it is no handle.
// unasked is a 2025-11-25 handle for a call that asked for no task, an
// ErrBadResult with tasks turned off.
func (c *Connection) followIfTask(ctx context.Context, raw []byte, progress func(Progress), budget *inputBudget, unasked bool) ([]byte, bool, error) {
	t, isTask, err := c.taskHandle(raw)
	switch {
	case err != nil:
		return nil, false, wrap("tools/call", err)
	case !isTask:
		return raw, false, nil
	case unasked && c.opts.DisableTasks:
		return nil, false, wrap("tools/call", fmt.Errorf("%w: a task handle, with tasks turned off", ErrBadResult))
	case unasked:
		c.logger.Debug("mcp: the server answered a call with a task it was not asked for; following it", "task", t.ID)
	}
	if progress == nil {
		if o := callOptionsFrom(ctx); o != nil {
			progress = o.Progress
		}
	}
	raw, err = c.followTask(ctx, t, progress, budget)
	return raw, true, err
}
