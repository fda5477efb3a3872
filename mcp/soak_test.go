package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSoak runs a Manager with three stdio add servers under 64 calling
// goroutines while another kills server processes at random. Every call
// must succeed, or fail because it saw its server die; after each kill the
// server comes back; goroutines, open files and the heap stay flat; Close
// leaves no child. It runs for 2 seconds; MCPLUG_SOAK=2m (any
// duration) runs it longer.
func TestSoak(t *testing.T) {
	duration := soakDuration(t)
	noLeaks(t)
	servers := map[string]any{}
	for i := range 3 {
		servers[fmt.Sprintf("add%d", i)] = scenarioEntry("addserver")
	}
	const backoff, connect = 50 * time.Millisecond, 5 * time.Second
	m := newManager(t, configOf(t, servers), &mcp.ManagerOptions{RestartBackoff: backoff, MaxRestartBackoff: 4 * backoff, ConnectTimeout: connect})
	require.NoError(t, m.Connect(ctxTimeout(t, 30*time.Second)))

	var calls, sawCrash atomic.Int64
	var failMu sync.Mutex
	var failures []error
	call := func(r *rand.Rand) {
		server := fmt.Sprintf("mcp__add%d__add", r.IntN(3))
		a, b := r.IntN(1000), r.IntN(1000)
		// A call may wait for a restart: backoff and a connect, with room.
		ctx, cancel := context.WithTimeout(context.Background(), 4*backoff+connect+5*time.Second)
		defer cancel()
		res, err := m.CallTool(ctx, server, map[string]any{"a": a, "b": b})
		calls.Add(1)
		switch {
		case err == nil && res.Text() == fmt.Sprint(a+b):
		case errors.Is(err, mcp.ErrClosed):
			sawCrash.Add(1) // its server died under it
		default:
			failMu.Lock()
			failures = append(failures, fmt.Errorf("%s: result %v, error %v", server, res, err))
			failMu.Unlock()
		}
	}

	// Warm up, then take the baseline.
	warm := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		call(warm)
	}
	baseGoroutines, baseFDs, baseHeap := runtime.NumGoroutine(), openFDs(t), heapInUse()

	stop, wait := callers(7, call)
	kills := 0
	killer := rand.New(rand.NewPCG(3, 4))
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(100+killer.IntN(400)) * time.Millisecond) // the pace of the chaos, not a wait for a result
		if kids := testproc.LiveChildren(); len(kids) > 0 {
			if syscall.Kill(kids[killer.IntN(len(kids))], syscall.SIGKILL) == nil {
				kills++
			}
		}
	}
	close(stop)
	wait()

	// Every server is back: a call to each succeeds (a call may still see
	// the last kill; the next one waits for the restart).
	final := rand.New(rand.NewPCG(5, 6))
	for i := range 3 {
		ctx := ctxTimeout(t, 4*backoff+connect+5*time.Second)
		var err error
		for attempt := 0; attempt < 2; attempt++ {
			var res *mcp.CallToolResult
			res, err = m.CallTool(ctx, fmt.Sprintf("mcp__add%d__add", i), map[string]any{"a": 1, "b": final.IntN(10)})
			if err == nil {
				require.NotNil(t, res)
				break
			}
			require.ErrorIs(t, err, mcp.ErrClosed, "only a call that saw its server die may fail")
		}
		require.NoError(t, err, "server add%d came back", i)
	}
	restarts := 0
	for _, st := range m.Status() {
		assert.Equal(t, mcp.StateConnected, st.State, st.Name)
		restarts += st.Restarts
	}
	goroutines, fds, heap := runtime.NumGoroutine(), openFDs(t), heapInUse()
	t.Logf("soak %v: %d calls, %d saw their server die, %d kills, %d restarts; goroutines %d → %d, fds %d → %d, heap %d → %d KiB",
		duration, calls.Load(), sawCrash.Load(), kills, restarts, baseGoroutines, goroutines, baseFDs, fds, baseHeap>>10, heap>>10)
	failMu.Lock()
	assert.Empty(t, failures, "calls that failed for another reason than their server dying")
	failMu.Unlock()
	assert.Positive(t, kills)
	assert.GreaterOrEqual(t, restarts, kills/2, "killed servers were restarted")
	assert.LessOrEqual(t, goroutines, baseGoroutines+10, "goroutines stay flat")
	assert.LessOrEqual(t, fds, baseFDs+10, "open files stay flat")
	assert.Less(t, heap, baseHeap+32<<20, "the heap stays flat")

	require.NoError(t, m.Close())
	assert.Empty(t, testproc.LiveChildren(), "no server outlives Close")
}

// callers runs call in 64 goroutines, each with its own random source,
// until stop is closed; wait waits for them.
func callers(seed uint64, call func(*rand.Rand)) (stop chan struct{}, wait func()) {
	stop = make(chan struct{})
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), seed))
			for {
				select {
				case <-stop:
					return
				default:
					call(r)
				}
			}
		})
	}
	return stop, wg.Wait
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// soakDuration is how long a soak runs: a few seconds, or $MCPLUG_SOAK.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("MCPLUG_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "MCPLUG_SOAK is a duration, such as 2m")
		return d
	}
	if testing.Short() {
		t.Skip("a soak test; runs without -short")
	}
	return 2 * time.Second
}

// httpChild is an MCP server over Streamable HTTP run as a child process on
// a port of its own, which the soak kills and starts again on that port.
type httpChild struct {
	name  string
	port  int
	start func(port int) *exec.Cmd
	mu    sync.Mutex
	cmd   *exec.Cmd
}

func (h *httpChild) url() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", h.port) }

// run starts the server and waits until it takes connections.
func (h *httpChild) run(t *testing.T) {
	t.Helper()
	cmd := h.start(h.port)
	require.NoError(t, cmd.Start())
	h.mu.Lock()
	h.cmd = cmd
	h.mu.Unlock()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", h.port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, time.Minute, 10*time.Millisecond, "%s did not start", h.name)
}

// kill ends the server and reaps it.
func (h *httpChild) kill() {
	h.mu.Lock()
	cmd := h.cmd
	h.cmd = nil
	h.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestSoakHTTP runs a Manager with three Streamable HTTP servers, each a
// real child process (two fake servers and server-everything), under 64
// calling goroutines while the servers are killed and started again at
// random. Every call ends within its ctx, with a result or a typed error;
// after each restart the server is back; goroutines, open files and the
// heap stay flat; Close leaves nothing running. MCPLUG_SOAK=2m runs it
// longer.
func TestSoakHTTP(t *testing.T) {
	duration := soakDuration(t)
	node, script := everything(t)
	noLeaks(t)
	children := []*httpChild{
		{name: "fake0", start: func(port int) *exec.Cmd { return testproc.Command("http", fmt.Sprintf("PORT=%d", port)) }},
		{name: "fake1", start: func(port int) *exec.Cmd { return testproc.Command("http", fmt.Sprintf("PORT=%d", port)) }},
		{name: "everything", start: func(port int) *exec.Cmd {
			cmd := exec.Command(node, script, "streamableHttp")
			cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
			return cmd
		}},
	}
	servers := map[string]any{}
	for _, h := range children {
		h.port = freePort(t)
		h.run(t)
		servers[h.name] = map[string]any{"type": "http", "url": h.url()}
	}
	defer func() {
		for _, h := range children {
			h.kill()
		}
	}()
	const backoff, connect = 50 * time.Millisecond, 5 * time.Second
	m := newManager(t, configOf(t, servers), &mcp.ManagerOptions{RestartBackoff: backoff, MaxRestartBackoff: 4 * backoff, ConnectTimeout: connect})
	require.NoError(t, m.Connect(ctxTimeout(t, 30*time.Second)))

	var calls, failedTyped, late atomic.Int64
	var failMu sync.Mutex
	var failures []error
	const callTimeout = 3 * time.Second
	call := func(r *rand.Rand) {
		i := r.IntN(len(children))
		name, args, want := "mcp__"+children[i].name+"__add", map[string]any{"a": r.IntN(1000), "b": r.IntN(1000)}, ""
		if children[i].name == "everything" {
			msg := fmt.Sprint(r.IntN(1 << 20))
			name, args, want = "mcp__everything__echo", map[string]any{"message": msg}, msg
		} else {
			want = fmt.Sprint(args["a"].(int) + args["b"].(int))
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		start := time.Now()
		res, err := m.CallTool(ctx, name, args)
		calls.Add(1)
		if time.Since(start) > callTimeout+time.Minute { // a minute past its ctx stands for never: a busy machine is slow, not late
			late.Add(1)
		}
		switch {
		case err == nil && strings.Contains(res.Text(), want):
		case err != nil && typedCallError(err):
			failedTyped.Add(1) // its server died under it, or was down for its whole ctx
		default:
			failMu.Lock()
			if len(failures) < 20 {
				failures = append(failures, fmt.Errorf("%s: result %v, error %v", name, res, err))
			}
			failMu.Unlock()
		}
	}

	// What is left once the callers are done and the idle HTTP connections
	// (a pool, not a leak) are closed.
	settled := func() (int, int, uint64) {
		g, f := -1, -1
		require.Eventually(t, func() bool { // closed connections' goroutines end in their own time
			mcp.CloseIdleHTTPConnections()
			ng, nf := runtime.NumGoroutine(), openFDs(t)
			same := ng == g && nf == f
			g, f = ng, nf
			return same
		}, time.Minute, 100*time.Millisecond)
		return g, f, heapInUse()
	}

	stop, wait := callers(8, call)     // a warm-up without chaos
	time.Sleep(500 * time.Millisecond) // the warm-up's length, not a wait for a result
	close(stop)
	wait()
	baseGoroutines, baseFDs, baseHeap := settled()

	stop, wait = callers(9, call)
	restarts := 0
	chaos := rand.New(rand.NewPCG(3, 4))
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(200+chaos.IntN(600)) * time.Millisecond) // the pace of the chaos, not a wait for a result
		h := children[chaos.IntN(len(children))]
		h.kill()
		h.run(t)
		restarts++
	}
	close(stop)
	wait()

	// Every server is back after its last restart.
	for _, h := range children {
		name, args := "mcp__"+h.name+"__add", map[string]any{"a": 1, "b": 2}
		if h.name == "everything" {
			name, args = "mcp__everything__echo", map[string]any{"message": "back"}
		}
		require.Eventually(t, func() bool {
			_, err := m.CallTool(ctxTimeout(t, callTimeout), name, args)
			return err == nil
		}, time.Minute, 50*time.Millisecond, "%s came back", h.name)
	}
	// Flat: the goroutines and files of the connections that ended are
	// gone, once they have had their time (a minute stands for never).
	var goroutines, fds atomic.Int64
	flat := func() bool {
		mcp.CloseIdleHTTPConnections()
		goroutines.Store(int64(runtime.NumGoroutine()))
		fds.Store(int64(openFDs(t)))
		return goroutines.Load() <= int64(baseGoroutines+10) && fds.Load() <= int64(baseFDs+10)
	}
	assert.Eventually(t, flat, time.Minute, 100*time.Millisecond, "goroutines and open files stay flat")
	heap := heapInUse()
	t.Logf("http soak %v: %d calls, %d ended with a typed error, %d late, %d restarts; goroutines %d → %d, fds %d → %d, heap %d → %d KiB",
		duration, calls.Load(), failedTyped.Load(), late.Load(), restarts, baseGoroutines, goroutines.Load(), baseFDs, fds.Load(), baseHeap>>10, heap>>10)
	failMu.Lock()
	assert.Empty(t, failures, "calls that ended otherwise than with a result or a typed error")
	failMu.Unlock()
	assert.Zero(t, late.Load(), "calls that outlived their ctx")
	assert.Positive(t, restarts)
	assert.LessOrEqual(t, goroutines.Load(), int64(baseGoroutines+10), "goroutines stay flat")
	assert.LessOrEqual(t, fds.Load(), int64(baseFDs+10), "open files stay flat")
	assert.Less(t, heap, baseHeap+32<<20, "the heap stays flat")
	require.NoError(t, m.Close())
	mcp.CloseIdleHTTPConnections()
}

// typedCallError reports whether err is one a call may end with when its
// server goes away: the connection's end, its ctx, a protocol error, an
// HTTP status, or a network error, each matchable with errors.Is or As.
func typedCallError(err error) bool {
	var rpcErr *mcp.Error
	var status *mcp.HTTPStatusError
	var netErr net.Error
	return errors.Is(err, mcp.ErrClosed) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &rpcErr) || errors.As(err, &status) || errors.As(err, &netErr)
}
