package httpstream

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
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/origin"
	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/internal/sse"
)

// readSSE is sse.Read with the bound's error as package mcp's.
func (c *httpConfig) readSSE(r io.Reader, fn func(ev sse.Event) bool) error {
	return c.sseErr(sse.Read(r, c.maxSize(), fn))
}

// readIdleSSE is readSSE for a stream idle most of the time: the server's
// own messages (see sse.ReadIdle).
func (c *httpConfig) readIdleSSE(r io.Reader, fn func(ev sse.Event) bool) error {
	return c.sseErr(sse.ReadIdle(r, c.maxSize(), fn))
}

// sseErr is err, the bound's error made package mcp's.
func (c *httpConfig) sseErr(err error) error {
	if tl, ok := err.(*sse.TooLargeError); ok {
		return c.errs.TooLarge(tl.Size, tl.Max)
	}
	return err
}

// RouteFailures makes the failed exchanges of requests go to f, which
// fails their calls with the Go errors; with none, a failure is a
// JSON-RPC error response read like any other.
func (s *SSE) RouteFailures(f func(id []byte, err error)) { s.in.routeFailures(f) }

// SSE is a connection over the legacy HTTP+SSE transport; see package
// mcp's SSETransport.
type SSE struct {
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

// OpenSSE opens the SSE stream at c.URL and waits, within ctx, for its
// endpoint event.
func OpenSSE(ctx context.Context, c Config) (*SSE, error) {
	cfg := newConfig(c)
	return openSSE(ctx, c.URL, cfg, newInbox(cfg.errs.BadResult))
}

func openSSE(ctx context.Context, rawURL string, cfg *httpConfig, in *inbox) (*SSE, error) {
	base, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mcp: sse url: %w", redact.Err(err))
	}
	life, cancel := context.WithCancel(context.Background())
	s := &SSE{cfg: cfg, in: in, out: newInbox(cfg.errs.BadResult), life: life, cancel: cancel}
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
		resp, err := cfg.doStream(req)
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
		err := cfg.statusError(resp)
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
		err := cfg.readIdleSSE(resp.Body, func(ev sse.Event) bool {
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
			err = cfg.errs.Closed
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
		if err != nil || origin.Of(ep) != origin.Of(base) {
			s.Close()
			return nil, fmt.Errorf("mcp: sse endpoint %s is not on the server's origin %s", redact.URL(e), origin.Of(base))
		}
		s.endpoint = ep.String()
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

func (s *SSE) ReadObject(v any) error { return s.in.readObject(v) }

func (s *SSE) ReadMessage() ([]byte, error) { return s.in.take() }

// WriteObject queues the message for the endpoint; answers come on the
// stream. One goroutine POSTs the queue in order, so a request never
// overtakes notifications/initialized written before it.
func (s *SSE) WriteObject(obj any) error {
	if s.life.Err() != nil {
		return s.cfg.errs.Closed
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
	if err := s.out.putBounded(b, MaxQueue); err != nil {
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
func (s *SSE) abandon(params []byte) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	s.forget(string(p.RequestID))
}

// forget ends the POST of request id, or takes it out of the queue.
func (s *SSE) forget(id string) {
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
func (s *SSE) enqueue(id string) {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if s.queued == nil {
		s.queued = map[string]bool{}
	}
	s.queued[id] = true
}

// startPost reports whether the request id is still wanted, and makes it
// the POST under way, which cancel ends.
func (s *SSE) startPost(id string, cancel context.CancelFunc) bool {
	s.postMu.Lock()
	defer s.postMu.Unlock()
	if !s.queued[id] {
		return false // its caller gave up while it waited
	}
	delete(s.queued, id)
	s.postingID, s.stopPosting = id, cancel
	return true
}

func (s *SSE) endPost() {
	s.postMu.Lock()
	s.postingID, s.stopPosting = "", nil
	s.postMu.Unlock()
}

func (s *SSE) post(b []byte) {
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
		fail(s.cfg.statusError(resp))
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
}

// Close ends the stream and waits for its goroutines.
func (s *SSE) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.out.end(s.cfg.errs.Closed)
		s.wg.Wait()
		s.in.end(s.cfg.errs.Closed)
		s.in.discard()
		s.cfg.release()
	})
	return nil
}

func (s *SSE) UseLogger(lg *slog.Logger) { s.cfg.late.Use(lg) }

// HTTPVersion is the HTTP version of the server's last response ("1.1",
// "2"), "" before the first.
func (s *SSE) HTTPVersion() string { return s.cfg.HTTPVersion() }
