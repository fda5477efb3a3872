package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/sse"
)

// inbox is the queue of messages a remote stream has received and
// ReadObject has not taken yet.
type inbox struct {
	mu     sync.Mutex
	queue  [][]byte
	bytes  int // in queue
	wake   chan struct{}
	closed bool
	err    error // why the stream ended, returned once the queue is empty

	// fail, once the Connection named it, takes the failed exchanges of
	// requests (see failRequest).
	fail atomic.Pointer[func(id []byte, err error)]
}

// failRequest fails the request id, whose exchange failed, with err,
// which reaches the call as it is: through the Connection's route
// (failureRouter); on a stream with none, as a failureResponse read like
// any other message.
func (b *inbox) failRequest(id []byte, err error) {
	if f := b.fail.Load(); f != nil {
		(*f)(id, err)
		return
	}
	b.put(failureResponse(id, err))
}

// routeFailures makes failRequest hand failures to f.
func (b *inbox) routeFailures(f func(id []byte, err error)) { b.fail.Store(&f) }

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) put(msg []byte) {
	b.mu.Lock()
	if !b.closed {
		b.queue = append(b.queue, msg)
		b.bytes += len(msg)
	}
	b.mu.Unlock()
	b.kick()
}

// putBounded queues msg unless the queue already holds more than max
// bytes: a peer that does not take what is sent must not make it pile up
// without end.
func (b *inbox) putBounded(msg []byte, max int) error {
	b.mu.Lock()
	if b.bytes > 0 && b.bytes+len(msg) > max {
		n := b.bytes
		b.mu.Unlock()
		return &ndjson.WriteStalledError{Queued: n + len(msg), Max: max}
	}
	b.mu.Unlock()
	b.put(msg)
	return nil
}

func (b *inbox) kick() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// end makes ReadObject fail with err once the queue is drained.
func (b *inbox) end(err error) {
	b.mu.Lock()
	if !b.closed {
		b.closed, b.err = true, err
	}
	b.mu.Unlock()
	b.kick()
}

// discard drops what is queued: the stream was closed and nobody will
// read it.
func (b *inbox) discard() {
	b.mu.Lock()
	b.queue, b.bytes = nil, 0
	b.mu.Unlock()
}

// take waits for the next message.
func (b *inbox) take() ([]byte, error) {
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			msg := b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
			b.bytes -= len(msg)
			b.mu.Unlock()
			return msg, nil
		}
		if b.closed {
			err := b.err
			b.mu.Unlock()
			return nil, err
		}
		b.mu.Unlock()
		<-b.wake
	}
}

// readObject decodes the next message into v. A message that does not
// decode never ends the stream: a response stands for an error of its
// call (ErrBadResult), anything else is skipped.
func (b *inbox) readObject(v any) error {
	for {
		msg, err := b.take()
		if err != nil {
			return err
		}
		err = ndjson.DecodeFresh(msg, v)
		if err == nil {
			return nil
		}
		if top, ok := ndjson.ScanTop(msg); ok && top.IsResponse() {
			failed := fmt.Errorf("%w: the response does not decode: %v", ErrBadResult, err)
			if b.fail.Load() != nil {
				b.failRequest(top.ID, failed)
				continue
			}
			if ndjson.DecodeFresh(failureResponse(top.ID, failed), v) == nil {
				return nil
			}
		}
	}
}

// readSSE is sse.Read with the bound's error as a *MessageTooLargeError.
func readSSE(r io.Reader, max int, fn func(ev sse.Event) bool) error {
	err := sse.Read(r, max, fn)
	if tl, ok := err.(*sse.TooLargeError); ok {
		return &MessageTooLargeError{Size: tl.Size, Max: tl.Max}
	}
	return err
}

// SSETransport connects to a server that speaks the legacy HTTP+SSE
// transport of protocol revision 2024-11-05: it GETs the SSE endpoint,
// waits for the "endpoint" event, POSTs messages there (same origin only)
// and reads the server's messages from the stream. ctx of Connect bounds
// the wait for the endpoint only.
type SSETransport struct {
	URL        string
	Client     *http.Client // nil means the shared client (see StreamableHTTPTransport.Client)
	Headers    http.Header  // sent with every request
	HeaderFunc func(ctx context.Context) (http.Header, error)
	Auth       Authorizer // as StreamableHTTPTransport.Auth
	// MaxMessageSize bounds one message; zero means 64 MiB.
	MaxMessageSize int
	Logger         *slog.Logger
}

func (t *SSETransport) config() *httpConfig {
	return newHTTPConfig(t.URL, t.Client, t.Auth, t.Headers, t.HeaderFunc, t.Logger, t.MaxMessageSize)
}

// Connect opens the SSE stream and waits for the endpoint.
func (t *SSETransport) Connect(ctx context.Context) (Stream, error) {
	s, err := openSSE(ctx, t.URL, t.config(), newInbox())
	if err != nil {
		return nil, err
	}
	return s, nil
}

// sseStream is a connection over the legacy HTTP+SSE transport.
// routeFailures: see failureRouter.
func (s *sseStream) routeFailures(f func(id []byte, err error)) { s.in.routeFailures(f) }

type sseStream struct {
	// The requests queued and not yet POSTed, and the one being POSTed:
	// notifications/cancelled ends a request's POST, or takes it out of
	// the queue, so that an abandoned call holds no connection open at
	// the server (and the messages queued behind it wait no longer).
	postMu      sync.Mutex
	queued      map[string]bool
	postingID   string
	stopPosting context.CancelFunc

	cfg      *httpConfig
	endpoint string
	in       *inbox
	life     context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	once     sync.Once

	out        *inbox // messages waiting for the sender, in order
	senderOnce sync.Once
}

func openSSE(ctx context.Context, rawURL string, cfg *httpConfig, in *inbox) (*sseStream, error) {
	base, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mcp: sse url: %w", err)
	}
	life, cancel := context.WithCancel(context.Background())
	s := &sseStream{cfg: cfg, in: in, out: newInbox(), life: life, cancel: cancel}
	req, err := cfg.newRequest(life, http.MethodGet, rawURL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := cfg.do(req)
		got <- result{resp, err}
	}()
	var resp *http.Response
	select {
	case r := <-got:
		if r.err != nil {
			cancel()
			return nil, fmt.Errorf("mcp: sse: %w", r.err)
		}
		resp = r.resp
	case <-ctx.Done():
		cancel()
		if r := <-got; r.resp != nil {
			r.resp.Body.Close()
		}
		return nil, ctx.Err()
	}
	if resp.StatusCode != http.StatusOK {
		err := statusError(resp)
		resp.Body.Close()
		cancel()
		return nil, err
	}
	endpoint := make(chan string, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer resp.Body.Close()
		sent := false
		err := readSSE(resp.Body, cfg.maxSize(), func(ev sse.Event) bool {
			switch ev.Type {
			case "endpoint":
				if !sent {
					sent = true
					endpoint <- string(ev.Data)
				}
			case "", "message":
				if _, ok := ndjson.ScanTop(ev.Data); ok {
					s.in.put(ev.Data)
				} else if len(ev.Data) > 0 {
					cfg.logger.Warn("mcp: skipped an sse event that is not a JSON-RPC message", "data", previewQuoted(ev.Data))
				}
			}
			return true
		})
		if err == nil {
			err = errors.New("mcp: sse stream ended")
		}
		if life.Err() != nil {
			err = ErrClosed
		}
		s.in.end(err)
		close(endpoint)
	}()
	select {
	case e, ok := <-endpoint:
		if !ok {
			s.Close()
			return nil, errors.New("mcp: sse stream ended before the endpoint event")
		}
		ep, err := base.Parse(e)
		if err != nil || originOf(ep) != originOf(base) {
			s.Close()
			return nil, fmt.Errorf("mcp: sse endpoint %s is not on the server's origin %s", redactURL(e), originOf(base))
		}
		s.endpoint = ep.String()
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

func (s *sseStream) ReadObject(v any) error { return s.in.readObject(v) }

func (s *sseStream) readRaw() ([]byte, error) { return s.in.take() }

// WriteObject queues the message for the endpoint; answers come on the
// stream. One goroutine POSTs the queue in order, so a request never
// overtakes notifications/initialized written before it.
func (s *sseStream) WriteObject(obj any) error {
	if s.life.Err() != nil {
		return ErrClosed
	}
	b, err := ownBytes(obj)
	if err != nil {
		return err
	}
	top, _ := ndjson.ScanTop(b)
	request := top.ID != nil && top.Method != nil
	switch {
	case string(top.Method) == `"notifications/cancelled"`:
		s.abandon(top.Params)
	case request:
		s.enqueue(string(top.ID)) // before the sender can take it
	}
	s.senderOnce.Do(func() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				b, err := s.out.take()
				if err != nil {
					return
				}
				s.post(b)
			}
		}()
	})
	if err := s.out.putBounded(b, httpMaxQueue); err != nil {
		if request {
			s.forget(string(top.ID)) // not queued after all
		}
		return err
	}
	return nil
}

// ssePostTimeout bounds one POST of the legacy transport, whose answers
// come on the stream: a server that never answers a POST cannot hold the
// messages queued behind it for long.
const ssePostTimeout = 10 * time.Second

// abandon ends, or keeps from being sent, the POST of the request that the
// params of notifications/cancelled name.
func (s *sseStream) abandon(params []byte) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	s.forget(string(p.RequestID))
}

// forget ends the POST of request id, or takes it out of the queue.
func (s *sseStream) forget(id string) {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if s.postingID == id {
		s.stopPosting()
	}
	delete(s.queued, id)
}

// enqueue notes a request written and not yet POSTed. The set holds no
// more than the queue does: each entry leaves it at its POST, or at its
// cancellation.
func (s *sseStream) enqueue(id string) {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if s.queued == nil {
		s.queued = map[string]bool{}
	}
	s.queued[id] = true
}

// startPost reports whether the request id is still wanted, and makes it
// the POST under way, which cancel ends.
func (s *sseStream) startPost(id string, cancel context.CancelFunc) bool {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if !s.queued[id] {
		return false // its caller gave up while it waited
	}
	delete(s.queued, id)
	s.postingID, s.stopPosting = id, cancel
	return true
}

func (s *sseStream) endPost() {
	s.postMu.Lock()
	s.postingID, s.stopPosting = "", nil
	s.postMu.Unlock()
}

func (s *sseStream) post(b []byte) {
	top, _ := ndjson.ScanTop(b)
	isReq := top.ID != nil && top.Method != nil
	ctx, cancel := context.WithTimeout(s.life, ssePostTimeout)
	defer cancel()
	if isReq {
		if !s.startPost(string(top.ID), cancel) {
			return
		}
		defer s.endPost()
	}
	fail := func(err error) {
		if top.ID != nil && top.Method != nil { // a request: fail that call only
			s.in.failRequest(top.ID, err)
		} else {
			s.cfg.logger.Warn("mcp: sse post failed", "err", err)
		}
	}
	req, err := s.cfg.newRequest(ctx, http.MethodPost, s.endpoint, b)
	if err != nil {
		fail(err)
		return
	}
	resp, err := s.cfg.do(req)
	if err != nil {
		if s.life.Err() == nil && !(isReq && errors.Is(ctx.Err(), context.Canceled)) { // not given up on
			fail(fmt.Errorf("mcp: sse post: %w", err))
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		fail(statusError(resp))
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
}

// Close ends the stream and waits for its goroutines.
func (s *sseStream) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.out.end(ErrClosed)
		s.wg.Wait()
		s.in.end(ErrClosed)
		s.in.discard()
	})
	return nil
}

func (s *sseStream) useLogger(lg *slog.Logger) { s.cfg.late.Use(lg) }
