package mcp_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerLogsGoToSlogByDefault(t *testing.T) {
	noLeaks(t)
	logs := &logRecorder{}
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		s.Notify("notifications/message", map[string]any{"level": "error", "data": "disk full"})
		s.Reply(m.ID, mcptest.TextResult("ok"))
	}}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: slogOf(logs)})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return logs.contains("mcp: server log") }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "ERROR", logs.levelOf("mcp: server log"))
}

func TestLogBurstDuringACall(t *testing.T) {
	// 10,000 log notifications arrive while a call is pending and the log
	// handler is stuck: the call still completes, and the backlog stays
	// bounded (what does not fit is dropped and counted, not queued).
	noLeaks(t)
	release := make(chan struct{})
	var handled atomic.Int32
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		var burst strings.Builder
		for i := range 10_000 {
			fmt.Fprintf(&burst, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`+"\n", i)
		}
		s.WriteRaw(burst.String())
		s.Reply(m.ID, mcptest.TextResult("done"))
	}}}
	logs := &logRecorder{}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger: slogOf(logs),
		LoggingMessage: func(*mcp.Connection, *mcp.LoggingMessage) {
			if handled.Add(1) == 1 {
				<-release // the dispatcher is stuck on the first message
			}
		},
	})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "x", nil)
	require.NoError(t, err, "the call completes while the handler is stuck")
	assert.Equal(t, "done", res.Text())
	close(release)
	require.Eventually(t, func() bool { return logs.contains("dropped notifications") }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return handled.Load() > 1 }, 5*time.Second, time.Millisecond, "the kept backlog is served")
	require.NoError(t, c.Close()) // the dispatcher has finished
	// The dispatcher holds one batch it is serving and a queue behind it,
	// each bounded (1024): far fewer than the 10,000 sent.
	assert.LessOrEqual(t, handled.Load(), int32(2*1024+1), "the backlog is bounded")
}
