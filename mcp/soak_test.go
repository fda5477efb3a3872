package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
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
// leaves no child. It runs for a few seconds; MCPLUG_SOAK=2m (any
// duration) runs it longer.
func TestSoak(t *testing.T) {
	duration := 3 * time.Second
	if v := os.Getenv("MCPLUG_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "MCPLUG_SOAK is a duration, such as 2m")
		duration = d
	} else if testing.Short() {
		t.Skip("a soak test; runs without -short")
	}
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

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for {
				select {
				case <-stop:
					return
				default:
					call(r)
				}
			}
		}()
	}
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
	wg.Wait()

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
