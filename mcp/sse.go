package mcp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/mcplug/mcplug/internal/httpstream"
)

// SSETransport connects to a server of the legacy HTTP+SSE transport
// (2024-11-05): messages are POSTed to the endpoint the SSE stream names
// (same origin only), and read from the stream. Connect's ctx bounds the
// wait for the endpoint only.
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

// Connect opens the SSE stream and waits for the endpoint.
func (t *SSETransport) Connect(ctx context.Context) (Stream, error) {
	cfg := newHTTPConfig(t.URL, t.Client, t.Auth, t.Headers, t.HeaderFunc, t.Logger, t.MaxMessageSize)
	s, err := httpstream.OpenSSE(ctx, cfg)
	if err != nil {
		if cfg.Release != nil {
			cfg.Release()
		}
		return nil, err
	}
	return sseStream{s}, nil
}

// sseStream is the HTTP+SSE stream (internal/httpstream), with the
// optional methods the Connection looks for.
type sseStream struct{ *httpstream.SSE }

func (s sseStream) httpVersion() string { return s.HTTPVersion() }

func (s sseStream) routeFailures(f func(id []byte, err error)) { s.RouteFailures(f) }
func (s sseStream) useLogger(lg *slog.Logger)                  { s.UseLogger(lg) }

// DescribeTransport is tcp to the URL's host and port.
func (t *SSETransport) DescribeTransport() (network, address string, port int) {
	return urlPeer(t.URL)
}

// The optional interfaces the HTTP+SSE stream offers.
var (
	_ TransportDescriber = (*SSETransport)(nil)
	_ MessageReader      = sseStream{}
	_ failureRouter      = sseStream{}
	_ loggerUser         = sseStream{}
)
