package httpstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplug/mcplug/internal/mcpheader"
	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/internal/sse"
)

// Options configure a Stream.
type Options struct {
	Config
	FallbackToSSE bool          // on 400, 404 or 405 to initialize, speak HTTP+SSE on the same URL
	CloseTimeout  time.Duration // zero means 2 seconds
	NotifyTimeout time.Duration // zero means 10 seconds
	Memory        *Memory       // the transport's; nil: one of the Stream's own
}

// New returns a Stream; nothing is sent before the first message.
func New(o Options) *Stream {
	cfg := newConfig(o.Config)
	closeTimeout := o.CloseTimeout
	if closeTimeout <= 0 {
		closeTimeout = 2 * time.Second
	}
	if o.Memory == nil {
		o.Memory = &Memory{}
	}
	life, cancel := context.WithCancel(context.Background())
	return &Stream{cfg: cfg, notifyTimeout: o.NotifyTimeout, fallbackToSSE: o.FallbackToSSE, memory: o.Memory,
		in: newInbox(cfg.errs.BadResult), life: life, cancel: cancel, closeTimeout: closeTimeout}
}

// maxResumes bounds how often one response's stream is resumed.
const maxResumes = 5

// RouteFailures makes the failed exchanges of requests go to f (see
// SSE.RouteFailures). A legacy fallback shares the inbox, and so the
// route.
func (s *Stream) RouteFailures(f func(id []byte, err error)) { s.in.routeFailures(f) }

// SessionID is the session's Mcp-Session-Id, "" before the server gave one.
func (s *Stream) SessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// Stream is a connection over the Streamable HTTP transport; see package
// mcp's StreamableHTTPTransport for what it does.
type Stream struct {
	cfg           *httpConfig
	notifyTimeout time.Duration
	memory        *Memory
	in            *inbox
	life          context.Context
	cancel        context.CancelFunc
	closeTimeout  time.Duration
	wg            sync.WaitGroup
	closeOnce     sync.Once
	fallbackToSSE bool // beside closeOnce, in the 4 bytes it leaves

	mu       sync.Mutex
	session  string
	version  string // negotiated protocol version, once initialize is answered
	initBody []byte // the initialize request, to start a new session after a 404
	initID   string
	legacy   *SSE // set when the server turned out to speak HTTP+SSE

	// The values of the session and version headers, made once and shared
	// by the requests (see httpConfig.newRequest).
	sessionHeader, versionHeader, modernHeader []string

	out *inbox // messages waiting for the sender, in order
	// serial keeps the notifications and responses in the order written:
	// the sender holds it while it POSTs one, and so does
	// PostNotification. unsent counts those in out, not yet POSTed.
	serial     sync.Mutex
	unsent     atomic.Int64
	senderOnce sync.Once
	closing    atomic.Bool // Close has begun
	// getOpened, once the GET stream is asked for, is closed when the
	// server has answered it (see openGet); under mu.
	getOpened  chan struct{}
	senderDone chan struct{} // closed when the sender has returned

	inflight map[string]context.CancelFunc // the POSTs of requests, by id

	// resession is set while a new session starts (see reinitialize):
	// requests wait for it to close. sessionEpoch counts the sessions
	// started so, so that the GET stream knows its event ids are stale.
	resession    chan struct{}
	sessionEpoch int

	// initialized is closed once the POST of notifications/initialized
	// has been answered (or failed): requests a call sends itself wait for
	// it, as a server may finish setting up (registering tools) while it
	// handles that notification.
	initialized chan struct{}

	posts *postEnd // the POSTs sent by their callers (see endWithStream)

	modern string                 // the modern protocol version spoken, or "" (legacy)
	extra  map[string]http.Header // headers for the POST of a request, by id
}

// An exchange is one message POSTed and what comes back for it.
type exchange struct {
	ctx   context.Context // nil: the stream's (see send)
	b     []byte
	top   ndjson.Top
	extra http.Header // the request's own headers (Mcp-Param-*), when given
	// own, when set, takes the response to the request, scanned, if it is
	// the first message back; everything else goes to ReadObject, in order.
	own func(ndjson.Top)
	n   int // messages delivered so far
	// body is the SSE stream of the answer, as it is read.
	body endWatch
	end  postEnd // a request sent by its caller: Close ends it
}

// endWatch is a body that notes when a read meets its end.
type endWatch struct {
	io.Reader
	ended bool
}

func (w *endWatch) Read(p []byte) (int, error) {
	n, err := w.Reader.Read(p)
	if err == io.EOF {
		w.ended = true
	}
	return n, err
}

// Memory is what was learnt of a server across connections: its era (so
// that a legacy server is not probed again at every connection) and when
// it last answered GET with 405 (it offers no stream). Its owner shares
// it among the streams to one server; a stream to another URL makes it
// start again knowing nothing.
type Memory struct {
	mu      sync.Mutex
	url     string // what the rest is about
	era     string
	noGetAt time.Time
}

// noGetMemory is how long a server's 405 to GET is taken as its answer:
// within it, a new connection of the transport sends no GET.
const noGetMemory = time.Minute

// about returns m for facts about url, forgetting those of another URL;
// m.mu is held.
func (m *Memory) about(url string) *Memory {
	m.mu.Lock()
	if m.url != url {
		m.url, m.era, m.noGetAt = url, "", time.Time{}
	}
	return m
}

func (s *Stream) Era() string {
	m := s.memory.about(s.cfg.target)
	defer m.mu.Unlock()
	return m.era
}

func (s *Stream) SetEra(era string) {
	m := s.memory.about(s.cfg.target)
	defer m.mu.Unlock()
	m.era = era
}

// knownNoGet reports whether the server answered GET with 405 the last
// time, less than noGetMemory ago.
func (s *Stream) knownNoGet() bool {
	m := s.memory.about(s.cfg.target)
	defer m.mu.Unlock()
	return !m.noGetAt.IsZero() && time.Since(m.noGetAt) < noGetMemory
}

func (s *Stream) setNoGet(no bool) {
	m := s.memory.about(s.cfg.target)
	defer m.mu.Unlock()
	m.noGetAt = time.Time{}
	if no {
		m.noGetAt = time.Now()
	}
}

// SetProtocolVersion makes the stream speak version v, modern or not: a
// modern version means no session, the request metadata headers, no GET stream and no
// resumption; "" or a legacy version means the 2025-11-25 transport.
func (s *Stream) SetProtocolVersion(v string, modern bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modern = ""
	if modern {
		s.modern = v
		s.modernHeader = []string{v}
	}
}

// WriteWithHeaders writes b, a request, with headers added to its POST
// (the Mcp-Param headers of a tool call).
func (s *Stream) WriteWithHeaders(b []byte, h http.Header) error {
	if top, ok := ndjson.ScanTop(b); ok && top.ID != nil && len(h) > 0 {
		s.mu.Lock()
		if s.extra == nil {
			s.extra = map[string]http.Header{}
		}
		s.extra[string(top.ID)] = h
		s.mu.Unlock()
	}
	return s.WriteObject(json.RawMessage(b))
}

func (s *Stream) ReadObject(v any) error { return s.in.readObject(v) }

func (s *Stream) ReadMessage() ([]byte, error) { return s.in.take() }

// TryReadMessage returns the next message received, if one has come,
// without waiting; once the stream has ended and every message was taken,
// why it ended.
func (s *Stream) TryReadMessage() ([]byte, bool, error) { return s.in.tryTake() }

// OnMessage makes the stream call f, without waiting, whenever a message
// has come and when it ends: the Connection then reads without a
// goroutine waiting on the stream.
func (s *Stream) OnMessage(f func()) { s.in.onMessage(f) }

// WriteObject POSTs the message in the background: its answer, or the
// error standing for it, arrives through ReadObject.
func (s *Stream) WriteObject(obj any) error {
	if s.life.Err() != nil {
		return s.cfg.errs.Closed
	}
	b, err := ownBytes(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	legacy := s.legacy
	s.mu.Unlock()
	if legacy != nil {
		return legacy.WriteObject(json.RawMessage(b))
	}
	top, _ := ndjson.ScanTop(b)
	if string(top.Method) == `"initialize"` && top.ID != nil {
		s.mu.Lock()
		s.initBody, s.initID = b, string(top.ID)
		s.mu.Unlock()
	}
	if string(top.Method) == `"notifications/initialized"` {
		s.mu.Lock()
		if s.initialized == nil {
			s.initialized = make(chan struct{})
		}
		s.mu.Unlock()
		s.awaitGet(s.life) // the handshake ends with the GET stream open
	}
	if string(top.Method) == `"notifications/cancelled"` {
		s.mu.Lock()
		modern := s.modern != ""
		s.mu.Unlock()
		s.abandon(top.Params, modern)
		if modern {
			return nil // closing the request's stream is the cancellation
		}
	}
	out := s.startSender()
	if out == nil { // closed meanwhile
		return s.cfg.errs.Closed
	}
	if isRequest(top) {
		return out.putBounded(b, MaxQueue)
	}
	s.unsent.Add(1)
	err = out.putBounded(b, MaxQueue)
	if err != nil {
		s.unsent.Add(-1)
	}
	return err
}

// PostNotification sends notification b (no newline) in the caller's
// goroutine and returns once the server has taken it, or ctx or the
// stream has ended, or the notification's timeout has passed
// (initializedWait for notifications/initialized; a failed POST is
// logged, as for a queued notification): the handshake's
// notifications/initialized, so that the requests after it need not wait
// for the sender. It reports false,
// having sent nothing, when b must take the queue instead: when b is no
// notification, on the legacy transport, or while a notification or
// response written before it waits to be sent.
func (s *Stream) PostNotification(ctx context.Context, b []byte) bool {
	top, ok := ndjson.ScanTop(b)
	if !ok || top.ID != nil || top.Method == nil || s.life.Err() != nil {
		return false
	}
	s.mu.Lock()
	legacy := s.legacy != nil
	s.mu.Unlock()
	if legacy {
		return false
	}
	s.serial.Lock()
	defer s.serial.Unlock()
	if s.unsent.Load() > 0 {
		return false
	}
	timeout := s.notifyTimeout
	if timeout <= 0 {
		timeout = defaultNotifyTimeout
	}
	initialized := string(top.Method) == `"notifications/initialized"`
	if initialized { // as long as requests would wait for it, no longer
		timeout = min(timeout, initializedWait)
		// The GET stream, asked for as the answer to initialize came, is
		// open before the server hears notifications/initialized: what it
		// sends while handling it goes to that stream.
		s.awaitGet(ctx)
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	end := &postEnd{cancel: cancel}
	s.endWithStream(end)
	defer func() {
		s.stopEnding(end)
		cancel()
	}()
	if initialized {
		s.mu.Lock()
		if s.initialized == nil {
			s.initialized = make(chan struct{})
		}
		s.mu.Unlock()
	}
	s.send(&exchange{ctx: pctx, b: bytes.Clone(b), top: top})
	if initialized {
		s.markInitialized()
	}
	return true
}

// markInitialized closes initialized, once the POST of
// notifications/initialized is over.
func (s *Stream) markInitialized() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.initialized != nil {
		select {
		case <-s.initialized:
		default:
			close(s.initialized)
		}
	}
}

// PostRequest sends request b (no newline) in the caller's goroutine and
// reads its answer there, handing the response, scanned, to own: no goroutine
// stands between a call and its POST. h are the request's own headers. It
// reports false, having sent nothing, when b must take the queue instead:
// a request other than initialize before the handshake is answered, or on
// the legacy transport.
//
// ctx bounds the POST: when it ends, the POST ends and nothing is
// delivered (the Connection then sends notifications/cancelled).
func (s *Stream) PostRequest(ctx context.Context, b []byte, h http.Header, own func(ndjson.Top)) bool {
	if s.life.Err() != nil {
		return false
	}
	top, ok := ndjson.ScanTop(b)
	initialize := ok && string(top.Method) == `"initialize"`
	s.mu.Lock()
	ready := s.legacy == nil && (s.version != "" || s.modern != "" || initialize)
	initialized := s.initialized
	if ready && initialize && isRequest(top) {
		s.initBody, s.initID = bytes.Clone(b), string(top.ID)
	}
	s.mu.Unlock()
	if !ready || !ok || !isRequest(top) {
		return false
	}
	if initialized != nil {
		if err := s.awaitInitialized(ctx, initialized); err != nil {
			return true // the call ends with ctx; nothing was sent
		}
	}
	// The transport may read the body after the answer has come, so it
	// gets its own copy. top still points into b, which the caller keeps
	// until postRequest returns; send uses it only until then.
	x := exchanges.Get().(*exchange)
	defer func() {
		*x = exchange{}
		exchanges.Put(x)
	}()
	*x = exchange{ctx: s.life, b: bytes.Clone(b), top: top, extra: h, own: own}
	if ctx.Done() != nil {
		pctx, cancel := context.WithCancel(ctx)
		x.end.cancel = cancel
		s.endWithStream(&x.end)
		defer func() {
			s.stopEnding(&x.end)
			cancel()
		}()
		x.ctx = pctx
	}
	s.send(x)
	return true
}

// exchanges are the exchanges of PostRequest, used again: nothing keeps
// one once its POST is over (the drain of an SSE answer's end keeps the
// body, not the exchange).
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// postEnd is the end of a POST that runs under its caller's ctx: Close
// ends it too. The stream keeps them in a list of its own, not in its
// life's context, whose map of children an idle stream would keep.
type postEnd struct {
	cancel     context.CancelFunc
	prev, next *postEnd
}

// endWithStream makes Close call p.cancel, until stopEnding; once the
// stream is closed, it calls it at once.
func (s *Stream) endWithStream(p *postEnd) {
	s.mu.Lock()
	if s.life.Err() != nil {
		s.mu.Unlock()
		p.cancel()
		return
	}
	p.next = s.posts
	if p.next != nil {
		p.next.prev = p
	}
	s.posts = p
	s.mu.Unlock()
}

// stopEnding takes p out of the list of endWithStream.
func (s *Stream) stopEnding(p *postEnd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case p.prev != nil:
		p.prev.next = p.next
	case s.posts == p:
		s.posts = p.next
	default:
		return // not in the list
	}
	if p.next != nil {
		p.next.prev = p.prev
	}
	p.prev, p.next = nil, nil
}

// endPosts ends every POST of endWithStream; the stream's life has ended.
func (s *Stream) endPosts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := s.posts; p != nil; p = p.next {
		p.cancel()
	}
}

// awaitInitialized waits until the POST of notifications/initialized is
// answered, at most initializedWait (a server that never answers it must
// not hold every request), and as long as ctx and the stream allow.
func (s *Stream) awaitInitialized(ctx context.Context, initialized chan struct{}) error {
	select {
	case <-initialized:
		return nil
	default:
	}
	timer := time.NewTimer(initializedWait)
	defer timer.Stop()
	select {
	case <-initialized:
	case <-timer.C:
	case <-s.life.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// initializedWait bounds how long requests wait for the answer to the
// POST of notifications/initialized.
const initializedWait = 2 * time.Second

// ownBytes is obj as bytes the stream may keep past the write: a message
// the Connection encoded already (json.RawMessage) is copied, not encoded
// again.
func ownBytes(obj any) ([]byte, error) {
	if raw, ok := obj.(json.RawMessage); ok {
		return bytes.Clone(raw), nil
	}
	return json.Marshal(obj)
}

// startSender starts the goroutine that POSTs the messages written to the
// queue: notifications and responses one at a time, in the order written,
// and requests, whose answers may stream for long, side by side. A request
// a call sends itself (postRequest) does not wait for the queue: the spec
// lets requests follow the answer to initialize at once, without waiting
// for notifications/initialized, and separate POSTs keep no order on the
// way to the server anyway.
//
// It returns the queue, made with the sender (a connection whose messages
// all go out from their callers' goroutines holds none), or nil once
// Close has begun without one.
func (s *Stream) startSender() *inbox {
	s.senderOnce.Do(func() {
		s.out = newInbox(s.cfg.errs.BadResult)
		s.senderDone = make(chan struct{})
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(s.senderDone)
			for {
				b, err := s.out.take()
				if err != nil {
					return
				}
				top, _ := ndjson.ScanTop(b)
				if !isRequest(top) {
					s.serial.Lock()
					s.send(&exchange{b: b, top: top})
					s.unsent.Add(-1)
					s.serial.Unlock()
					if string(top.Method) == `"notifications/initialized"` {
						s.markInitialized()
					}
					continue
				}
				if s.closing.Load() {
					continue // nobody waits for its answer any more
				}
				s.wg.Add(1)
				go func() {
					defer s.wg.Done()
					s.send(&exchange{b: b, top: top})
				}()
			}
		}()
	})
	return s.out
}

func isRequest(top ndjson.Top) bool { return top.ID != nil && top.Method != nil }

// track gives the POST of request id its own context, which abandon ends.
func (s *Stream) track(id []byte) (context.Context, func()) {
	ctx, cancel := context.WithCancel(s.life)
	key := string(id)
	s.mu.Lock()
	if s.inflight == nil {
		s.inflight = map[string]context.CancelFunc{}
	}
	s.inflight[key] = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.inflight, key)
		s.mu.Unlock()
		cancel()
	}
}

// abandon ends the POST of the request that params of
// notifications/cancelled name: the caller has given up on it, so its
// connection, its goroutine and the server's work on it end now, not at
// Close.
func (s *Stream) abandon(params []byte, now bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	s.mu.Lock()
	cancel := s.inflight[string(p.RequestID)]
	s.mu.Unlock()
	switch {
	case cancel == nil:
	case now:
		cancel()
	default:
		// Let the notification go out first: it is queued behind the
		// abandoned request, and the server should hear why it ends.
		time.AfterFunc(abandonDelay, cancel)
	}
}

// defaultNotifyTimeout bounds the POST of a notification or response when
// Options.NotifyTimeout is zero.
const defaultNotifyTimeout = 10 * time.Second

// abandonDelay is how long an abandoned request's POST lives on, so that
// notifications/cancelled reaches the server before the request ends.
const abandonDelay = 100 * time.Millisecond

// send POSTs one message and delivers what comes back. A request's POST
// has its own context (see track) unless x has one.
func (s *Stream) send(x *exchange) {
	b, top := x.b, x.top
	fail := func(err error) {
		if s.life.Err() != nil {
			return
		}
		if isRequest(top) { // only this call fails
			if !s.in.route(top.ID, err) {
				s.replyMsg(x, failureResponse(top.ID, err))
			}
			return
		}
		s.cfg.logger.Warn("mcp: http post failed", "err", err)
	}
	ctx := x.ctx
	switch {
	case ctx != nil:
	case isRequest(top):
		var done func()
		ctx, done = s.track(top.ID)
		defer done()
		s.mu.Lock()
		if extra, ok := s.extra[string(top.ID)]; ok {
			x.extra = extra
			delete(s.extra, string(top.ID))
		}
		s.mu.Unlock()
	default:
		// Later messages wait for this one: a server that never answers it
		// must not hold them for long.
		var cancel context.CancelFunc
		timeout := s.notifyTimeout
		if timeout <= 0 {
			timeout = defaultNotifyTimeout
		}
		ctx, cancel = context.WithTimeout(s.life, timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		resp, err := s.postCtx(ctx, b, top, x.extra)
		if err != nil {
			if ctx.Err() != nil && s.life.Err() == nil && isRequest(top) {
				return // abandoned by its caller
			}
			fail(fmt.Errorf("mcp: http post: %w", err))
			return
		}
		switch {
		case s.sessionGone(resp) && attempt == 0 && string(top.Method) != `"initialize"`:
			stale := resp.Request.Header.Get("Mcp-Session-Id")
			resp.Body.Close()
			if err := s.reinitialize(ctx, stale); err != nil {
				fail(fmt.Errorf("mcp: session expired and a new one could not start: %w", err))
				return
			}
			continue // retry once in the new session
		case resp.StatusCode/100 != 2 && isRequest(top) && resp.StatusCode != 401 && resp.StatusCode != 403:
			// A modern server answers 400 or 404 with the JSON-RPC error
			// (unsupported version, unknown method, header mismatch): that
			// error is the answer. Anything else is a failed exchange.
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			rpcErr, isRPC := jsonrpcError(body)
			initialize := string(top.Method) == `"initialize"`
			switch {
			case isRPC && (!initialize || modernCode(rpcErr)):
				s.replyMsg(x, withID(top.ID, rpcErr))
			case s.fallbackToSSE && initialize && (resp.StatusCode == 400 || resp.StatusCode == 404 || resp.StatusCode == 405):
				s.fallback(b, fail)
			default:
				fail(s.cfg.statusErrorBody(resp, body))
			}
			return
		case resp.StatusCode/100 != 2:
			err := s.cfg.statusError(resp)
			resp.Body.Close()
			fail(err)
			return
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" && string(top.Method) == `"initialize"` {
			s.mu.Lock()
			s.session = id
			s.mu.Unlock()
		}
		s.receive(ctx, resp, x, fail)
		return
	}
}

// reply hands over msg, the response to x's request, scanned as top: to
// x.own when it is the first message back, else to ReadObject after what
// came before it.
func (s *Stream) reply(x *exchange, msg []byte, top ndjson.Top) {
	if x.own != nil && x.n == 0 {
		x.n++
		s.answered(top)
		x.own(top)
		return
	}
	x.n++
	s.deliver(msg)
}

// replyMsg is reply for a response made here (an error standing for a
// failed exchange), not yet scanned.
func (s *Stream) replyMsg(x *exchange, msg []byte) {
	top, _ := ndjson.ScanTop(msg)
	s.reply(x, msg, top)
}

// sessionGone reports whether resp says that the session its request
// named is no more: 404, as the spec says, or 400, as servers that lost
// their sessions in a restart answer too (server-everything: "No valid
// session ID provided"). Either way a new session is started and the
// request sent again, once.
func (s *Stream) sessionGone(resp *http.Response) bool {
	if !s.hadSession(resp) {
		return false
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.modern == "" // a modern server's 400 carries its answer
	}
	return false
}

// hadSession reports whether the request of resp carried a session id.
func (s *Stream) hadSession(resp *http.Response) bool {
	return resp.Request != nil && resp.Request.Header.Get("Mcp-Session-Id") != ""
}

// postCtx POSTs b, with extra added to its headers in the modern era.
func (s *Stream) postCtx(ctx context.Context, b []byte, top ndjson.Top, extra http.Header) (*http.Response, error) {
	req, err := s.cfg.newRequest(ctx, http.MethodPost, s.cfg.target, b)
	if err != nil {
		return nil, err
	}
	req.Header["Accept"] = acceptAnswers
	s.mu.Lock()
	modern, modernHeader := s.modern, s.modernHeader
	s.mu.Unlock()
	if modern == "" {
		if err := s.awaitSession(ctx); err != nil {
			return nil, err
		}
		s.sessionHeaders(req)
		return s.cfg.do(req)
	}
	req.Header["Mcp-Protocol-Version"] = modernHeader
	mcpheader.SetStandard(req.Header, top.Method, top.Params)
	for k, v := range extra {
		req.Header[k] = v
	}
	return s.cfg.do(req)
}

// awaitSession waits, within ctx, while a new session starts: a request
// sent meanwhile would reach it before it is ready.
func (s *Stream) awaitSession(ctx context.Context) error {
	s.mu.Lock()
	wait := s.resession
	s.mu.Unlock()
	if wait == nil {
		return nil
	}
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jsonrpcError returns the error member of a JSON-RPC error response body.
func jsonrpcError(body []byte) (json.RawMessage, bool) {
	top, ok := ndjson.ScanTop(body)
	if !ok || top.Error == nil || top.Method != nil || !json.Valid(body) {
		return nil, false
	}
	return top.Error, true
}

// modernCode reports whether a JSON-RPC error member has a code only the
// modern revision uses.
func modernCode(errMember json.RawMessage) bool {
	var e struct{ Code int64 }
	json.Unmarshal(errMember, &e)
	switch e.Code {
	case -32020, -32021, -32022: // the modern revision's own errors
		return true
	}
	return false
}

// withID is the error response to request id with the error member e.
func withID(id []byte, e json.RawMessage) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, e...)
	return append(b, '}')
}

func (s *Stream) sessionHeaders(req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != "" {
		if len(s.sessionHeader) == 0 || s.sessionHeader[0] != s.session {
			s.sessionHeader = []string{s.session}
		}
		req.Header["Mcp-Session-Id"] = s.sessionHeader
	}
	if s.version != "" {
		if len(s.versionHeader) == 0 || s.versionHeader[0] != s.version {
			s.versionHeader = []string{s.version}
		}
		req.Header["Mcp-Protocol-Version"] = s.versionHeader
	}
}

// receive reads the answer to a POST: nothing (202), one JSON message, or
// an SSE stream, resumed if it breaks before the response. ctx is the
// exchange's: it bounds the resumption too.
func (s *Stream) receive(ctx context.Context, resp *http.Response, x *exchange, fail func(error)) {
	body := resp.Body
	defer func() {
		if body != nil {
			body.Close()
		}
	}()
	top := x.top
	ct := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.ContentLength == 0 && ct == "":
		if isRequest(top) {
			fail(errors.New("mcp: server accepted a request without answering it"))
		}
	case ct == "application/json":
		b, err := readBody(resp, s.cfg.maxSize())
		switch {
		case err != nil:
			fail(fmt.Errorf("mcp: http read: %w", err))
		case len(b) > s.cfg.maxSize():
			fail(s.cfg.errs.TooLarge(int64(len(b)), s.cfg.maxSize()))
		default:
			s.answer(b, x, fail)
		}
	case ct == "text/event-stream":
		x.body = endWatch{Reader: resp.Body}
		done, last, retry, err := s.readEvents(&x.body, x)
		if done && x.body.ended {
			return // the stream ended with the response, in the same read
		}
		if done {
			// What follows the response is read apart: the caller has its
			// answer now, not after the stream's end. It waits drainGrace
			// at most, so that a stream whose end is on its way gives its
			// connection back before the next request looks for one.
			drained := make(chan struct{})
			s.wg.Add(1)
			go func(body io.ReadCloser) {
				defer s.wg.Done()
				drain(body)
				body.Close()
				close(drained)
			}(body)
			body = nil
			grace := time.NewTimer(drainGrace)
			select {
			case <-drained:
			case <-grace.C:
			}
			grace.Stop()
			return
		}
		if !isRequest(top) {
			return
		}
		s.mu.Lock()
		modern := s.modern != ""
		s.mu.Unlock()
		if modern { // no resumption in this era: the request is sent again, as a new one
			if err == nil {
				err = errors.New("the stream ended before the response")
			}
			fail(&StreamBrokenError{Err: err})
			return
		}
		s.resume(ctx, x, last, retry, err, fail)
	default:
		fail(fmt.Errorf("mcp: http answer of type %q", ct))
	}
}

// mediaType is the media type of a Content-Type value, in lower case,
// without parameters ("" when there is none). A malformed value yields
// something no case matches.
func mediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimSpace(v)
	for _, known := range [...]string{"application/json", "text/event-stream"} {
		if strings.EqualFold(v, known) {
			return known
		}
	}
	return strings.ToLower(v)
}

// readBody reads the body of resp, up to max+1 bytes: a longer body is
// over the bound. A body of known length up to exactRead is read into one
// buffer of its size; a longer one into a buffer that starts at exactRead
// and doubles up to the declared length as the bytes arrive, so that a
// length declared and not sent costs little.
func readBody(resp *http.Response, max int) ([]byte, error) {
	n := resp.ContentLength
	if n < 0 || n > int64(max) {
		return io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	}
	b := make([]byte, 0, min(n, exactRead))
	for {
		if len(b) == cap(b) {
			if int64(len(b)) == n {
				return b, nil
			}
			b = slices.Grow(b, int(min(int64(2*cap(b)), n))-len(b))
		}
		m, err := resp.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		switch {
		case err == io.EOF && int64(len(b)) < n:
			return nil, io.ErrUnexpectedEOF
		case err == io.EOF:
			return b, nil
		case err != nil:
			return nil, err
		}
	}
}

// exactRead is the largest declared length readBody allocates at once.
const exactRead = 4 << 20

// drain reads what follows the response on its SSE stream (normally just
// the stream's end) so that the connection goes back to the pool instead
// of being closed with data unread: up to 64 KiB, for up to 100 ms.
func drain(body io.ReadCloser) {
	t := time.AfterFunc(DrainTimeout, func() { body.Close() })
	io.CopyN(io.Discard, body, 64<<10)
	t.Stop()
}

// DrainTimeout bounds drain, which runs apart from the caller; drainGrace
// is how long the caller waits for it.
var DrainTimeout = 100 * time.Millisecond

const drainGrace = 2 * time.Millisecond

// answer delivers the JSON answer b to the POST of top. The answer to a
// request must be its response: anything else (an empty or broken body, a
// response with another id or none) fails that call at once, and the
// connection goes on.
func (s *Stream) answer(b []byte, x *exchange, fail func(error)) {
	top := x.top
	got, ok := ndjson.ScanTop(b)
	switch {
	case !ok || (got.Method == nil && !got.IsResponse()):
		if isRequest(top) {
			fail(fmt.Errorf("%w: the http answer is not a JSON-RPC message: %s", s.cfg.errs.BadResult, previewQuoted(b)))
		} else {
			s.cfg.logger.Debug("mcp: ignored an http answer that is not a JSON-RPC message", "body", previewQuoted(b))
		}
	case isRequest(top) && !(got.IsResponse() && bytes.Equal(got.ID, top.ID)):
		fail(fmt.Errorf("%w: the http answer to request %s is not its response (id %s)", s.cfg.errs.BadResult, top.ID, previewQuoted(got.ID)))
	case isRequest(top):
		s.reply(x, b, got)
	default:
		s.deliver(b)
	}
}

// previewQuoted is the start of b, quoted, for an error message.
func previewQuoted(b []byte) string {
	if b == nil {
		return "none"
	}
	if len(b) > 80 {
		return strconv.Quote(string(b[:80]) + "…")
	}
	return strconv.Quote(string(b))
}

// readEvents delivers the messages of an SSE stream: the answer to the
// request of x, or the GET stream when x has no request. done reports that the
// response arrived; last and retry are the stream's last event id and
// retry delay. x.n counts the messages delivered. Data that is not a
// JSON-RPC message is skipped.
func (s *Stream) readEvents(r io.Reader, x *exchange) (done bool, last string, retry time.Duration, err error) {
	each := func(ev sse.Event) bool {
		if ev.ID != "" {
			last = ev.ID
		}
		if ev.Retry > 0 {
			retry = ev.Retry
		}
		if len(ev.Data) == 0 {
			return true
		}
		top, ok := ndjson.ScanTop(ev.Data)
		if !ok {
			s.cfg.logger.Warn("mcp: skipped an sse event that is not a JSON-RPC message", "data", previewQuoted(ev.Data))
			return true
		}
		// Decide before delivering: the message belongs to its reader
		// from then on (a result is decoded in place).
		if isRequest(x.top) && top.IsResponse() && bytes.Equal(top.ID, x.top.ID) {
			s.reply(x, ev.Data, top)
			done = true
			return false // the response is in: this stream has served its purpose
		}
		x.n++
		s.deliver(ev.Data)
		return true
	}
	// Called directly, so that each stays on the stack.
	if isRequest(x.top) {
		err = s.cfg.readSSE(r, each)
	} else { // the GET stream: idle most of the time
		err = s.cfg.readIdleSSE(r, each)
	}
	return done, last, retry, err
}

// resume reconnects a broken response stream with GET and Last-Event-ID,
// waiting the server's retry delay (or a bounded backoff) before each try.
// Every wait and GET is bounded by ctx, the exchange's: when it ends, so
// does the resumption, and the call with it.
func (s *Stream) resume(ctx context.Context, x *exchange, last string, retry time.Duration, cause error, fail func(error)) {
	if last == "" {
		if cause == nil {
			cause = errors.New("the stream ended before the response")
		}
		fail(fmt.Errorf("mcp: http stream: %w", cause))
		return
	}
	backoff := firstBackoff
	for range maxResumes {
		if !s.pause(ctx, retry, &backoff) {
			return
		}
		resp, err := s.get(ctx, last)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			cause = err
			continue
		}
		if resp.StatusCode != http.StatusOK {
			cause = s.cfg.statusError(resp)
			resp.Body.Close()
			if resp.StatusCode == http.StatusMethodNotAllowed {
				break
			}
			continue
		}
		done, l, r, err := s.readEvents(resp.Body, x)
		resp.Body.Close()
		if done {
			return
		}
		if l != "" {
			last = l
		}
		if r > 0 {
			retry = r
		}
		cause = err
	}
	if cause == nil {
		cause = errors.New("the stream ended before the response")
	}
	fail(fmt.Errorf("mcp: http stream could not be resumed: %w", cause))
}

// pause waits before a reconnection: the server's retry delay when it
// gave one, but never less than minRetry, else a backoff that doubles up
// to maxRetry. It reports false when ctx ended (or the stream was closed)
// meanwhile.
func (s *Stream) pause(ctx context.Context, retry time.Duration, backoff *time.Duration) bool {
	wait := *backoff
	if retry > 0 {
		wait = max(retry, *backoff/2, minRetry)
	}
	*backoff = min(2**backoff, maxRetry)
	timer := time.NewTimer(min(wait, maxRetry))
	defer timer.Stop()
	select {
	case <-timer.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	case <-s.life.Done():
		return false
	}
}

// Bounds of the wait before a stream is reopened: a server's "retry: 1"
// must not turn into a thousand requests a second, and a broken server is
// tried less and less often, down to once every maxRetry.
const (
	minRetry     = 250 * time.Millisecond
	firstBackoff = time.Second
	maxRetry     = 30 * time.Second
)

// get opens a GET stream, bounded by ctx.
func (s *Stream) get(ctx context.Context, lastEventID string) (*http.Response, error) {
	req, err := s.cfg.newRequest(ctx, http.MethodGet, s.cfg.target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	s.sessionHeaders(req)
	return s.cfg.doStream(req)
}

// openGet starts the stream of the server's own messages, once, as the
// answer to initialize comes with the session's id: the GET goes out
// while the client takes the answer, and notifications/initialized waits
// until the server has answered it (see awaitGet), so that what the
// server sends from then on finds the stream open. No GET is sent
// when the server at this URL answered one with 405 (no stream) less than
// noGetMemory ago.
func (s *Stream) openGet() {
	noGet := s.knownNoGet()
	s.mu.Lock()
	if s.getOpened != nil || s.life.Err() != nil {
		s.mu.Unlock()
		return
	}
	opened := closedChan
	if !noGet {
		opened = make(chan struct{})
	}
	s.getOpened = opened
	s.mu.Unlock()
	if noGet {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.listen(opened)
	}()
}

// closedChan stands for a GET stream that is not to be awaited.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// awaitGet waits until the server has answered the GET stream, if one was
// asked for: at most getOpenWait, and as long as ctx and the stream last.
// notifications/initialized waits for it, so that the handshake ends with
// the stream open.
func (s *Stream) awaitGet(ctx context.Context) {
	s.mu.Lock()
	opened := s.getOpened
	s.mu.Unlock()
	if opened == nil {
		return
	}
	select {
	case <-opened:
		return
	default:
	}
	timer := time.NewTimer(getOpenWait)
	defer timer.Stop()
	select {
	case <-opened:
	case <-timer.C:
	case <-s.life.Done():
	case <-ctx.Done():
	}
}

// getOpenWait bounds how long sending waits for the GET stream to open.
const getOpenWait = 2 * time.Second

// listen keeps the GET stream open, reconnecting with Last-Event-ID after
// the server's retry delay or a bounded backoff, until Close. opened is
// closed once the first attempt has an answer.
func (s *Stream) listen(opened chan struct{}) {
	var once sync.Once
	signal := func() { once.Do(func() { close(opened) }) }
	defer signal()
	last, epoch := "", s.epoch()
	var retry time.Duration
	backoff := firstBackoff
	for s.life.Err() == nil {
		if e := s.epoch(); e != epoch { // a new session: the old one's event ids mean nothing there
			last, epoch = "", e
		}
		resp, err := s.get(s.life, last)
		if err == nil {
			s.setNoGet(resp.StatusCode == http.StatusMethodNotAllowed)
		}
		signal()
		switch {
		case err != nil:
		case resp.StatusCode == http.StatusMethodNotAllowed:
			resp.Body.Close()
			return // the server offers no stream of its own
		case resp.StatusCode != http.StatusOK:
			resp.Body.Close()
		default:
			stream := &exchange{}
			_, l, r, _ := s.readEvents(resp.Body, stream)
			resp.Body.Close()
			if stream.n > 0 { // the stream served: reopen it promptly
				backoff = firstBackoff
			}
			if l != "" {
				last = l
			}
			if r > 0 {
				retry = r
			}
		}
		if !s.pause(s.life, retry, &backoff) {
			return
		}
	}
}

// epoch is the number of sessions started after the first.
func (s *Stream) epoch() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionEpoch
}

// deliver hands a received message to ReadObject. The answer to
// initialize opens the GET stream first (see openGet).
func (s *Stream) deliver(msg []byte) {
	if top, ok := ndjson.ScanTop(msg); ok {
		s.answered(top)
	}
	s.in.put(msg)
}

// answered notes what a message coming back tells the stream: the answer
// to initialize gives the protocol version, and opens the GET stream.
func (s *Stream) answered(top ndjson.Top) {
	if !top.IsResponse() || top.Result == nil {
		return
	}
	s.mu.Lock()
	initAnswer := s.version == "" && string(top.ID) == s.initID
	if initAnswer {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(top.Result, &r) == nil {
			s.version = r.ProtocolVersion
		}
	}
	s.mu.Unlock()
	if initAnswer {
		s.openGet()
	}
}

// reinitialize starts a new session after the server forgot the old one
// (stale; if another request has already started a new one, there is
// nothing to do): initialize again, its answer read to the response and no
// further (its result is not delivered: the Connection has it already),
// then notifications/initialized in the new session, and only then is the
// new session used: requests meanwhile wait for it (see postCtx), and so
// does a request that finds its session gone while another starts the new
// one. Every step and wait is bounded by ctx, the call's. The old session
// is deleted in the background. On failure the stale session is kept, so
// that the next request tries again.
func (s *Stream) reinitialize(ctx context.Context, stale string) error {
	s.mu.Lock()
	if s.session != stale {
		s.mu.Unlock()
		return nil
	}
	if wait := s.resession; wait != nil { // another request is starting one
		s.mu.Unlock()
		select {
		case <-wait:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	body, initID := s.initBody, s.initID
	ready := make(chan struct{})
	s.resession = ready
	s.mu.Unlock()
	session, err := s.newSession(ctx, body, initID)
	s.mu.Lock()
	if err == nil {
		s.session = session
		s.sessionEpoch++
	}
	s.resession = nil
	s.mu.Unlock()
	close(ready)
	if err != nil {
		return err
	}
	s.wg.Add(1)
	go func() { // the old session, if the server still has it, is ours no more
		defer s.wg.Done()
		s.deleteSession(stale)
	}()
	s.cfg.logger.Debug("mcp: http session expired; started a new one", "url", redact.URL(s.cfg.target))
	return nil
}

// newSession sends initialize (body, id initID) and
// notifications/initialized, and returns the new session's id.
func (s *Stream) newSession(ctx context.Context, body []byte, initID string) (string, error) {
	if body == nil {
		return "", errors.New("no initialize to repeat")
	}
	resp, err := s.postSession(ctx, body, "")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", s.cfg.statusError(resp)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if err := s.initAnswer(resp, initID); err != nil {
		return "", err
	}
	resp2, err := s.postSession(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), session)
	if err != nil {
		return "", err
	}
	resp2.Body.Close()
	if resp2.StatusCode/100 != 2 {
		return "", s.cfg.statusError(resp2)
	}
	return session, nil
}

// initAnswer reads the answer to a repeated initialize up to its response:
// one JSON message, or an SSE stream read until the response to initID
// (a server may hold the stream open after it). The body is bounded by
// the request's ctx and the stream's maximum message size.
func (s *Stream) initAnswer(resp *http.Response, initID string) error {
	var msg []byte
	if mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		err := s.cfg.readSSE(resp.Body, func(ev sse.Event) bool {
			if top, ok := ndjson.ScanTop(ev.Data); ok && top.IsResponse() && string(top.ID) == initID {
				msg = ev.Data
				return false
			}
			return true // anything before it is of the old session's time
		})
		if msg == nil {
			if err == nil {
				err = errors.New("the stream ended before the response")
			}
			return fmt.Errorf("the answer to initialize: %w", err)
		}
	} else {
		b, err := readBody(resp, s.cfg.maxSize())
		if err != nil {
			return fmt.Errorf("the answer to initialize: %w", err)
		}
		msg = b
	}
	top, ok := ndjson.ScanTop(msg)
	switch {
	case !ok || !top.IsResponse():
		return fmt.Errorf("%w: the answer to initialize is not a JSON-RPC response: %s", s.cfg.errs.BadResult, previewQuoted(msg))
	case top.Error != nil:
		return fmt.Errorf("initialize was refused: %s", previewQuoted(top.Error))
	}
	return nil
}

// postSession POSTs b in session (none: ""), outside the requests that
// wait for a new session.
func (s *Stream) postSession(ctx context.Context, b []byte, session string) (*http.Response, error) {
	req, err := s.cfg.newRequest(ctx, http.MethodPost, s.cfg.target, b)
	if err != nil {
		return nil, err
	}
	req.Header["Accept"] = acceptAnswers
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	s.mu.Lock()
	version := s.version
	s.mu.Unlock()
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	return s.cfg.do(req)
}

// deleteSession ends session on the server, bounded by closeTimeout.
func (s *Stream) deleteSession(session string) {
	if session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.life), s.closeTimeout)
	defer cancel()
	if req, err := s.cfg.newRequest(ctx, http.MethodDelete, s.cfg.target, nil); err == nil {
		req.Header.Set("Mcp-Session-Id", session)
		if resp, err := s.cfg.do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// fallback switches to the legacy HTTP+SSE transport and sends b there.
func (s *Stream) fallback(b []byte, fail func(error)) {
	legacy, err := openSSE(s.life, s.cfg.target, s.cfg, s.in)
	if err != nil {
		fail(fmt.Errorf("mcp: server is neither Streamable HTTP nor HTTP+SSE: %w", err))
		return
	}
	s.mu.Lock()
	s.legacy = legacy
	s.mu.Unlock()
	s.cfg.logger.Debug("mcp: speaking the legacy HTTP+SSE transport", "url", redact.URL(s.cfg.target))
	legacy.WriteObject(json.RawMessage(b))
}

// Close POSTs the notifications and responses already written, stops
// every request and stream, then ends the session with DELETE (each step
// bounded by CloseTimeout; a server that never answers cannot hold it).
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.senderOnce.Do(func() {}) // no sender starts from now on
		if s.out != nil {
			s.out.end(s.cfg.errs.Closed)
		}
		if s.senderDone != nil {
			timer := time.NewTimer(s.closeTimeout)
			select {
			case <-s.senderDone:
			case <-timer.C:
			}
			timer.Stop()
		}
		s.cancel()
		s.endPosts()
		s.wg.Wait()
		s.mu.Lock()
		session, legacy := s.session, s.legacy
		s.mu.Unlock()
		if legacy != nil {
			legacy.Close()
		}
		if session != "" {
			ctx, cancel := context.WithTimeout(context.Background(), s.closeTimeout)
			if req, err := s.cfg.newRequest(ctx, http.MethodDelete, s.cfg.target, nil); err == nil {
				req.Header.Set("Mcp-Session-Id", session)
				if resp, err := s.cfg.do(req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
		}
		s.in.end(s.cfg.errs.Closed)
		s.in.discard()
		s.cfg.release()
	})
	return nil
}

func (s *Stream) UseLogger(lg *slog.Logger) { s.cfg.late.Use(lg) }

// HTTPVersion is the HTTP version of the server's last response ("1.1",
// "2"), "" before the first.
func (s *Stream) HTTPVersion() string { return s.cfg.HTTPVersion() }

// CancelsByClosing reports whether a request is cancelled by closing its
// response stream, with no notifications/cancelled sent: the 2026-07-28
// revision's way.
func (s *Stream) CancelsByClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modern != ""
}
