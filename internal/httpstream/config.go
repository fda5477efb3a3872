package httpstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcplug/mcplug/internal/latelog"
	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/redact"
)

// Config is what the HTTP streams of one transport share. Package mcp
// makes it: Client already sends requests through the transport's
// Authorizer and follows redirects only within the URL's origin.
type Config struct {
	URL            string
	Parsed         *url.URL // URL parsed, when the caller did; nil: parsed here
	Client         *http.Client
	Headers        http.Header
	HeaderFunc     func(context.Context) (http.Header, error)
	Logger         *slog.Logger
	Late           *latelog.Target // nil when the transport's own Logger was set
	MaxMessageSize int             // zero means ndjson.DefaultMaxMessageSize
	Errors         *Errors         // shared by the streams; not nil
	// Direct, when set, is Client's transport, and Client does nothing
	// else (no Jar, no Timeout) but follow redirects within the origin:
	// once a request through Client has come back without a redirect,
	// the requests go to Direct straight, without the copies Client makes
	// of each request's headers and URL in case it redirects. A redirect
	// met there sends the request again through Client, and the requests
	// after it go through Client again.
	Direct *http.Transport
	// StreamClient, when set, makes the GET requests of streams (the
	// server's own messages, resumptions), which hold their connection
	// while open; nil means Client.
	StreamClient *http.Client
	// Release, when set, is called once the stream is closed.
	Release func()
}

// Errors are the errors of package mcp the streams report, so that a
// call sees them as they are (errors.Is, errors.As).
type Errors struct {
	Closed    error                                        // a stream that ended
	BadResult error                                        // an answer that is not the response it must be
	TooLarge  func(size int64, max int) error              // a message past MaxMessageSize
	Status    func(resp *http.Response, body []byte) error // an answer that is not a success
}

// MaxQueue bounds the bytes of the messages waiting to be POSTed, as
// ndjson.MaxWriteQueue bounds a pipe's (tests lower it).
var MaxQueue = ndjson.MaxWriteQueue

func newConfig(c Config) *httpConfig {
	cfg := &httpConfig{target: c.URL, client: c.Client, direct: c.Direct, streamClient: c.StreamClient, releaseFn: c.Release, headers: sealed(c.Headers), headerFunc: c.HeaderFunc, logger: c.Logger, late: c.Late, maxMessageSize: c.MaxMessageSize, errs: c.Errors}
	u, err := c.Parsed, error(nil)
	if u == nil {
		u, err = url.Parse(c.URL)
	}
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		cfg.url = u
	}
	return cfg
}

// httpConfig is what the HTTP transports share.
type httpConfig struct {
	target string // the server's URL, as the transport was given it

	// target parsed, when it is an http(s) URL: the requests to it share
	// url, which nothing changes.
	url *url.URL

	client       *http.Client
	direct       *http.Transport // see Config.Direct
	streamClient *http.Client    // GET streams'; nil: client
	releaseFn    func()
	releaseOnce  sync.Once
	// proto is the HTTP version of the last response, major<<8 | minor,
	// for telemetry; 0 before the first. It and straight fit in the 4
	// bytes releaseOnce leaves.
	proto          atomic.Int32
	straight       atomic.Bool // the server did not redirect: requests go to direct
	headers        http.Header
	headerFunc     func(context.Context) (http.Header, error)
	logger         *slog.Logger
	late           *latelog.Target // nil when the transport's Logger was set
	maxMessageSize int
	errs           *Errors
}

func (c *httpConfig) maxSize() int {
	if c.maxMessageSize > 0 {
		return c.maxMessageSize
	}
	return ndjson.DefaultMaxMessageSize
}

// sealed is a copy of h with canonical keys whose value slices are full
// (len == cap): requests share them, and an append to one of them (Add)
// then makes a new slice instead of writing into the shared array.
func sealed(h http.Header) http.Header {
	if len(h) == 0 {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		vs = slices.Clone(vs)
		out[http.CanonicalHeaderKey(k)] = vs[:len(vs):len(vs)]
	}
	return out
}

// Header values every request shares (see sealed).
var (
	jsonContentType = []string{"application/json"}
	acceptAnswers   = []string{"application/json, text/event-stream"}
)

// newRequest builds a request with the static and per-request headers.
// Header values may be shared with other requests: replace them (Set),
// do not write into them.
func (c *httpConfig) newRequest(ctx context.Context, method, u string, body []byte) (*http.Request, error) {
	var req *http.Request
	if u == c.target && c.url != nil {
		// The URL parsed once, as NewRequestWithContext would parse it.
		req = (&http.Request{
			Method:     method,
			URL:        c.url,
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
			Header:     make(http.Header, 4+len(c.headers)),
			Host:       strings.TrimSuffix(c.url.Host, ":"),
		}).WithContext(ctx)
		switch {
		case body != nil && len(body) == 0:
			req.Body = http.NoBody
		case body != nil:
			// A body net/http knows for one in memory (a *bytes.Reader,
			// as NopCloser wraps it): the headers and the body go out in
			// one write.
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
	} else {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		var err error
		req, err = http.NewRequestWithContext(ctx, method, u, r)
		if err != nil {
			return nil, redact.Err(err)
		}
	}
	for k, vs := range c.headers {
		req.Header[k] = vs
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
		req.Header["Content-Type"] = jsonContentType
	}
	return req, nil
}

// do sends req; a transport error has its URL redacted.
// release gives back what the config holds (Config.Release), once.
func (c *httpConfig) release() {
	if c.releaseFn != nil {
		c.releaseOnce.Do(c.releaseFn)
	}
}

// doStream is do for a GET stream, through the stream client.
func (c *httpConfig) doStream(req *http.Request) (*http.Response, error) {
	if c.streamClient != nil {
		return c.doWith(c.streamClient, req)
	}
	return c.do(req)
}

func (c *httpConfig) do(req *http.Request) (*http.Response, error) { return c.doWith(c.client, req) }

func (c *httpConfig) doWith(client *http.Client, req *http.Request) (*http.Response, error) {
	direct := client == c.client && c.direct != nil
	if direct && c.straight.Load() {
		return c.roundTrip(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, redact.Err(err)
	}
	if direct && resp.Request != nil && resp.Request.URL == req.URL { // not redirected
		c.straight.Store(true)
	}
	c.proto.Store(int32(resp.ProtoMajor&0xff)<<8 | int32(resp.ProtoMinor&0xff))
	return resp, nil
}

// roundTrip sends req to the direct transport, as the client would: an
// error is a *url.Error naming the redacted URL, and a redirect sends req
// again through the client, which follows it, as do the requests after
// it.
func (c *httpConfig) roundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.direct.RoundTrip(req)
	if err != nil {
		return nil, redact.Err(&url.Error{Op: req.Method[:1] + strings.ToLower(req.Method[1:]), URL: req.URL.Redacted(), Err: err})
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if resp.Header.Get("Location") == "" {
			break
		}
		c.straight.Store(false)
		resp.Body.Close()
		again := req.Clone(req.Context())
		if req.GetBody != nil {
			if again.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		return c.doWith(c.client, again)
	}
	c.proto.Store(int32(resp.ProtoMajor&0xff)<<8 | int32(resp.ProtoMinor&0xff))
	return resp, nil
}

// HTTPVersion is the HTTP version of the server's last response ("1.1",
// "2"), "" before the first.
func (c *httpConfig) HTTPVersion() string {
	v := c.proto.Load()
	switch major, minor := int(v>>8), int(v&0xff); {
	case v == 0:
		return ""
	case v == 1<<8|1:
		return "1.1"
	case major >= 2:
		return strconv.Itoa(major)
	default:
		return strconv.Itoa(major) + "." + strconv.Itoa(minor)
	}
}

func (c *httpConfig) statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return c.statusErrorBody(resp, b)
}

// statusErrorBody is statusError with the body already read.
func (c *httpConfig) statusErrorBody(resp *http.Response, body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) > 512 {
		body = body[:512]
	}
	return c.errs.Status(resp, body)
}

// StreamBrokenError reports an SSE response stream of a modern server that
// ended before its response. The modern revision has no resumption: the
// Connection sends the request again as a new request, once.
type StreamBrokenError struct{ Err error }

func (e *StreamBrokenError) Error() string {
	return "mcp: the response stream broke before the response: " + e.Err.Error()
}

func (e *StreamBrokenError) Unwrap() error { return e.Err }

// failureResponse is the JSON-RPC error response that stands for a
// request whose exchange failed, on a stream whose failures have no route
// to the Connection (a Stream the program wrapped): the call fails with an
// error that says what failed, and only that call.
func failureResponse(id []byte, err error) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error":   map[string]any{"code": -32603, "message": err.Error()},
	})
	return b
}
