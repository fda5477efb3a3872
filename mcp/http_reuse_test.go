package mcp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// countingServer serves h and counts the TCP connections opened to it.
func countingServer(t testing.TB, h http.Handler) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestHTTPConnectionsAreReused(t *testing.T) {
	t.Run("SSE answers flushed before the stream ends reuse the connection", func(t *testing.T) {
		bench := testproc.BenchHTTP(true)
		srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			bench.ServeHTTP(w, r)
			if r.Method == http.MethodPost && w.Header().Get("Content-Type") == "text/event-stream" {
				w.(http.Flusher).Flush() // the event goes out; the stream's end follows apart
			}
		}))
		for _, version := range []string{mcp.LatestLegacyVersion, mcp.LatestProtocolVersion} {
			c := connectWith(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, &mcp.Options{Logger: quiet, ProtocolVersion: version})
			ctx := ctxTimeout(t, 10*time.Second)
			_, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"})
			require.NoError(t, err)
			before := conns.Load()
			for range 20 {
				_, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"})
				require.NoError(t, err)
			}
			assert.LessOrEqual(t, conns.Load()-before, int64(1), "%s: new connections for 20 sequential calls", version)
		}
	})
	t.Run("64 goroutines on one session keep their connections", func(t *testing.T) {
		srv, conns := countingServer(t, testproc.BenchHTTP(false))
		c := connect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet})
		ctx := ctxTimeout(t, 30*time.Second)
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 50 {
					if _, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%d connections for 3,200 calls", conns.Load())
		assert.LessOrEqual(t, conns.Load(), int64(2*64), "about one connection per goroutine, not one per call")
	})
}

func TestSSEAnswerBelongsToItsCaller(t *testing.T) {
	// The stream looks at an answer only before handing it over: the
	// caller decodes it in place (under -race, a look after would race).
	noLeaks(t)
	srv := &mcptest.Server{}
	srv.AddTool(mcp.Tool{Name: "escaped"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		req.Session.Notify("notifications/message", map[string]any{"level": "info", "data": "first"}) // makes the answer an SSE stream
		return mcptest.TextResult(strings.Repeat("line\n\"quoted\"\t", 200)), nil
	})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	c := connect(t, &mcp.StreamableHTTPTransport{URL: ts.URL, Client: client, Logger: quiet})
	for range 20 {
		res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "escaped", nil)
		require.NoError(t, err)
		assert.Equal(t, strings.Repeat("line\n\"quoted\"\t", 200), res.Text())
	}
}
