package mcp_test

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// What an idle connection costs, measured over many: the goroutines this
// module started (net/http's own, two for each open TCP connection, are
// counted apart, and so are the test's), counted exactly once the
// connections are idle, and the heap they hold after a collection,
// within a bound per connection.

// ownGoroutines counts the goroutines started by this module's code (not
// by net/http, the runtime, a test, or mcptest's servers).
func ownGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		i := bytes.Index(g, []byte("\ncreated by "))
		if i < 0 {
			continue
		}
		creator := string(g[i+len("\ncreated by "):])
		if strings.HasPrefix(creator, "github.com/mcplug/mcplug/") && !strings.Contains(creator, "/mcptest.") && !strings.Contains(creator, "_test.") {
			n++
		}
	}
	return n
}

// liveHeap is the live heap after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// idleServer is a server of testproc's idle scenarios in a process of
// its own.
type idleServer struct {
	url string
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
}

func startIdleServer(t *testing.T, scenario string) *idleServer {
	t.Helper()
	cmd := testproc.Command(scenario)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &idleServer{in: in, out: bufio.NewReader(stdout), cmd: cmd}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	line, err := s.out.ReadString('\n')
	require.NoError(t, err)
	s.url = strings.TrimSpace(line)
	return s
}

// ask sends the server a command and returns its answer, a number.
func (s *idleServer) ask(t *testing.T, command string) int {
	t.Helper()
	_, err := io.WriteString(s.in, command+"\n")
	require.NoError(t, err)
	line, err := s.out.ReadString('\n')
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	return n
}

func TestIdleConnectionCosts(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		goroutines int   // of this module's own, per connection
		shared     int   // goroutines shared by all the connections
		heap       int64 // bytes per connection, at most
		fds        int   // file descriptors per connection, on Linux
		// deaf connects with no callback for the server's notifications:
		// on a 2026-07-28 server one opens subscriptions/listen, a
		// request held open (a goroutine and a socket).
		deaf bool
		// start starts the server, if it runs apart, and returns how a
		// connection to it is made.
		start func(t *testing.T) (transport func() mcp.Transport, srv *idleServer)
	}{
		{
			name: "a stdio server costs 2 goroutines, at most 16 KiB and 4 file descriptors", n: 12, goroutines: 2, shared: 1, heap: 16 << 10, fds: 4,
			start: func(t *testing.T) (func() mcp.Transport, *idleServer) {
				return func() mcp.Transport { return child("basic") }, nil
			},
		},
		{
			name: "a stateful Streamable HTTP session costs 1 goroutine and 1 socket (its GET stream) and at most 16 KiB", n: 40, goroutines: 1, heap: 16 << 10, fds: 1,
			start: func(t *testing.T) (func() mcp.Transport, *idleServer) {
				s := startIdleServer(t, "http-stateful")
				return func() mcp.Transport { return &mcp.StreamableHTTPTransport{URL: s.url, Logger: quiet} }, s
			},
		},
		{
			name: "a stateless Streamable HTTP connection (2025-11-25, no session) costs no goroutine, no socket and at most 5 KiB", n: 40, goroutines: 0, heap: 5 << 10,
			start: func(t *testing.T) (func() mcp.Transport, *idleServer) {
				s := startIdleServer(t, "http-stateless")
				return func() mcp.Transport { return &mcp.StreamableHTTPTransport{URL: s.url, Logger: quiet} }, s
			},
		},
		{
			name: "a 2026-07-28 Streamable HTTP connection costs no goroutine, no socket and at most 4 KiB", n: 40, goroutines: 0, heap: 4 << 10, deaf: true,
			start: func(t *testing.T) (func() mcp.Transport, *idleServer) {
				s := startIdleServer(t, "http-modern")
				return func() mcp.Transport { return &mcp.StreamableHTTPTransport{URL: s.url, Logger: quiet} }, s
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			ctx := ctxTimeout(t, time.Minute)
			changed := make(chan struct{}, tt.n)
			opts := &mcp.Options{Logger: quiet, ToolListChanged: func(*mcp.Connection) { changed <- struct{}{} }}
			if tt.deaf {
				opts = &mcp.Options{Logger: quiet}
			}
			transport, srv := tt.start(t)
			// One connection first: what is set up once (pools, what is
			// remembered of the server) is no connection's cost.
			first, err := mcp.Connect(ctx, transport(), opts)
			require.NoError(t, err)
			require.NoError(t, first.Close())
			require.Eventually(t, func() bool { return ownGoroutines() == 0 }, 10*time.Second, 5*time.Millisecond, "the first connection left goroutines")
			heapBefore, fdsBefore := liveHeap(), openFDs(t)

			conns := make([]*mcp.Connection, tt.n)
			for i := range conns {
				conns[i], err = mcp.Connect(ctx, transport(), opts)
				require.NoError(t, err)
			}
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			want := tt.n*tt.goroutines + tt.shared
			require.Eventually(t, func() bool { return ownGoroutines() <= want }, 10*time.Second, 5*time.Millisecond,
				"idle, %d connections hold %d goroutines of their own, not at most %d", tt.n, ownGoroutines(), want)
			assert.Equal(t, want, ownGoroutines(), "the goroutines of %d idle connections", tt.n)
			if runtime.GOOS == "linux" {
				assert.Equal(t, tt.n*tt.fds, openFDs(t)-fdsBefore, "the file descriptors of %d idle connections", tt.n)
			}
			perConn := (liveHeap() - heapBefore) / int64(tt.n)
			t.Logf("%d connections: %d bytes of heap each", tt.n, perConn)
			assert.LessOrEqual(t, perConn, tt.heap, "heap per idle connection")

			if srv != nil && tt.goroutines > 0 {
				// Idle as they are, the sessions still hear the server.
				assert.Equal(t, tt.n, srv.ask(t, "notify"), "every session has its GET stream open")
				for range tt.n {
					select {
					case <-changed:
					case <-ctx.Done():
						t.Fatal("a notification sent to an idle session was not heard")
					}
				}
			}
			for _, c := range conns {
				require.NoError(t, c.Close())
			}
			conns = nil
			if srv != nil {
				// The idle connections close with the last session, not
				// 90 s later.
				require.Eventually(t, func() bool { return srv.ask(t, "conns") == 0 }, 10*time.Second, 10*time.Millisecond,
					"TCP connections left open after every session was closed")
			}
		})
	}
}
