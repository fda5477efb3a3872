package mcp_test

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// startCounter is a set of fake servers that each take a while to start
// (in the fake time of testing/synctest), counting how many start at once.
type startCounter struct {
	mu             sync.Mutex
	inFlight, most int
	started        []string
}

// transport is a server that takes startup to start, then is served in
// process.
func (c *startCounter) transport(name string, startup time.Duration) mcp.Transport {
	srv := &mcptest.Server{Name: name}
	return mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		c.mu.Lock()
		c.inFlight++
		c.most = max(c.most, c.inFlight)
		c.started = append(c.started, name)
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.inFlight--
			c.mu.Unlock()
		}()
		select {
		case <-time.After(startup):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return srv.Transport().Connect(ctx)
	})
}

func TestManagerStartsServersInBatches(t *testing.T) {
	t.Setenv("MCP_SERVER_CONNECTION_BATCH_SIZE", "")
	t.Setenv("MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE", "")
	tests := []struct {
		name    string
		opts    mcp.ManagerOptions
		servers int
		batch   int
	}{
		{"servers a function starts, a batch of 2 given", mcp.ManagerOptions{ConnectBatch: 2, RemoteConnectBatch: 50}, 7, 2},
		{"servers a function starts, the default batch of 3", mcp.ManagerOptions{RemoteConnectBatch: 50}, 8, 3},
		{"a batch of 1", mcp.ManagerOptions{ConnectBatch: 1}, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Each server takes 0.9 s of its 1 s: queued behind the
				// others for longer than that, each still connects, since
				// its clock starts when it starts.
				opts := tt.opts
				opts.ConnectTimeout = time.Second
				opts.Logger = quiet
				m := mcp.NewManager(nil, &opts)
				defer m.Close()
				var c startCounter
				for i := range tt.servers {
					require.NoError(t, m.Add(fmt.Sprintf("s%02d", i), c.transport(fmt.Sprintf("s%02d", i), 900*time.Millisecond)))
				}
				start := time.Now()
				require.NoError(t, m.Connect(context.Background()), "every server connects")
				waves := (tt.servers + tt.batch - 1) / tt.batch
				assert.Equal(t, time.Duration(waves)*900*time.Millisecond, time.Since(start), "%d waves of %d", waves, tt.batch)
				assert.Equal(t, tt.batch, c.most, "at most the batch starts at once")
				for _, st := range m.Status() {
					assert.Equal(t, mcp.StateConnected, st.State, st.Name)
				}
			})
		})
	}
}

func TestManagerServerTimeoutRunsFromItsOwnStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := mcp.NewManager(nil, &mcp.ManagerOptions{ConnectBatch: 1, ConnectTimeout: time.Second, Logger: quiet})
		defer m.Close()
		var c startCounter
		require.NoError(t, m.Add("a-quick", c.transport("a-quick", 900*time.Millisecond)))
		require.NoError(t, m.Add("b-slow", c.transport("b-slow", 1100*time.Millisecond)))
		require.NoError(t, m.Add("c-quick", c.transport("c-quick", 900*time.Millisecond)))
		start := time.Now()
		err := m.Connect(context.Background())
		require.Error(t, err)
		assert.ErrorContains(t, err, `server "b-slow" did not start within 1s`)
		assert.Equal(t, 900*time.Millisecond+time.Second+900*time.Millisecond, time.Since(start),
			"b-slow is given up 1 s after its own start; c-quick starts then")
		states := map[string]mcp.State{}
		for _, st := range m.Status() {
			states[st.Name] = st.State
		}
		assert.Equal(t, map[string]mcp.State{"a-quick": mcp.StateConnected, "b-slow": mcp.StateFailed, "c-quick": mcp.StateConnected}, states)
	})
}

func TestManagerBatchWaitEndsWithClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := mcp.NewManager(nil, &mcp.ManagerOptions{ConnectBatch: 1, ConnectTimeout: time.Hour, Logger: quiet})
		var c startCounter
		require.NoError(t, m.Add("a", c.transport("a", 30*time.Minute)))
		require.NoError(t, m.Add("b", c.transport("b", 30*time.Minute)))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		assert.ErrorIs(t, m.Connect(ctx), context.DeadlineExceeded, "the caller's wait ends with its ctx")
		require.NoError(t, m.Close(), "Close ends the start under way and the wait for a place")
		assert.Len(t, c.started, 1, "the other never started")
	})
}

func TestManagerCountsCommandServersAsLocal(t *testing.T) {
	t.Setenv("MCP_SERVER_CONNECTION_BATCH_SIZE", "")
	t.Setenv("MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE", "")
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: quiet})
	defer m.Close()
	require.NoError(t, m.Add("child", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		return (&mcp.CommandTransport{Command: exec.Command("true")}).Connect(ctx)
	})))
	require.NoError(t, m.Add("remote", &mcp.StreamableHTTPTransport{URL: "http://127.0.0.1:1/mcp"}))
	require.NoError(t, m.Add("sse", &mcp.SSETransport{URL: "http://127.0.0.1:1/sse"}))
	assert.True(t, mcp.ServerIsLocal(m, "child"), "a function that may start a child counts as local")
	assert.False(t, mcp.ServerIsLocal(m, "remote"))
	assert.False(t, mcp.ServerIsLocal(m, "sse"))
}
