package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/formschema"
	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// maxQueued bounds the backlog of notifications waiting for the
// dispatcher. Past it, notifications are dropped and counted in a warning.
// Requests are bounded apart (Options.MaxServerRequests), and
// notifications/cancelled and notifications/progress never queue.
const maxQueued = 1024

// Defaults of the Options that bound what a server can make the client do.
const (
	defaultMaxServerRequests    = 16
	defaultMaxServerRequestSize = 4 << 20
)

// dispatcher serves the server's requests and notifications. The reader
// (a call, or the background reader) calls handle, where waiting would
// stall every response, so handle only enqueues; a goroutine serves the
// queue in order, started when a message is queued and gone once the queue
// is empty, so that an idle connection holds none.
type dispatcher struct {
	c        *Connection
	mu       sync.Mutex
	queue    []*request
	spare    []*request // the queue's last array, for the next batch
	notifs   int        // notifications in queue
	requests int        // server requests queued or being served
	dropped  int
	serving  bool          // a goroutine serves the queue
	over     bool          // reading ended: nothing more is served
	idle     chan struct{} // closed by the serving goroutine when it returns after over is set; nil while none is awaited

	inflight  map[string]context.CancelFunc // server requests being served, by id
	cancelled map[string]bool               // ids cancelled while the dispatcher held them
}

// dispatcher returns the connection's dispatcher, made the first time
// the server sends something (or at the end): a connection the server
// never spoke to on its own holds none.
func (c *Connection) dispatcher() *dispatcher {
	if d := c.disp.Load(); d != nil {
		return d
	}
	d := &dispatcher{c: c}
	if c.disp.CompareAndSwap(nil, d) {
		return d
	}
	return c.disp.Load()
}

// handle takes a message the reader read. It never blocks. Progress is
// the one message served right here, on the read goroutine: so a call's
// progress callbacks all run before the call returns.
func (d *dispatcher) handle(req *request) {
	switch {
	case req.notif() && req.Method == "notifications/progress":
		d.c.onProgress(req.Params)
		return
	case req.notif() && req.Method == "notifications/cancelled":
		d.cancelInflight(req.Params) // at once: the request may be waiting in the queue
		return
	}
	d.mu.Lock()
	switch {
	case d.over:
		d.mu.Unlock()
		return
	case req.notif() && d.notifs >= maxQueued:
		d.dropped++
		d.mu.Unlock()
		return
	case req.notif():
		d.notifs++
	case d.requests >= d.c.maxServerRequests():
		d.mu.Unlock()
		// Answered right here: a reply is queued for writing, never waits
		// for the server.
		d.c.logger.Warn("mcp: refused a server request: too many at once", "method", req.Method, "max", d.c.maxServerRequests())
		d.reply(req.ID, nil, &Error{Code: CodeServerBusy, Message: fmt.Sprintf("client busy: more than %d requests at once", d.c.maxServerRequests())})
		return
	default:
		d.requests++
	}
	d.queue = append(d.queue, req)
	start := !d.serving
	d.serving = true
	d.mu.Unlock()
	if start {
		go d.serveQueue()
	}
}

// requestDone counts a server request as served.
func (d *dispatcher) requestDone() {
	d.mu.Lock()
	d.requests--
	d.mu.Unlock()
}

// serveQueue serves the queue in order until it is empty, or until
// reading has ended (Close does not wait for a backlog).
func (d *dispatcher) serveQueue() {
	var batch []*request
	for {
		d.mu.Lock()
		if d.over {
			d.queue, d.notifs = nil, 0
		}
		batch, d.queue = d.queue, d.spare[:0]
		d.spare = nil
		dropped := d.dropped
		d.dropped = 0
		if len(batch) == 0 {
			d.serving = false
			if d.idle != nil {
				close(d.idle)
				d.idle = nil
			}
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		if dropped > 0 {
			d.c.logger.Warn("mcp: dropped notifications from a server that sends faster than they are handled", "count", dropped)
		}
		for i, req := range batch {
			d.mu.Lock()
			over := d.over
			if !over && req.notif() {
				d.notifs--
			}
			d.mu.Unlock()
			if over {
				break
			}
			d.serve(req)
			batch[i] = nil
		}
		clear(batch)
		d.mu.Lock()
		if cap(batch) <= maxQueued {
			d.spare = batch[:0]
		}
		d.mu.Unlock()
	}
}

// finish runs once reading has ended: nothing more is served, the server
// requests in flight are cancelled and their handlers awaited, and the
// connection is marked done.
func (d *dispatcher) finish() {
	defer close(d.c.done)
	defer d.c.endSession()
	defer d.c.handlers.Wait()
	defer d.c.endLife()
	d.mu.Lock()
	d.over = true
	var idle chan struct{}
	if d.serving {
		idle = make(chan struct{})
		d.idle = idle
	}
	d.mu.Unlock()
	if idle != nil {
		<-idle // the message being served, if any, ends first
	}
}

// serve handles one message from the server. Quick answers are given here;
// requests that may take long (sampling, elicitation) run in their own
// goroutine, so they never stall other traffic and may call the server.
func (d *dispatcher) serve(req *request) {
	if req.notif() {
		d.notification(req)
		return
	}
	c := d.c
	d.mu.Lock()
	skip := d.cancelled[req.key]
	delete(d.cancelled, req.key)
	d.mu.Unlock()
	if skip { // the server cancelled it before it was served: no answer
		d.requestDone()
		return
	}
	if n := len(req.Params); n > c.maxServerRequestSize() {
		d.reply(req.ID, nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("request of %d bytes is larger than this client takes (%d)", n, c.maxServerRequestSize())})
		d.requestDone()
		return
	}
	async := req.Method == "sampling/createMessage" || req.Method == "elicitation/create" || req.Method == "tasks/result"
	if !async {
		defer d.requestDone() // answered right here; async ones count down when they end
	}
	var asTask *taskRequest
	if async && req.Method != "tasks/result" {
		asTask = c.era().servedTask(c, req)
	}
	switch req.Method {
	case "ping":
		d.reply(req.ID, json.RawMessage("{}"), nil)
	case "roots/list":
		if c.opts.Roots == nil {
			d.notFound(req)
			return
		}
		d.reply(req.ID, c.listRoots(), nil)
	case "sampling/createMessage":
		if c.opts.Sampling == nil {
			d.notFound(req)
			d.requestDone()
			return
		}
		serve := func(ctx context.Context) (any, *Error) { return c.sample(ctx, req.Params) }
		if asTask != nil {
			d.serveAsTask(req, asTask, serve)
			d.requestDone()
			return
		}
		if rpcErr := c.tasks.spendFor(req.Params); rpcErr != nil { // input of a task a call follows
			d.reply(req.ID, nil, rpcErr)
			d.requestDone()
			return
		}
		d.async(req, serve)
	case "elicitation/create":
		if c.opts.ElicitForm == nil && c.opts.ElicitURL == nil {
			d.notFound(req)
			d.requestDone()
			return
		}
		serve := func(ctx context.Context) (any, *Error) { return c.elicit(ctx, req.Params) }
		if asTask != nil {
			d.serveAsTask(req, asTask, serve)
			d.requestDone()
			return
		}
		if rpcErr := c.tasks.spendFor(req.Params); rpcErr != nil {
			d.reply(req.ID, nil, rpcErr)
			d.requestDone()
			return
		}
		d.async(req, serve)
	case "tasks/get", "tasks/list", "tasks/cancel":
		if c.opts.DisableTasks {
			d.notFound(req)
			return
		}
		res, rpcErr := d.serveTaskRequest(c.life(), req)
		d.reply(req.ID, res, rpcErr)
	case "tasks/result":
		if c.opts.DisableTasks {
			d.notFound(req)
			d.requestDone()
			return
		}
		d.async(req, func(ctx context.Context) (any, *Error) { return d.serveTaskRequest(ctx, req) })
	default:
		d.notFound(req)
	}
}

func (d *dispatcher) notFound(req *request) {
	d.reply(req.ID, nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method})
}

// async serves a request in its own goroutine. Its ctx ends when the
// server cancels the request (then no answer is sent, as the spec asks) or
// the connection ends.
func (d *dispatcher) async(req *request, serve func(ctx context.Context) (any, *Error)) {
	c := d.c
	ctx, cancel := context.WithCancel(c.life())
	key := req.key
	d.mu.Lock()
	if d.inflight == nil {
		d.inflight = map[string]context.CancelFunc{}
	}
	d.inflight[key] = cancel
	d.mu.Unlock()
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer func() {
			d.mu.Lock()
			delete(d.inflight, key)
			d.requests--
			d.mu.Unlock()
			cancel()
		}()
		hctx, end := ctx, func(Outcome) {}
		if o := c.opts.Observer; o != nil {
			op := c.operation(req.Method, 0, req.Params)
			op.RequestID = req.peerID()
			hctx, end = o.StartHandler(ctx, op, jsonrpc.StringMeta(req.Params))
		}
		result, rpcErr := serve(hctx)
		var err error
		if rpcErr != nil {
			err = rpcErr
		} else if ctx.Err() != nil {
			err = ctx.Err()
		}
		end(Outcome{Err: err})
		if ctx.Err() != nil {
			return // cancelled by the server, or the connection ended
		}
		d.reply(req.ID, result, rpcErr)
	}()
}

func (d *dispatcher) notification(req *request) {
	c := d.c
	p := req.Params
	switch req.Method {
	case "notifications/message":
		var m LoggingMessage
		if json.Unmarshal(p, &m) != nil {
			return
		}
		if c.opts.LoggingMessage != nil {
			c.opts.LoggingMessage(c, &m)
		} else {
			c.logMessage(&m)
		}
	case "notifications/tasks/status", "notifications/tasks":
		c.onTaskStatus(p)
	case "notifications/tools/list_changed":
		c.toolCache.Invalidate()
		if f := c.opts.ToolListChanged; f != nil {
			f(c)
		}
	case "notifications/prompts/list_changed":
		if f := c.opts.PromptListChanged; f != nil {
			f(c)
		}
	case "notifications/resources/list_changed":
		c.skillCache.Invalidate() // skills are resources
		if f := c.opts.ResourceListChanged; f != nil {
			f(c)
		}
	case "notifications/resources/updated":
		var u struct {
			URI string `json:"uri"`
		}
		if f := c.opts.ResourceUpdated; f != nil && json.Unmarshal(p, &u) == nil {
			f(c, u.URI)
		}
	case "notifications/elicitation/complete":
		var e struct {
			ID string `json:"elicitationId"`
		}
		if f := c.opts.ElicitationComplete; f != nil && json.Unmarshal(p, &e) == nil {
			f(c, e.ID)
		}
	default:
		c.logger.Debug("mcp: notification ignored", "method", req.Method)
	}
}

// cancelInflight ends the handler of the server request that params of
// notifications/cancelled name, or drops the request from the queue if it
// has not been served yet.
func (d *dispatcher) cancelInflight(p json.RawMessage) {
	var cp struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(p, &cp) != nil {
		return
	}
	key, err := idKey(cp.RequestID)
	if err != nil {
		return
	}
	d.mu.Lock()
	cancel := d.inflight[key]
	if cancel == nil { // not served yet: it is dropped from the queue, unanswered
		found := false
		for i, req := range d.queue {
			if !req.notif() && req.key == key {
				d.queue = slices.Delete(d.queue, i, i+1)
				d.requests--
				found = true
				break
			}
		}
		if !found { // taken by the dispatcher, or already answered
			if len(d.cancelled) >= maxQueued {
				clear(d.cancelled)
			}
			if d.cancelled == nil {
				d.cancelled = map[string]bool{}
			}
			d.cancelled[key] = true
		}
	}
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// reply answers the server's request id (raw JSON, as it wrote it) with
// result or rpcErr, written as the Connection writes its requests.
func (d *dispatcher) reply(id json.RawMessage, result any, rpcErr *Error) {
	var b []byte
	var err error
	if rpcErr != nil {
		b, err = jsonrpc.AppendErrorResponse(nil, id, rpcErr.Code, rpcErr.Message, rpcErr.Data)
	} else {
		b, err = jsonrpc.AppendResponse(nil, id, result)
	}
	if err != nil {
		d.c.logger.Warn("mcp: could not encode a reply to the server", "id", string(id), "err", err)
		b, _ = jsonrpc.AppendErrorResponse(b[:0], id, CodeInternalError, "the client could not encode its result", nil)
	}
	if err := d.c.stream.writeLineWith(b, nil); err != nil {
		d.c.logger.Debug("mcp: reply failed", "id", string(id), "err", err)
	}
}

// sample serves sampling/createMessage with the Sampling handler.
func (c *Connection) sample(ctx context.Context, params json.RawMessage) (any, *Error) {
	if c.opts.Sampling == nil {
		return nil, &Error{Code: CodeMethodNotFound, Message: "this client does not offer sampling"}
	}
	var p CreateMessageRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid sampling/createMessage params: " + err.Error()}
	}
	if len(p.Tools) > 0 && !c.opts.SamplingTools {
		return nil, &Error{Code: CodeInvalidParams, Message: "this client does not offer tool use in sampling"}
	}
	res, err := c.opts.Sampling(ctx, c, &p)
	if err != nil {
		return nil, handlerError(err)
	}
	if res == nil {
		return nil, &Error{Code: CodeInternalError, Message: "sampling handler returned no result"}
	}
	return res, nil
}

// elicit serves elicitation/create: it checks the request against the
// modes offered, runs the handler, and for an accepted form applies the
// schema's defaults and validates the answer before it is sent.
func (c *Connection) elicit(ctx context.Context, params json.RawMessage) (any, *Error) {
	var req ElicitRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid elicitation/create params: " + err.Error()}
	}
	switch req.Mode {
	case "", "form":
		if c.opts.ElicitForm == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "this client does not support form-mode elicitation"}
		}
		fs, err := formschema.Check(req.RequestedSchema)
		if err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid requestedSchema: " + err.Error()}
		}
		schema, err := compileSchema("elicitation/requestedSchema", req.RequestedSchema)
		if err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid requestedSchema: " + err.Error()}
		}
		res, err := c.opts.ElicitForm(ctx, c, &req)
		if err != nil {
			return nil, handlerError(err)
		}
		if res == nil || res.Action != "accept" {
			return declined(res), nil
		}
		content := fs.WithDefaults(res.Content)
		answer, err := json.Marshal(content)
		if err == nil {
			err = validateJSON(ctx, schema, answer)
		}
		if err != nil {
			c.logger.Warn("mcp: elicitation answer does not match the requested schema; not sent", "err", err)
			return nil, &Error{Code: CodeInvalidParams, Message: "the answer does not match the requested schema: " + err.Error()}
		}
		return &ElicitResult{Action: "accept", Content: content}, nil
	case "url":
		if c.opts.ElicitURL == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "this client does not support url-mode elicitation"}
		}
		if req.URL == "" || (req.ElicitationID == "" && c.era().elicitationIDs()) { // 2026-07-28 dropped elicitationId
			return nil, &Error{Code: CodeInvalidParams, Message: "url-mode elicitation needs url and elicitationId"}
		}
		res, err := c.opts.ElicitURL(ctx, c, &req)
		if err != nil {
			return nil, handlerError(err)
		}
		if res == nil || res.Action != "accept" {
			return declined(res), nil
		}
		return &ElicitResult{Action: "accept"}, nil
	default:
		return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown elicitation mode %q", req.Mode)}
	}
}

func declined(res *ElicitResult) *ElicitResult {
	if res == nil || (res.Action != "decline" && res.Action != "cancel") {
		return &ElicitResult{Action: "cancel"}
	}
	return &ElicitResult{Action: res.Action}
}

// listRoots answers roots/list.
func (c *Connection) listRoots() any {
	c.rootsMu.Lock()
	defer c.rootsMu.Unlock()
	roots := c.roots
	if roots == nil {
		roots = []Root{}
	}
	return map[string]any{"roots": roots}
}

// logMessage is the default for notifications/message: the connection's
// logger, at the matching level.
func (c *Connection) logMessage(m *LoggingMessage) {
	attrs := []any{"data", m.Data}
	if m.Logger != "" {
		attrs = append(attrs, "logger", m.Logger)
	}
	c.logger.Log(context.Background(), m.Level.Slog(), "mcp: server log", attrs...)
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
	ctx, cancel := context.WithCancel(c.life())
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
		case ctx.Err() != nil && c.life().Err() == nil:
			t.finish(TaskCancelled, nil, &Error{Code: CodeInternalError, Message: "the task was cancelled"}, "cancelled")
		case rpcErr != nil:
			t.finish(TaskFailed, nil, rpcErr, rpcErr.Message)
		default:
			t.finish(TaskCompleted, result, nil, "")
		}
		if c.life().Err() == nil {
			nctx, ncancel := context.WithTimeout(c.life(), time.Second)
			c.Notify(nctx, "notifications/tasks/status", t.wire())
			ncancel()
		}
	}()
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
