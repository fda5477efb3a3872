package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// inbox is the queue of messages a remote stream has received and
// ReadObject has not taken yet.
type inbox struct {
	mu     sync.Mutex
	queue  [][]byte
	wake   chan struct{}
	closed bool
	err    error // why the stream ended, returned once the queue is empty
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) put(msg []byte) {
	b.mu.Lock()
	if !b.closed {
		b.queue = append(b.queue, msg)
	}
	b.mu.Unlock()
	b.kick()
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

// take waits for the next message.
func (b *inbox) take() ([]byte, error) {
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			msg := b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
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

func (b *inbox) readObject(v any) error {
	msg, err := b.take()
	if err != nil {
		return err
	}
	return ndjson.DecodeFresh(msg, v)
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event string
	data      []byte
	retry     time.Duration // zero when the event sets none
}

// readSSE reads server-sent events from r and calls fn with each event
// that carries data (priming events with an empty data field are skipped
// but their id and retry are reported through fn too). It returns at the
// end of the stream or when fn returns false.
func readSSE(r io.Reader, max int, fn func(ev sseEvent) bool) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull && len(long) <= max {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > max {
				return &MessageTooLargeError{Size: int64(len(long)), Max: max}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && err == nil:
			if hasData || ev.id != "" || ev.retry > 0 {
				ev.data = bytes.Clone(bytes.TrimSuffix(data.Bytes(), []byte{'\n'}))
				if !fn(ev) {
					return nil
				}
			}
			ev, hasData = sseEvent{}, false
			data.Reset()
		case len(line) > 0 && line[0] == ':': // a comment
		case len(line) > 0:
			field, value, _ := bytes.Cut(line, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(field) {
			case "data":
				data.Write(value)
				data.WriteByte('\n')
				hasData = true
				if data.Len() > max {
					return &MessageTooLargeError{Size: int64(data.Len()), Max: max}
				}
			case "id":
				ev.id = string(value)
			case "event":
				ev.event = string(value)
			case "retry":
				if ms, perr := strconv.Atoi(string(value)); perr == nil && ms >= 0 {
					ev.retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// httpConfig is what the HTTP transports share.
type httpConfig struct {
	client         *http.Client
	headers        http.Header
	headerFunc     func(context.Context) (http.Header, error)
	logger         *slog.Logger
	maxMessageSize int
}

func (c *httpConfig) maxSize() int {
	if c.maxMessageSize > 0 {
		return c.maxMessageSize
	}
	return ndjson.DefaultMaxMessageSize
}

// newRequest builds a request with the static and per-request headers.
func (c *httpConfig) newRequest(ctx context.Context, method, u string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	if c.headerFunc != nil {
		h, err := c.headerFunc(ctx)
		if err != nil {
			return nil, fmt.Errorf("mcp: header function: %w", err)
		}
		for k, vs := range h {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// errorResponse is the JSON-RPC error response standing for a request that
// failed at the HTTP level, so that only that call fails.
func errorResponse(id []byte, err error) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error":   map[string]any{"code": CodeInternalError, "message": err.Error(), "data": map[string]any{transportMarker: true}},
	})
	return b
}

// transportMarker marks the error responses that stand for a failed HTTP
// exchange: the Connection reports them as transport errors, not as the
// server's JSON-RPC errors.
const transportMarker = "mcplug/transport"

// HTTPStatusError reports an HTTP answer that is not a success.
type HTTPStatusError struct {
	StatusCode int
	Body       string // the start of the body
}

func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("mcp: http status %d", e.StatusCode)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return &HTTPStatusError{StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(b))}
}

// SSETransport connects to a server that speaks the legacy HTTP+SSE
// transport of protocol revision 2024-11-05: it GETs the SSE endpoint,
// waits for the "endpoint" event, POSTs messages there (same origin only)
// and reads the server's messages from the stream. ctx of Connect bounds
// the wait for the endpoint only.
type SSETransport struct {
	URL        string
	Client     *http.Client // nil means http.DefaultClient
	Headers    http.Header  // sent with every request
	HeaderFunc func(ctx context.Context) (http.Header, error)
	// MaxMessageSize bounds one message; zero means 64 MiB.
	MaxMessageSize int
	Logger         *slog.Logger
}

func (t *SSETransport) config() *httpConfig {
	return newHTTPConfig(t.Client, t.Headers, t.HeaderFunc, t.Logger, t.MaxMessageSize)
}

// newHTTPConfig fills in the defaults: http.DefaultClient, slog.Default().
func newHTTPConfig(client *http.Client, headers http.Header, headerFunc func(context.Context) (http.Header, error), logger *slog.Logger, max int) *httpConfig {
	if client == nil {
		client = http.DefaultClient
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &httpConfig{client: client, headers: headers, headerFunc: headerFunc, logger: logger, maxMessageSize: max}
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
type sseStream struct {
	cfg      *httpConfig
	endpoint string
	in       *inbox
	life     context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	once     sync.Once
}

func openSSE(ctx context.Context, rawURL string, cfg *httpConfig, in *inbox) (*sseStream, error) {
	base, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mcp: sse url: %w", err)
	}
	life, cancel := context.WithCancel(context.Background())
	s := &sseStream{cfg: cfg, in: in, life: life, cancel: cancel}
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
		resp, err := cfg.client.Do(req)
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
		err := readSSE(resp.Body, cfg.maxSize(), func(ev sseEvent) bool {
			switch ev.event {
			case "endpoint":
				if !sent {
					sent = true
					endpoint <- string(ev.data)
				}
			case "", "message":
				if len(ev.data) > 0 {
					s.in.put(ev.data)
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
		if err != nil || ep.Scheme != base.Scheme || ep.Host != base.Host {
			s.Close()
			return nil, fmt.Errorf("mcp: sse endpoint %q is not on the server's origin %s://%s", e, base.Scheme, base.Host)
		}
		s.endpoint = ep.String()
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

func (s *sseStream) ReadObject(v any) error { return s.in.readObject(v) }

// WriteObject POSTs the message to the endpoint; answers come on the stream.
func (s *sseStream) WriteObject(obj any) error {
	if s.life.Err() != nil {
		return ErrClosed
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.post(b)
	}()
	return nil
}

func (s *sseStream) post(b []byte) {
	top, _ := ndjson.ScanTop(b)
	fail := func(err error) {
		if top.ID != nil && top.Method != nil { // a request: fail that call only
			s.in.put(errorResponse(top.ID, err))
		} else {
			s.cfg.logger.Warn("mcp: sse post failed", "err", err)
		}
	}
	req, err := s.cfg.newRequest(s.life, http.MethodPost, s.endpoint, b)
	if err != nil {
		fail(err)
		return
	}
	resp, err := s.cfg.client.Do(req)
	if err != nil {
		if s.life.Err() == nil {
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
		s.wg.Wait()
		s.in.end(ErrClosed)
	})
	return nil
}
