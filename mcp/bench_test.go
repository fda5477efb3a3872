package mcp_test

import (
	"context"
	"net"
	"testing"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// Benchmarks run against testproc.BenchServe, a server that answers from
// precomputed bytes, either as a child process over stdio or in process
// over net.Pipe. Run them with:
//
//	go test -run '^$' -bench . -benchmem ./mcp

type benchTransport struct {
	name string
	new  func() mcp.Transport
}

var benchTransports = []benchTransport{
	{"stdio", func() mcp.Transport {
		return &mcp.CommandTransport{Command: testproc.Command("bench"), Logger: quiet}
	}},
	{"inmemory", func() mcp.Transport {
		return mcp.TransportFunc(func(context.Context) (mcp.Stream, error) {
			client, server := net.Pipe()
			go func() {
				testproc.BenchServe(server, server)
				server.Close()
			}()
			return mcp.NewStream(client), nil
		})
	}},
}

// benchConnect connects in the legacy era (the benchmarks' baseline);
// benchConnectVersion in the one given ("" for the newest).
func benchConnect(b *testing.B, t mcp.Transport) *mcp.Connection {
	return benchConnectVersion(b, t, mcp.LatestLegacyVersion)
}

func benchConnectVersion(b *testing.B, t mcp.Transport, version string) *mcp.Connection {
	b.Helper()
	c, err := mcp.Connect(context.Background(), t, &mcp.Options{Logger: quiet, ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkCallToolEra compares a call in the two eras on the same
// server: a modern call adds the per-request _meta (encoded once per
// Connection) and the resultType check.
func BenchmarkCallToolEra(b *testing.B) {
	for _, bt := range benchTransports {
		for _, era := range []struct{ name, version string }{{"legacy", mcp.LatestLegacyVersion}, {"modern", mcp.LatestProtocolVersion}} {
			b.Run(bt.name+"/"+era.name, func(b *testing.B) {
				c := benchConnectVersion(b, bt.new(), era.version)
				if c.Modern() != (era.name == "modern") {
					b.Fatalf("connected in the wrong era: %s", c.InitializeResult().ProtocolVersion)
				}
				benchEcho(b, c)
			})
		}
	}
}

func BenchmarkCallTool(b *testing.B) {
	for _, bt := range benchTransports {
		b.Run(bt.name, func(b *testing.B) { benchEcho(b, benchConnect(b, bt.new())) })
	}
}

// benchEcho calls echo with a small argument, b.N times.
func benchEcho(b *testing.B, c *mcp.Connection) {
	ctx := context.Background()
	args := map[string]string{"text": "hi"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(ctx, "echo", args)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallToolParallel64(b *testing.B) {
	for _, bt := range benchTransports {
		b.Run(bt.name, func(b *testing.B) {
			c := benchConnect(b, bt.new())
			ctx := context.Background()
			args := map[string]string{"text": "hi"}
			b.ReportAllocs()
			b.SetParallelism(64) // 64 goroutines per GOMAXPROCS
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := c.CallTool(ctx, "echo", args)
					if err != nil || len(res.Content) != 1 {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkLargeResult(b *testing.B) {
	for _, size := range []struct {
		name, tool string
		n          int
	}{{"1MiB", "big", 1 << 20}, {"1MiB-plain", "plain", 1 << 20}, {"16MiB", "big", 16 << 20}} {
		for _, bt := range benchTransports {
			b.Run(size.name+"/"+bt.name, func(b *testing.B) {
				c := benchConnect(b, bt.new())
				ctx := context.Background()
				args := map[string]int{"size": size.n}
				b.ReportAllocs()
				b.SetBytes(int64(size.n))
				for b.Loop() {
					res, err := c.CallTool(ctx, size.tool, args)
					if err != nil || len(res.Content[0].Text) != size.n {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkConnect is initialize + tools/list + close, after spawning the
// server over stdio.
func BenchmarkConnect(b *testing.B) {
	for _, bt := range benchTransports {
		b.Run(bt.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				c, err := mcp.Connect(ctx, bt.new(), &mcp.Options{Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Tools(ctx); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkServerRequest is a tool call during which the server asks the
// client for its roots (a legacy server's request, served by the
// Connection and answered on the stream), in process over net.Pipe.
func BenchmarkServerRequest(b *testing.B) {
	srv := &mcptest.Server{Name: "asks"}
	srv.AddTool(mcp.Tool{Name: "roots"}, func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
		roots, err := r.Roots(ctx)
		if err != nil {
			return nil, err
		}
		return mcptest.TextResult(roots[0].URI), nil
	})
	c, err := mcp.Connect(context.Background(), srv.Transport(), &mcp.Options{Logger: quiet, ProtocolVersion: mcp.LatestLegacyVersion, Roots: []mcp.Root{{URI: "file:///work"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(ctx, "roots", nil); err != nil {
			b.Fatal(err)
		}
	}
}
