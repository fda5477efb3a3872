package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/httpstream"
	"github.com/mcplug/mcplug/internal/ndjson"
)

// StreamableHTTPTransport connects to a remote server over Streamable
// HTTP (protocol revision 2025-11-25 and later): sessions, resumption of a
// broken stream with Last-Event-ID, the GET stream of the server's own
// messages, and DELETE at Close, as docs/connection.md describes. A failed
// POST (a 5xx, a dropped connection) fails only its own call, with the Go
// error (*HTTPStatusError, *RedirectError). The program remembers what a
// connection learnt of its server (its era; a 405 to GET, for a minute)
// for the next connections to the same URL through the same Client, by
// this transport or another: a legacy server is probed once, not at
// every Connect.
type StreamableHTTPTransport struct {
	URL string

	// Client makes the requests; nil means the client shared by the
	// connections to the URL's origin, which keeps up to 256 idle
	// connections while one of them is open and closes them 250 ms after
	// the last one closes. Give it no overall Timeout: SSE streams stay
	// open.
	Client *http.Client
	// Headers are sent with every request; HeaderFunc, if set, adds headers
	// to each (a fresh token, say).
	Headers    http.Header
	HeaderFunc func(ctx context.Context) (http.Header, error)
	// Auth, if set, authorizes every request (OAuth: package mcp/auth); a
	// 401 or 403 answer lets it obtain credentials and the request is sent
	// again, at most twice.
	Auth Authorizer

	// FallbackToSSE switches to HTTP+SSE (SSETransport on the same URL)
	// when the server answers the initialize POST with 400, 404 or 405.
	FallbackToSSE bool

	// CloseTimeout bounds each step of Close (the notifications already
	// written, then the DELETE); zero means 2 seconds. NotifyTimeout bounds
	// the POST of a notification or an answer; zero means 10 seconds.
	CloseTimeout  time.Duration
	NotifyTimeout time.Duration
	// MaxMessageSize bounds one message; zero means 64 MiB.
	MaxMessageSize int
	Logger         *slog.Logger

	memory *httpstream.Memory // a Manager's for the server, when set; else memoryOf
}

// Connect returns the stream; nothing is sent before the first message.
func (t *StreamableHTTPTransport) Connect(ctx context.Context) (Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.URL == "" {
		return nil, errors.New("mcp: StreamableHTTPTransport.URL is empty")
	}
	return httpStream{httpstream.New(httpstream.Options{
		Config:        newHTTPConfig(t.URL, t.Client, t.Auth, t.Headers, t.HeaderFunc, t.Logger, t.MaxMessageSize),
		FallbackToSSE: t.FallbackToSSE,
		CloseTimeout:  t.CloseTimeout,
		NotifyTimeout: t.NotifyTimeout,
		Memory:        t.memoryOf(),
	})}, nil
}

// httpStream is the Streamable HTTP stream (internal/httpstream), with
// the optional methods the Connection looks for.
type httpStream struct{ *httpstream.Stream }

func (s httpStream) writeWithHeaders(b []byte, h http.Header) error { return s.WriteWithHeaders(b, h) }
func (s httpStream) setProtocolVersion(v string, modernEra bool)    { s.SetProtocolVersion(v, modernEra) }
func (s httpStream) postRequest(ctx context.Context, b []byte, h http.Header, own func(ndjson.Top)) bool {
	return s.PostRequest(ctx, b, h, own)
}
func (s httpStream) postNotification(ctx context.Context, b []byte) bool {
	return s.PostNotification(ctx, b)
}
func (s httpStream) routeFailures(f func(id []byte, err error)) { s.RouteFailures(f) }
func (s httpStream) useLogger(lg *slog.Logger)                  { s.UseLogger(lg) }
func (s httpStream) sessionID() string                          { return s.SessionID() }
func (s httpStream) httpVersion() string                        { return s.HTTPVersion() }
func (s httpStream) cancelsByClosing() bool                     { return s.CancelsByClosing() }
func (s httpStream) knownEra() string                           { return s.Era() }
func (s httpStream) rememberEra(e string)                       { s.SetEra(e) }

// NewHTTPTransport returns the transport for a remote server entry of type
// "http": Streamable HTTP, falling back to the legacy SSE transport for
// servers that predate it.
func NewHTTPTransport(url string, headers http.Header) *StreamableHTTPTransport {
	return &StreamableHTTPTransport{URL: url, Headers: headers, FallbackToSSE: true}
}

// memories is what the program learnt of the servers it reached over
// Streamable HTTP, by URL and Client (two clients may reach two servers
// at one URL, through proxies of their own, say), for at most
// maxMemories servers: past that, it starts again knowing nothing.
var memories struct {
	sync.Mutex
	m map[memoryKey]*httpstream.Memory
}

type memoryKey struct {
	url    string
	client *http.Client
}

const maxMemories = 1024

// memoryOf is what the program learnt of the transport's server: the
// Manager's memory of it, or that of its URL and Client.
func (t *StreamableHTTPTransport) memoryOf() *httpstream.Memory {
	if t.memory != nil {
		return t.memory
	}
	memories.Lock()
	defer memories.Unlock()
	key := memoryKey{t.URL, t.Client}
	m := memories.m[key]
	if m == nil {
		if memories.m == nil || len(memories.m) >= maxMemories {
			memories.m = map[memoryKey]*httpstream.Memory{}
		}
		m = &httpstream.Memory{}
		memories.m[key] = m
	}
	return m
}

// DescribeTransport is tcp to the URL's host and port.
func (t *StreamableHTTPTransport) DescribeTransport() (network, address string, port int) {
	return urlPeer(t.URL)
}

// The optional interfaces the Streamable HTTP stream offers.
var (
	_ TransportDescriber = (*StreamableHTTPTransport)(nil)
	_ headerWriter       = httpStream{}
	_ directPoster       = httpStream{}
	_ MessageReader      = httpStream{}
	_ eraCache           = httpStream{}
	_ sessionIDer        = httpStream{}
	_ failureRouter      = httpStream{}
	_ loggerUser         = httpStream{}
)
