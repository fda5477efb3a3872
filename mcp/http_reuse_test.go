package mcp_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// countingServer serves h and counts the TCP connections opened to it.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64) {
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
