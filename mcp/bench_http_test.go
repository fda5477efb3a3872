package mcp_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// benchHTTPServer serves testproc.BenchHTTP and counts the TCP
// connections clients open to it.
func benchHTTPServer(b *testing.B, sse bool) (*httptest.Server, *atomic.Int64) {
	return countingServer(b, testproc.BenchHTTP(sse))
}

var httpAnswers = []struct {
	name string
	sse  bool
}{{"json", false}, {"sse", true}}

// BenchmarkHTTPCallTool is a sequential call over Streamable HTTP, with
// JSON and with SSE answers; conns/1kcalls counts the TCP connections
// opened per 1,000 calls after the first call.
func BenchmarkHTTPCallTool(b *testing.B) {
	for _, a := range httpAnswers {
		b.Run(a.name, func(b *testing.B) {
			srv, conns := benchHTTPServer(b, a.sse)
			c := benchConnect(b, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet})
			ctx := context.Background()
			args := map[string]string{"text": "hi"}
			if _, err := c.CallTool(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
			before := conns.Load()
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.CallTool(ctx, "echo", args)
				if err != nil || len(res.Content) != 1 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(conns.Load()-before)*1000/float64(b.N), "conns/1kcalls")
		})
	}
}

// BenchmarkHTTPCallToolParallel64 is 64 goroutines per core on one
// session.
func BenchmarkHTTPCallToolParallel64(b *testing.B) {
	for _, a := range httpAnswers {
		b.Run(a.name, func(b *testing.B) {
			srv, conns := benchHTTPServer(b, a.sse)
			c := benchConnect(b, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet})
			ctx := context.Background()
			args := map[string]string{"text": "hi"}
			before := conns.Load()
			b.ReportAllocs()
			b.SetParallelism(64)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := c.CallTool(ctx, "echo", args)
					if err != nil || len(res.Content) != 1 {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(conns.Load()-before)*1000/float64(b.N), "conns/1kcalls")
		})
	}
}

// BenchmarkHTTPLargeResult is a 1 MiB result as JSON.
func BenchmarkHTTPLargeResult(b *testing.B) {
	srv, _ := benchHTTPServer(b, false)
	c := benchConnect(b, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet})
	ctx := context.Background()
	args := map[string]int{"size": 1 << 20}
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		res, err := c.CallTool(ctx, "big", args)
		if err != nil || len(res.Content[0].Text) != 1<<20 {
			b.Fatal(err)
		}
	}
}

// BenchmarkManagerCall compares a call through a Manager with the same
// call on the Connection (in memory, so that the difference shows).
func BenchmarkManagerCall(b *testing.B) {
	ctx := context.Background()
	args := map[string]string{"text": "hi"}
	b.Run("connection", func(b *testing.B) {
		benchEcho(b, benchConnect(b, benchTransports[1].new()))
	})
	b.Run("manager", func(b *testing.B) {
		m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: quiet, ServerOptions: func(string, *config.Server) *mcp.Options {
			return &mcp.Options{ProtocolVersion: mcp.LatestLegacyVersion}
		}})
		b.Cleanup(func() { m.Close() })
		if err := m.Add("bench", benchTransports[1].new()); err != nil {
			b.Fatal(err)
		}
		if _, err := m.CallTool(ctx, "mcp__bench__echo", args); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := m.CallTool(ctx, "mcp__bench__echo", args)
			if err != nil || len(res.Content) != 1 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHTTPConnect is initialize, notifications/initialized,
// tools/list and Close over Streamable HTTP, at 2025-11-25.
func BenchmarkHTTPConnect(b *testing.B) {
	srv, conns := benchHTTPServer(b, false)
	ctx := context.Background()
	b.ReportAllocs()
	defer func() { b.ReportMetric(float64(conns.Load())/float64(b.N), "conns/op") }()
	for b.Loop() {
		c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, &mcp.Options{Logger: quiet, ProtocolVersion: mcp.LatestLegacyVersion})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Tools(ctx); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
