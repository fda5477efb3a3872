package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answers collects the client's answers to the fake server's requests.
type answers struct {
	mu   sync.Mutex
	byID map[string]json.RawMessage
	all  chan struct{}
	want int
}

func newAnswers(want int) *answers {
	return &answers{byID: map[string]json.RawMessage{}, all: make(chan struct{}), want: want}
}

func (a *answers) on(m *mcptest.Message) {
	if m.Method != "" || m.ID == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	body := m.Error
	if body == nil {
		body = m.Result
	}
	a.byID[string(m.ID)] = body
	if len(a.byID) == a.want {
		close(a.all)
	}
}

func (a *answers) wait(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case <-a.all:
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not answer every request")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byID
}

func TestServerRequestsAreBounded(t *testing.T) {
	t.Run("past MaxServerRequests a request is refused at once, and the rest are served", func(t *testing.T) {
		noLeaks(t)
		const sent, limit = 40, 4
		got := newAnswers(sent)
		var session atomic.Pointer[mcptest.Session]
		srv := &mcptest.Server{OnMessage: got.on, Handlers: map[string]mcptest.Handler{
			"notifications/initialized": func(s *mcptest.Session, m *mcptest.Message) { session.Store(s) },
		}}
		release := make(chan struct{})
		var running, most atomic.Int32
		sampling := func(ctx context.Context, _ *mcp.Connection, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			<-release
			return &mcp.CreateMessageResult{Role: "assistant", Content: []mcp.Content{{Type: "text", Text: "ok"}}, Model: "m"}, nil
		}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, Sampling: sampling, MaxServerRequests: limit})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second))) // initialized has been handled
		s := session.Load()
		require.NotNil(t, s)
		for i := range sent {
			s.Request(i+1, "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 10})
		}
		// The refusals come at once, while the first ones still run.
		refused := func() int {
			got.mu.Lock()
			defer got.mu.Unlock()
			return len(got.byID)
		}
		require.Eventually(t, func() bool { return refused() == sent-limit }, 10*time.Second, time.Millisecond)
		close(release)
		byID := got.wait(t)
		busy := 0
		for _, body := range byID {
			if strings.Contains(string(body), fmt.Sprint(mcp.CodeServerBusy)) {
				busy++
			}
		}
		assert.Equal(t, sent-limit, busy)
		assert.LessOrEqual(t, most.Load(), int32(limit), "handlers ran at once")
	})
	t.Run("a request past MaxServerRequestSize never reaches the handler", func(t *testing.T) {
		noLeaks(t)
		got := newAnswers(1)
		srv := &mcptest.Server{OnMessage: got.on, Handlers: map[string]mcptest.Handler{
			"notifications/initialized": func(s *mcptest.Session, m *mcptest.Message) {
				s.Request(1, "sampling/createMessage", map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": strings.Repeat("x", 2<<10)}}}, "maxTokens": 10})
			},
		}}
		var called atomic.Bool
		sampling := func(ctx context.Context, _ *mcp.Connection, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			called.Store(true)
			return nil, fmt.Errorf("not reached")
		}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, Sampling: sampling, MaxServerRequestSize: 1 << 10})
		require.NoError(t, err)
		defer c.Close()
		byID := got.wait(t)
		assert.Contains(t, string(byID["1"]), fmt.Sprint(mcp.CodeInvalidParams))
		assert.Contains(t, string(byID["1"]), "larger than this client takes")
		assert.False(t, called.Load())
	})
}

func TestCloseDoesNotWaitForANotificationBacklog(t *testing.T) {
	noLeaks(t)
	const sent = 20000
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var b strings.Builder
			for range sent {
				b.WriteString(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}}` + "\n")
			}
			s.WriteRaw(b.String())
			s.Reply(m.ID, mcptest.TextResult("flooded"))
		},
	}}
	var handled atomic.Int32
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
		ResourceUpdated: func(*mcp.Connection, string) {
			handled.Add(1)
			time.Sleep(time.Millisecond) // a slow handler
		}})
	require.NoError(t, err)
	_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "flood", nil)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 2*time.Second, "Close waited for the backlog")
	assert.Less(t, handled.Load(), int32(sent), "a bounded queue dropped the excess")
}

func TestAServerThatStopsReadingFailsTheConnection(t *testing.T) {
	noLeaks(t)
	client, server := net.Pipe()
	defer server.Close()
	go func() { // answers the handshake, then only writes
		r := bufio.NewReader(server)
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct{ ID json.RawMessage }
		json.Unmarshal(line, &m)
		fmt.Fprintf(server, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"deaf","version":"1"}}}`+"\n", m.ID)
		if _, err := r.ReadBytes('\n'); err != nil { // notifications/initialized
			return
		}
		for i := 1; ; i++ {
			if _, err := fmt.Fprintf(server, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	tr := mcp.TransportFunc(func(context.Context) (mcp.Stream, error) {
		return mcp.NewStreamWithWriteQueue(client, 16<<10), nil
	})
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), tr, &mcp.Options{Logger: quiet, ProtocolVersion: mcp.LatestLegacyVersion})
	require.NoError(t, err)
	defer c.Close()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection queued answers without bound")
	}
	require.Error(t, c.Err())
	assert.Contains(t, c.Err().Error(), "stopped reading")
}
