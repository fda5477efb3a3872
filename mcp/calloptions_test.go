package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProgress(t *testing.T) {
	noLeaks(t)
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		var p struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
			Arguments struct{ Steps int }
		}
		json.Unmarshal(m.Params, &p)
		go func() {
			for i := 1; i <= p.Arguments.Steps; i++ {
				time.Sleep(30 * time.Millisecond) // the server working, not test synchronisation
				s.Notify("notifications/progress", map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "total": p.Arguments.Steps, "message": fmt.Sprint("step ", i)})
			}
			s.Reply(m.ID, mcptest.TextResult("finished"))
		}()
	}}}
	c := connect(t, srv.Transport())

	t.Run("progress reaches the call's callback", func(t *testing.T) {
		var got []mcp.Progress
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Progress: func(p mcp.Progress) { got = append(got, p) }})
		res, err := c.CallTool(ctx, "work", map[string]int{"steps": 3})
		require.NoError(t, err)
		assert.Equal(t, "finished", res.Text())
		require.Len(t, got, 3)
		assert.Equal(t, 3.0, got[2].Progress)
		assert.Equal(t, 3.0, *got[2].Total)
		assert.Equal(t, "step 3", got[2].Message)
	})
	t.Run("progress resets the timeout", func(t *testing.T) {
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Timeout: 200 * time.Millisecond, ResetOnProgress: true, MaxTimeout: 5 * time.Second})
		res, err := c.CallTool(ctx, "work", map[string]int{"steps": 10}) // 300 ms in all, never 200 ms without progress
		require.NoError(t, err)
		assert.Equal(t, "finished", res.Text())
	})
	t.Run("without resetting, the timeout fires", func(t *testing.T) {
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Timeout: 100 * time.Millisecond})
		_, err := c.CallTool(ctx, "work", map[string]int{"steps": 10})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "no response within 100ms")
	})
	t.Run("the hard maximum holds despite progress", func(t *testing.T) {
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Timeout: 200 * time.Millisecond, ResetOnProgress: true, MaxTimeout: 150 * time.Millisecond})
		_, err := c.CallTool(ctx, "work", map[string]int{"steps": 10})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "150ms")
	})
}
