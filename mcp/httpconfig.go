package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/internal/latelog"
	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/origin"
)

// httpConfig is what the HTTP transports share.
type httpConfig struct {
	// rawURL parsed: the requests to it share url, which nothing changes.
	rawURL string
	url    *url.URL

	client         *http.Client
	origin         string // scheme://host:port of the server's URL; no redirect leaves it
	headers        http.Header
	headerFunc     func(context.Context) (http.Header, error)
	logger         *slog.Logger
	late           *latelog.Target // nil when the transport's Logger was set
	maxMessageSize int
}

// defaultHTTPClient is the HTTP transports' client when they are given
// none: http.DefaultClient's settings, but keeping enough idle connections
// per host for concurrent calls to reuse them (the default keeps two, so
// that 64 goroutines calling one server dial for most of their calls).
var defaultHTTPClient = &http.Client{Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 256
	return t
}()}

// newHTTPConfig fills in the defaults (defaultHTTPClient, slog.Default()),
// sends the client's requests through auth when it is set, and makes the
// client follow redirects only within rawURL's origin.
func newHTTPConfig(rawURL string, client *http.Client, auth Authorizer, headers http.Header, headerFunc func(context.Context) (http.Header, error), logger *slog.Logger, max int) *httpConfig {
	if client == nil {
		client = defaultHTTPClient
	}
	if auth != nil {
		client = withAuthorizer(client, auth)
	}
	var late *latelog.Target
	if logger == nil {
		logger, late = latelog.New()
	}
	cfg := &httpConfig{headers: sealed(headers), headerFunc: headerFunc, logger: logger, late: late, maxMessageSize: max}
	if u, err := url.Parse(rawURL); err == nil {
		cfg.origin = originOf(u)
		if u.Scheme == "http" || u.Scheme == "https" {
			cfg.rawURL, cfg.url = rawURL, u
		}
	}
	cfg.client = sameOriginClient(client, cfg.origin)
	return cfg
}

// sameOriginClient returns a copy of c that refuses redirects leaving
// origin: a redirect to another origin would carry the config's headers,
// the session id and the message body (tool arguments) to a stranger. The
// caller's own redirect policy still applies within the origin.
func sameOriginClient(c *http.Client, origin string) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if o := originOf(req.URL); o != origin {
			return &RedirectError{From: redactURL(via[len(via)-1].URL.String()), To: redactURL(req.URL.String())}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("mcp: stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// RedirectError reports a redirect the HTTP transports refused to follow
// because it leaves the server's origin (scheme, host and port). URLs are
// redacted.
type RedirectError struct {
	From, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("mcp: refused a redirect from %s to another origin (%s)", e.From, e.To)
}

// originOf is u's origin (scheme, host and port).
func originOf(u *url.URL) string { return origin.Of(u) }

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
	if u == c.rawURL && c.url != nil {
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
			return nil, redactErr(err)
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
func (c *httpConfig) do(req *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, redactErr(err)
	}
	return resp, nil
}

// HTTPStatusError reports an HTTP answer that is not a success. Header
// holds the answer's headers (WWW-Authenticate of a 401, Retry-After of a
// 429 or 503).
type HTTPStatusError struct {
	StatusCode int
	Body       string // the start of the body
	Header     http.Header
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
	return statusErrorBody(resp, b)
}

// statusErrorBody is statusError with the body already read.
func statusErrorBody(resp *http.Response, body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) > 512 {
		body = body[:512]
	}
	return &HTTPStatusError{StatusCode: resp.StatusCode, Body: string(body), Header: resp.Header.Clone()}
}

// streamBrokenError reports an SSE response stream of a modern server that
// ended before its response. The modern revision has no resumption: the
// Connection sends the request again as a new request, once.
type streamBrokenError struct{ Err error }

func (e *streamBrokenError) Error() string {
	return "mcp: the response stream broke before the response: " + e.Err.Error()
}

func (e *streamBrokenError) Unwrap() error { return e.Err }

// failureResponse is the JSON-RPC error response that stands for a
// request whose exchange failed, on a stream whose failures have no route
// to the Connection (a Stream the program wrapped): the call fails with an
// error that says what failed, and only that call.
func failureResponse(id []byte, err error) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error":   map[string]any{"code": CodeInternalError, "message": err.Error()},
	})
	return b
}
