package mcp_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowStart makes srv read nothing for d after its first message arrives,
// as a server does that is still starting (a cold npx, a container): what
// the client sent meanwhile waits in the pipe.
func slowStart(srv *mcptest.Server, d time.Duration) *mcptest.Server {
	var once sync.Once
	inner := srv.OnMessage
	srv.OnMessage = func(m *mcptest.Message) {
		once.Do(func() { time.Sleep(d) })
		if inner != nil {
			inner(m)
		}
	}
	return srv
}

func ignore(*mcptest.Session, *mcptest.Message) {}

// lateDiscover answers server/discover d after it arrives, as a server
// does whose handlers run concurrently: a request read after it may be
// answered first.
func lateDiscover(d time.Duration) mcptest.Handler {
	return func(s *mcptest.Session, m *mcptest.Message) {
		go func() {
			select {
			case <-time.After(d):
			case <-s.Context().Done():
				return
			}
			s.Reply(m.ID, map[string]any{
				"supportedVersions": mcptest.DualEra,
				"capabilities":      map[string]any{"tools": map[string]any{}},
				"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "late", "version": "1"}},
			})
		}()
	}
}

// The probe's waits are measured in the fake time of testing/synctest, so
// they do not depend on the machine's speed.
func TestEraProbe(t *testing.T) {
	tests := []struct {
		name     string
		srv      func() *mcptest.Server
		pinned   string
		want     string
		took     time.Duration // how long Connect took, in fake time
		initSent int           // how many initialize requests the server saw
		reason   string        // in the Info line that names the era
	}{
		{name: "a modern server that starts in 5 s is spoken to in 2026-07-28",
			srv:  func() *mcptest.Server { return slowStart(&mcptest.Server{Versions: mcptest.Modern}, 5*time.Second) },
			want: "2026-07-28", took: 5 * time.Second, initSent: 1, reason: "modern"},
		{name: "a dual-era server that starts in 5 s too, though initialize went out beside the probe",
			srv:  func() *mcptest.Server { return slowStart(&mcptest.Server{Versions: mcptest.DualEra}, 5*time.Second) },
			want: "2026-07-28", took: 5 * time.Second, initSent: 1, reason: "modern"},
		{name: "a slow dual-era server that answers initialize first and discover 100 ms later is spoken to in 2026-07-28",
			srv: func() *mcptest.Server {
				return slowStart(&mcptest.Server{Versions: mcptest.DualEra,
					Handlers: map[string]mcptest.Handler{"server/discover": lateDiscover(100 * time.Millisecond)}}, 5*time.Second)
			},
			want: "2026-07-28", took: 5*time.Second + 100*time.Millisecond, initSent: 1, reason: "modern"},
		{name: "a slow dual-era server whose discover answer comes more than 200 ms after initialize's is spoken to in 2025-11-25",
			srv: func() *mcptest.Server {
				return slowStart(&mcptest.Server{Versions: mcptest.DualEra,
					Handlers: map[string]mcptest.Handler{"server/discover": lateDiscover(time.Second)}}, 5*time.Second)
			},
			want: "2025-11-25", took: 5*time.Second + 200*time.Millisecond, initSent: 1, reason: "no answer to server/discover within 3s"},
		{name: "a dual-era server that answered ping before initialize is not waited for",
			srv: func() *mcptest.Server {
				return &mcptest.Server{Versions: mcptest.DualEra,
					Handlers: map[string]mcptest.Handler{"server/discover": lateDiscover(time.Second)}}
			},
			want: "2025-11-25", took: 200 * time.Millisecond, initSent: 1, reason: "answered ping"},
		{name: "a pinned modern version waits for a slow server",
			srv:    func() *mcptest.Server { return slowStart(&mcptest.Server{Versions: mcptest.Modern}, 5*time.Second) },
			pinned: "2026-07-28", want: "2026-07-28", took: 5 * time.Second, initSent: 0},
		{name: "a legacy server that starts in 5 s gets one initialize",
			srv:  func() *mcptest.Server { return slowStart(&mcptest.Server{}, 5*time.Second) },
			want: "2025-11-25", took: 5 * time.Second, initSent: 1, reason: "server/discover failed"},
		{name: "a slow server whose discover lists only a legacy version gets one initialize",
			srv: func() *mcptest.Server {
				return slowStart(&mcptest.Server{Versions: []string{"2027-01-01", "2025-11-25"}}, 5*time.Second)
			},
			want: "2025-11-25", took: 5 * time.Second, initSent: 1, reason: "lists only legacy versions"},
		{name: "a legacy server that refuses the probe costs nothing",
			srv:  func() *mcptest.Server { return &mcptest.Server{} },
			want: "2025-11-25", took: 0, initSent: 1, reason: "server/discover failed"},
		{name: "a legacy server that ignores the probe and answers ping costs 200 ms",
			srv: func() *mcptest.Server {
				return &mcptest.Server{Handlers: map[string]mcptest.Handler{"server/discover": ignore}}
			},
			want: "2025-11-25", took: 200 * time.Millisecond, initSent: 1, reason: "answered ping"},
		{name: "a legacy server that ignores the probe and ping costs 3.2 s (the wait for a late discover answer included)",
			srv: func() *mcptest.Server {
				return &mcptest.Server{Handlers: map[string]mcptest.Handler{"server/discover": ignore, "ping": ignore}}
			},
			want: "2025-11-25", took: 3*time.Second + 200*time.Millisecond, initSent: 1, reason: "no answer to server/discover within 3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &methods{}
				srv := tt.srv()
				inner := srv.OnMessage
				srv.OnMessage = func(m *mcptest.Message) {
					if inner != nil {
						inner(m)
					}
					rec.on(m)
				}
				var logs bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				start := time.Now()
				c, err := mcp.Connect(ctx, srv.Transport(), &mcp.Options{ProtocolVersion: tt.pinned,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
				require.NoError(t, err)
				took := time.Since(start)
				assert.Equal(t, tt.want, c.InitializeResult().ProtocolVersion)
				assert.Equal(t, tt.took, took, "Connect took")
				res, err := c.CallTool(ctx, "echo", map[string]string{"text": "after the handshake"})
				require.NoError(t, err)
				assert.Equal(t, "after the handshake", res.Text())
				require.NoError(t, c.Close())
				count := 0
				for _, m := range rec.list() {
					if m == "initialize" {
						count++
					}
				}
				assert.Equal(t, tt.initSent, count, "initialize requests")
				if tt.reason != "" {
					assert.Contains(t, logs.String(), "level=DEBUG", "the era is chosen quietly")
					assert.Contains(t, logs.String(), tt.reason)
				}
			})
		})
	}
	t.Run("a server that answers neither handshake fails at the Connect ctx, saying why", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"server/discover": ignore, "ping": ignore, "initialize": ignore}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := mcp.Connect(ctx, srv.Transport(), &mcp.Options{Logger: quiet})
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.ErrorContains(t, err, "no handshake answered before the end of the Connect ctx (server/discover and initialize unanswered; initialize was sent as no answer to server/discover within 3s)")
			assert.Equal(t, 10*time.Second, time.Since(start))
		})
	})
}

// A Connect ctx shorter than the probe's wait ends before initialize is
// sent: the error names the ctx, not the probe's 3 s.
func TestAHandshakeCutShortByItsCtxNamesTheCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"server/discover": ignore, "ping": ignore, "initialize": ignore}}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := mcp.Connect(ctx, srv.Transport(), &mcp.Options{Logger: quiet})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "no handshake answered before the end of the Connect ctx (server/discover unanswered)")
		assert.NotContains(t, err.Error(), "within 3s")
	})
}

// probeHolder is an Observer whose end of the server/discover probe waits
// for release: the probe's goroutine is then still running.
type probeHolder struct {
	release chan struct{}
	ended   atomic.Bool
}

func (p *probeHolder) StartOperation(ctx context.Context, op *mcp.Operation) (context.Context, map[string]string, func(mcp.Outcome)) {
	if op.Method != "server/discover" {
		return ctx, nil, func(mcp.Outcome) {}
	}
	return ctx, nil, func(mcp.Outcome) {
		<-p.release
		p.ended.Store(true)
	}
}

func (p *probeHolder) StartHandler(ctx context.Context, _ *mcp.Operation, _ map[string]string) (context.Context, func(mcp.Outcome)) {
	return ctx, func(mcp.Outcome) {}
}

func (p *probeHolder) StartSession(*mcp.Operation) func(error) { return func(error) {} }

// The probe the handshake let go (a legacy server that ignores
// server/discover) has ended, its end reported, when Close returns: no
// goroutine of it outlives the Connection.
func TestCloseWaitsForAProbeLetGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"server/discover": ignore}}
		obs := &probeHolder{release: make(chan struct{})}
		c, err := mcp.Connect(t.Context(), srv.Transport(), &mcp.Options{Logger: quiet, Observer: obs})
		require.NoError(t, err)
		require.Equal(t, "2025-11-25", c.InitializeResult().ProtocolVersion)
		closed := make(chan struct{})
		go func() {
			c.Close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			close(obs.release)
			t.Fatal("Close returned while the probe's goroutine still ran")
		default:
		}
		close(obs.release)
		<-closed
		assert.True(t, obs.ended.Load())
	})
}
