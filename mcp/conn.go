package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcplug/mcplug/internal/jsonrpc"
	"github.com/mcplug/mcplug/internal/listcache"
	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/sourcegraph/jsonrpc2"
)

// Options configure a Connection. A nil *Options, and every zero field,
// means the default.
type Options struct {
	// ClientInfo is sent to the server. Nil means {Name: "mcplug",
	// Version: Version}.
	ClientInfo *Implementation

	// ProtocolVersion pins the protocol version; empty means the newest
	// both sides speak. A legacy version ("2025-11-25") sends initialize
	// without a probe; a modern one ("2026-07-28") never falls back.
	ProtocolVersion string

	// Logger receives the diagnostics of the connection and its transport
	// (dropped notifications, late responses, refused server requests,
	// stray stdout lines), unless the transport has a Logger of its own.
	// Nil means slog.Default().
	Logger *slog.Logger

	// Notification handlers run in order with the server's other messages,
	// on one goroutine: they may call the Connection, but should hand long
	// work to another goroutine. Nil ignores the notification, except
	// LoggingMessage: nil logs it to Logger at its level.
	ToolListChanged     func(*Connection)                  // notifications/tools/list_changed (a cached tool list is dropped first)
	PromptListChanged   func(*Connection)                  // notifications/prompts/list_changed
	ResourceListChanged func(*Connection)                  // notifications/resources/list_changed
	ResourceUpdated     func(c *Connection, uri string)    // notifications/resources/updated
	LoggingMessage      func(*Connection, *LoggingMessage) // notifications/message
	ElicitationComplete func(c *Connection, id string)     // notifications/elicitation/complete

	// Client features: the capabilities offered are exactly those set.
	// Roots, when non-nil (even empty), answers roots/list (see SetRoots);
	// Sampling answers sampling/createMessage, with tool use if
	// SamplingTools; ElicitForm and ElicitURL answer elicitation/create (a
	// form answer is completed with the schema's defaults and validated
	// before it is sent).
	Roots         []Root
	Sampling      SamplingHandler
	SamplingTools bool
	ElicitForm    ElicitHandler
	ElicitURL     ElicitHandler

	// MaxServerRequests bounds the server's requests served or waiting at
	// once; one past it is answered with CodeServerBusy. Zero means 16.
	// MaxServerRequestSize bounds their params, in bytes; a larger one is
	// answered with CodeInvalidParams. Zero means 4 MiB.
	MaxServerRequests    int
	MaxServerRequestSize int

	// A tool call answered with a task is followed to its end, and
	// sampling and elicitation may run as tasks for a 2025-11-25 server;
	// DisableTasks turns both off. MaxTasks bounds the tasks followed at
	// once (a call past it waits) and those run for the server (one past
	// it is refused); zero means 16. TaskStatus, if set, receives task
	// status notifications, as the notification handlers do, before the
	// call that follows the task sees the status: a call's TaskStatus
	// callbacks have all run when it returns.
	DisableTasks bool
	MaxTasks     int
	TaskStatus   func(c *Connection, t *Task)

	// Observer, if set, sees every message sent, every server request
	// served, and the session (package otelmcp: OpenTelemetry).
	Observer Observer

	// Extensions are the client extensions declared to the server, by
	// identifier (UIExtension, say), in the capabilities of either era.
	// The tasks extension is declared by this package and cannot be
	// replaced here. The server's are in InitializeResult's Capabilities.
	Extensions map[string]json.RawMessage
}

func (c *Connection) maxServerRequests() int {
	if c.opts.MaxServerRequests > 0 {
		return c.opts.MaxServerRequests
	}
	return defaultMaxServerRequests
}

func (c *Connection) maxServerRequestSize() int {
	if c.opts.MaxServerRequestSize > 0 {
		return c.opts.MaxServerRequestSize
	}
	return defaultMaxServerRequestSize
}

// modernCapabilities returns what the options offer a modern server: the
// same as capabilities, less what the modern revision removed (roots
// list_changed, the tasks capability), with the tasks extension.
func (o *Options) modernCapabilities() clientCapabilities {
	caps := o.capabilities()
	if caps.Roots != nil {
		caps.Roots = &ListChangedCapability{}
	}
	caps.Tasks = nil
	if !o.DisableTasks {
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = map[string]json.RawMessage{}
		}
		caps.Extensions[ExtensionTasks] = json.RawMessage(`{}`)
	}
	return caps
}

// capabilities returns what the options offer the server.
func (o *Options) capabilities() clientCapabilities {
	var caps clientCapabilities
	for id, v := range o.Extensions {
		if id == ExtensionTasks {
			continue
		}
		if caps.Extensions == nil {
			caps.Extensions = make(map[string]json.RawMessage, len(o.Extensions))
		}
		caps.Extensions[id] = v
	}
	if o.Roots != nil {
		caps.Roots = &ListChangedCapability{ListChanged: true}
	}
	if o.Sampling != nil {
		caps.Sampling = json.RawMessage(`{}`)
		if o.SamplingTools {
			caps.Sampling = json.RawMessage(`{"tools":{}}`)
		}
	}
	switch {
	case o.ElicitForm != nil && o.ElicitURL != nil:
		caps.Elicitation = json.RawMessage(`{"form":{},"url":{}}`)
	case o.ElicitForm != nil:
		caps.Elicitation = json.RawMessage(`{"form":{}}`)
	case o.ElicitURL != nil:
		caps.Elicitation = json.RawMessage(`{"url":{}}`)
	}
	if !o.DisableTasks && (o.Sampling != nil || o.ElicitForm != nil || o.ElicitURL != nil) {
		var requests []string
		if o.Sampling != nil {
			requests = append(requests, `"sampling":{"createMessage":{}}`)
		}
		if o.ElicitForm != nil || o.ElicitURL != nil {
			requests = append(requests, `"elicitation":{"create":{}}`)
		}
		caps.Tasks = json.RawMessage(`{"list":{},"cancel":{},"requests":{` + strings.Join(requests, ",") + `}}`)
	}
	return caps
}

// Connection is an initialized session with one MCP server. It is safe for
// concurrent use. It lives until Close is called or the server goes away;
// Done and Err tell which.
type Connection struct {
	stream *connStream
	logger *slog.Logger
	init   InitializeResult // under initMu: a refused version can change it
	initMu sync.RWMutex
	// toolTasks: the server offers task-augmented tool calls (2025-11-25
	// tasks.requests.tools.call), read once from init's capabilities.
	toolTasks atomic.Bool
	// The flags of the connection's end, beside toolTasks: each alone
	// would round the struct up to the next 8 bytes, and a Connection one
	// word past 2 KiB takes 2.25 (the allocator's classes).
	closing     atomic.Bool
	sessionOver atomic.Bool // the connection has ended: sessionEnd is called at once
	endTold     atomic.Bool // the end failed a call of the program's in flight: its caller has the cause
	nextID      atomic.Uint64
	pending     jsonrpc.Pending
	disp        atomic.Pointer[dispatcher] // made by the first message the server sends (see dispatcher)
	opts        Options
	metaState

	progress     progressTable
	schemas      schemaCache
	paramHeaders sync.Map // tool name → []mcpheader.Param, over Streamable HTTP
	listen       listener
	toolCache    listcache.Cache[Tool]
	skillCache   listcache.Cache[Skill]
	taskSupport  sync.Map  // tool name → execution.taskSupport, from the last listing
	tasks        taskWatch // tasks followed
	served       taskStore // tasks run for the server
	rootsMu      sync.Mutex
	roots        []Root

	lifeCtx    context.Context // see life; under causeMu
	lifeCancel context.CancelFunc
	handlers   sync.WaitGroup // server requests being served
	probes     sync.WaitGroup // the handshake's requests that run on their own (async)

	readOver  chan struct{} // closed when the stream has ended and is closed
	causeMu   sync.Mutex    // cause and lifeCtx
	cause     error
	done      chan struct{} // closed when the connection has ended
	closeOnce sync.Once
	closeErr  error

	peer       peer                        // what Operations say of the server
	sessionEnd atomic.Pointer[func(error)] // the Observer's, once the handshake succeeded
}

// endSession tells the Observer, once, that the session has ended: with
// nil after Close, else with an error matching ErrClosed that wraps the
// cause.
func (c *Connection) endSession() {
	c.sessionOver.Store(true)
	end := c.sessionEnd.Swap(nil)
	if end == nil {
		return
	}
	var err error
	if !c.closing.Load() {
		err = &closedError{cause: c.getCause()} // matches ErrClosed
	}
	(*end)(err)
}

// Connect opens t, agrees on a protocol version with the server and
// returns a ready Connection. It speaks the newest version both sides do:
// a server/discover probe (LatestProtocolVersion) that the server refuses
// or leaves unanswered for 3 seconds is followed by the initialize
// handshake (LatestLegacyVersion); Options.ProtocolVersion pins a version
// instead; a version the server does not support is retried once with
// one it lists. InitializeResult says what was agreed.
//
// ctx bounds the handshake only, never the Connection's life. A failed
// handshake closes the transport at once (a child process is killed
// without grace periods); the error says why ([*ExitError] with the
// server's stderr, [*VersionError], …).
func Connect(ctx context.Context, t Transport, opts *Options) (*Connection, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for id, v := range opts.Extensions {
		if id == "" || requireObject(v) != nil || !json.Valid(v) {
			return nil, fmt.Errorf("mcp: extension %q: the declaration must be a JSON object", id)
		}
	}
	s, err := t.Connect(ctx)
	if err != nil {
		return nil, wrap("connect", err)
	}
	c := newConnection(s, opts)
	c.peer = peerOf(t)
	if err := c.handshake(ctx); err != nil {
		c.abort()
		return nil, err
	}
	if o := opts.Observer; o != nil {
		end := o.StartSession(c.operation("", 0, nil))
		c.sessionEnd.Store(&end)
		if c.sessionOver.Load() { // it ended meanwhile
			c.endSession()
		}
	}
	c.era().listen(c)
	return c, nil
}

func newConnection(s Stream, opts *Options) *Connection {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if u, ok := s.(loggerUser); ok && opts.Logger != nil {
		u.useLogger(opts.Logger) // the transport logs there too, unless it was given a logger of its own
	}
	c := &Connection{logger: logger, opts: *opts, done: make(chan struct{}), readOver: make(chan struct{}), roots: slices.Clone(opts.Roots)}
	c.stream = newConnStream(s, c)
	ended := func() {
		c.stream.Close() // a stream that ended by itself is released (a process reaped)
		close(c.readOver)
		c.dispatcher().finish()
	}
	if !c.stream.r.RunOnDemand(ended) {
		go func() {
			c.stream.r.Run() // until the stream ends
			ended()
		}()
	}
	return c
}

// life is the context the server's requests are served under, which
// ends with the connection: made the first time it is asked for (a
// connection the server never asks anything holds none), and ended
// already when asked for after the end.
func (c *Connection) life() context.Context {
	c.causeMu.Lock()
	defer c.causeMu.Unlock()
	if c.lifeCtx == nil {
		c.lifeCtx, c.lifeCancel = context.WithCancel(context.Background())
	}
	return c.lifeCtx
}

// endLife ends the context of life, now or, if none was made yet, as it
// is made.
func (c *Connection) endLife() {
	c.causeMu.Lock()
	if c.lifeCtx == nil {
		c.lifeCtx, c.lifeCancel = endedContext, func() {}
	}
	cancel := c.lifeCancel
	c.causeMu.Unlock()
	cancel()
}

// endedContext is the life of the connections that ended before anything
// asked for it.
var endedContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// InitializeResult returns what was agreed with the server: the protocol
// version, the server's capabilities, info and instructions, from its
// answer to initialize (legacy) or server/discover (modern).
func (c *Connection) InitializeResult() InitializeResult {
	c.initMu.RLock()
	defer c.initMu.RUnlock()
	return c.init
}

// Call sends a request and decodes its result into result (a pointer; nil
// discards it); nil params are omitted. It returns with the response, when
// ctx ends (the server is sent notifications/cancelled), or when the
// connection ends (ErrClosed). A JSON-RPC error is an *Error.
func (c *Connection) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}

// Ping checks that the server answers: ping on a legacy server; on a
// modern one, which has no ping, server/discover.
func (c *Connection) Ping(ctx context.Context) error {
	return c.era().ping(ctx, c)
}

// callObject is call for the spec's methods: params may be a typed nil
// pointer (sent as no params), and the result must be a JSON object.
func (c *Connection) callObject(ctx context.Context, method string, params, result any) error {
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.IsNil() {
		params = nil
	}
	raw, err := c.roundTrip(ctx, method, params)
	if err != nil {
		return err
	}
	if err := requireObject(raw); err != nil {
		return wrap(method, err)
	}
	return c.decode(method, raw, result)
}

func (c *Connection) call(ctx context.Context, method string, params, result any) error {
	raw, err := c.roundTrip(ctx, method, params)
	if err != nil {
		return err
	}
	return c.decode(method, raw, result)
}

// decode decodes a result into v (nil discards it). Into a
// *json.RawMessage it is only checked: raw is the call's own.
func (c *Connection) decode(method string, raw []byte, v any) error {
	if v == nil {
		return nil
	}
	if rm, ok := v.(*json.RawMessage); ok {
		if !json.Valid(raw) {
			return wrap(method, &badResult{errors.New("the result is not valid JSON")})
		}
		*rm = raw
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return wrap(method, &badResult{err})
	}
	return nil
}

// roundTripOnce sends a request and returns its raw result. It returns
// when the response arrives, when ctx ends (the server is then sent
// notifications/cancelled, and a late response is dropped), or when the
// connection ends.
func (c *Connection) roundTripOnce(ctx context.Context, method string, params any) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var op *Operation
	if c.opts.Observer != nil {
		op = c.operation(method, 0, params) // described before call options rewrite params
		op.Probe = ctx.Value(probeKey{}) != nil
	}
	if opts := callOptionsFrom(ctx); opts != nil && (opts.Progress != nil || opts.Timeout > 0 || len(opts.Meta) > 0) {
		p, callCtx, cleanup, err := c.applyCallOptions(ctx, opts, params)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		ctx, params = callCtx, p
	}
	id := c.nextID.Add(1)
	if op == nil {
		return c.exchange(ctx, id, method, params, nil)
	}
	op.RequestID = strconv.FormatUint(id, 10)
	ctx, meta, end := c.opts.Observer.StartOperation(ctx, op)
	raw, err := c.exchange(ctx, id, method, params, jsonrpc.AppendMeta(nil, meta))
	end(Outcome{Err: err, ToolError: err == nil && method == "tools/call" && isToolError(raw)})
	return raw, err
}

// exchange sends request id, with extra _meta members, and waits for its
// answer (see roundTripOnce).
func (c *Connection) exchange(ctx context.Context, id uint64, method string, params any, extra []byte) ([]byte, error) {
	add := c.pending.Add
	if ctx.Value(backgroundKey{}) != nil {
		add = c.pending.AddBackground
	}
	pc, err := add(id)
	if err != nil {
		return nil, err
	}
	if err := c.sendWith(ctx, id, method, params, headersFrom(ctx), extra); err != nil {
		if c.pending.Remove(id) {
			c.pending.Release(pc)
		}
		return nil, err
	}
	r, err := c.stream.await(ctx, pc)
	if err != nil { // ctx ended
		if c.pending.Remove(id) && method != "initialize" { // the spec forbids cancelling initialize
			c.cancelled(ctx, id, err)
		}
		return nil, err
	}
	c.pending.Release(pc)
	if r.Err != nil {
		return nil, c.mapError(method, r.Err)
	}
	return r.Result, nil
}

// sendWith writes a request (id > 0) or a notification (id 0), with
// headers for an HTTP stream (see headerWriter) and
// extra _meta members (an Observer's trace context). A request's ctx
// bounds its sending, which on Streamable HTTP includes reading its answer
// (see connStream.writeRequest). A notification is an Observer's
// operation of its own.
func (c *Connection) sendWith(ctx context.Context, id uint64, method string, params any, h http.Header, extra []byte) error {
	if id == 0 && c.opts.Observer != nil {
		_, meta, end := c.opts.Observer.StartOperation(ctx, c.operation(method, 0, params))
		err := c.write(ctx, 0, method, params, h, jsonrpc.AppendMeta(nil, meta))
		end(Outcome{Err: err})
		return err
	}
	return c.write(ctx, id, method, params, h, extra)
}

// write encodes and writes a message (see sendWith).
func (c *Connection) write(ctx context.Context, id uint64, method string, params any, h http.Header, extra []byte) error {
	bp := requestBufPool.Get().(*[]byte)
	defer requestBufPool.Put(bp)
	var meta []byte
	if id != 0 {
		meta = c.era().requestMeta()
	}
	if extra != nil {
		if meta == nil {
			meta = extra
		} else {
			meta = append(append(append(make([]byte, 0, len(meta)+1+len(extra)), meta...), ','), extra...)
		}
	}
	b, err := jsonrpc.AppendRequest((*bp)[:0], id, method, params, meta)
	if cap(b) <= 64<<10 {
		*bp = b[:0]
	}
	if err != nil {
		return wrap(method, fmt.Errorf("encode params: %w", err))
	}
	switch {
	case id != 0:
		err = c.stream.writeRequest(ctx, b, h)
	case ctx.Value(awaitedKey{}) != nil:
		err = c.stream.writeAwaited(ctx, b, h)
	default:
		err = c.stream.writeLineWith(b, h)
	}
	if err != nil {
		return c.mapError(method, err)
	}
	return nil
}

func (c *Connection) cancelled(ctx context.Context, id uint64, why error) {
	if c.ended() {
		return
	}
	// Writes are queued by the Stream, so this does not block on the peer.
	send := c.sendWith
	if s, ok := c.stream.Stream.(closingCanceller); ok && s.cancelsByClosing() {
		// The stream cancels by closing the request's stream, and sends
		// nothing: no operation for the Observer.
		send = c.write
	}
	if err := send(context.WithoutCancel(ctx), 0, "notifications/cancelled", cancelledParams{RequestID: id, Reason: why.Error()}, nil, nil); err != nil {
		c.logger.Debug("mcp: could not send notifications/cancelled", "id", id, "err", err)
	}
}

// awaitedKey marks the ctx of a notification that is sent, where the
// stream can, before Notify returns: the handshake's
// notifications/initialized, which the requests after it would otherwise
// wait for (see connStream.writeAwaited).
type awaitedKey struct{}

// probeKey marks the ctx of the era probe's requests, whose refusal is
// expected (see Operation.Probe).
type probeKey struct{}

// backgroundKey marks the ctx of a request the connection makes on its
// own (subscriptions/listen): its failure when the server is lost tells
// the program nothing (see Connection.endTold).
type backgroundKey struct{}

// closingCanceller is a Stream that may cancel a request by closing its
// stream instead of sending notifications/cancelled (Streamable HTTP of
// the 2026-07-28 revision).
type closingCanceller interface{ cancelsByClosing() bool }

// mapError turns transport and jsonrpc2 errors into this package's.
func (c *Connection) mapError(method string, err error) error {
	var ce *closedError
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, jsonrpc2.ErrClosed), errors.Is(err, ErrClosed):
		return &closedError{cause: c.getCause()}
	}
	return err
}

// responseError turns the error member of a response into an error: a
// transport failure the stream kept, or the server's.
func (c *Connection) responseError(raw []byte) error {
	var e struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return &badResult{fmt.Errorf("error member: %w", err)}
	}
	if tl, ok := ndjson.TooLarge(e.Code, e.Data); ok {
		return &MessageTooLargeError{Size: tl.Size, Max: tl.Max}
	}
	return &Error{Code: e.Code, Message: e.Message, Data: e.Data}
}

// Notify sends a notification. It returns once the message is queued for
// writing; an error means the connection has ended or params cannot be
// encoded.
func (c *Connection) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.ended() {
		return c.Err()
	}
	return c.sendWith(ctx, 0, method, params, nil, nil)
}

// Close ends the connection: pending calls fail with ErrClosed, the
// transport is closed (a process shut down as CommandTransport says), and
// Close returns once every goroutine of the connection has ended. Later
// calls return the first one's result.
func (c *Connection) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		if err := c.stream.Close(); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, jsonrpc2.ErrClosed) {
			c.closeErr = err
		}
		<-c.stream.r.Done()
		<-c.done
		c.probes.Wait()
	})
	return c.closeErr
}

// abort closes a connection whose handshake failed, without grace periods.
func (c *Connection) abort() {
	c.closing.Store(true)
	if a, ok := c.stream.Stream.(aborter); ok {
		a.abort()
	}
	c.Close()
}

// Done returns a channel that is closed when the connection has ended,
// by Close or because the server went away.
func (c *Connection) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open; then an error matching
// ErrClosed that wraps why the server went away (an *ExitError, a read or
// write error), if it did.
func (c *Connection) Err() error {
	if !c.ended() {
		return nil
	}
	return &closedError{cause: c.getCause()}
}

func (c *Connection) ended() bool {
	if c.pending.Ended() {
		return true
	}
	select {
	case <-c.done:
		return true
	case <-c.readOver:
		return true
	default:
		return false
	}
}

func (c *Connection) setCause(err error) {
	if c.closing.Load() || errors.Is(err, ErrClosed) {
		return
	}
	c.causeMu.Lock()
	if c.cause == nil {
		c.cause = err
	}
	c.causeMu.Unlock()
}

func (c *Connection) getCause() error {
	c.causeMu.Lock()
	defer c.causeMu.Unlock()
	return c.cause
}

// ElicitHandler answers elicitation/create. It runs in its own goroutine;
// ctx ends when the server cancels the request or the connection closes.
// It may call the Connection.
type ElicitHandler func(ctx context.Context, c *Connection, req *ElicitRequest) (*ElicitResult, error)

// SamplingHandler answers sampling/createMessage. It runs in its own
// goroutine; ctx ends when the server cancels the request or the
// connection closes. It may call the Connection.
type SamplingHandler func(ctx context.Context, c *Connection, req *CreateMessageRequest) (*CreateMessageResult, error)

// roundTrip sends a request and returns its raw, complete result, having
// answered what the server asked for meanwhile (see era.roundTrip).
func (c *Connection) roundTrip(ctx context.Context, method string, params any) ([]byte, error) {
	raw, _, err := c.era().roundTrip(ctx, c, method, params, nil)
	return raw, err
}

// pager is what a listing needs of c.
func (c *Connection) pager() pager { return pager{call: c.call, logger: c.logger} }
