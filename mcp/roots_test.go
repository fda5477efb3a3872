package mcp_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoots(t *testing.T) {
	t.Run("roots/list answers the current roots", func(t *testing.T) {
		noLeaks(t)
		got := askClient(t, mcp.Options{Roots: []mcp.Root{{URI: "file:///src", Name: "src"}}}, "roots/list", nil)
		assert.JSONEq(t, `{"roots":[{"uri":"file:///src","name":"src"}]}`, got)
	})
	t.Run("without roots, roots/list is not found", func(t *testing.T) {
		noLeaks(t)
		got := askClient(t, mcp.Options{}, "roots/list", nil)
		assert.Contains(t, got, `"code":-32601`)
	})
	t.Run("SetRoots notifies a change, and only a change", func(t *testing.T) {
		noLeaks(t)
		var changes atomic.Int32
		seen := make(chan struct{}, 4)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
			"notifications/roots/list_changed": func(*mcptest.Session, *mcptest.Message) { changes.Add(1) },
			"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				seen <- struct{}{}
				s.Reply(m.ID, mcptest.TextResult(""))
			},
		}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, Roots: []mcp.Root{}})
		require.NoError(t, err)
		defer c.Close()
		ctx := ctxTimeout(t, 5*time.Second)
		require.NoError(t, c.SetRoots(ctx, []mcp.Root{{URI: "file:///a"}}))
		require.NoError(t, c.SetRoots(ctx, []mcp.Root{{URI: "file:///a"}}))
		_, err = c.CallTool(ctx, "sync", nil) // the server reads in order: the notifications came first
		require.NoError(t, err)
		assert.Equal(t, int32(1), changes.Load())

		plain := connect(t, (&mcptest.Server{}).Transport())
		assert.ErrorIs(t, plain.SetRoots(ctx, nil), mcp.ErrNoRoots)
	})
}
