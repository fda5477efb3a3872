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

func TestCacheHints(t *testing.T) {
	listing := func(ttl any, lists *atomic.Int32) mcptest.Handler {
		return func(s *mcptest.Session, m *mcptest.Message) {
			lists.Add(1)
			res := map[string]any{"resultType": "complete", "cacheScope": "private",
				"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}}
			if ttl != nil {
				res["ttlMs"] = ttl
			}
			s.Reply(m.ID, res)
		}
	}
	tests := []struct {
		name  string
		ttl   any
		lists int32
	}{
		{"a fresh list is served from the cache", 60_000, 1},
		{"ttlMs 0 is stale at once", 0, 3},
		{"no ttlMs is stale at once", nil, 3},
		{"a negative ttlMs counts as 0", -5, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			var lists atomic.Int32
			c := connect(t, (&mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/list": listing(tt.ttl, &lists)}}).Transport())
			for range 3 {
				tools, err := c.Tools(ctxTimeout(t, 5*time.Second))
				require.NoError(t, err)
				require.Len(t, tools, 1)
			}
			assert.Equal(t, tt.lists, lists.Load())
		})
	}
	t.Run("the hints of resources/read are exposed", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, (&mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{
			"resources/read": replying(`{"resultType":"complete","contents":[{"uri":"file:///a","text":"x"}],"ttlMs":42,"cacheScope":"public"}`),
		}}).Transport())
		read, err := c.ReadResource(ctxTimeout(t, 5*time.Second), &mcp.ReadResourceParams{URI: "file:///a"})
		require.NoError(t, err)
		assert.Equal(t, int64(42), *read.TTLMs)
		assert.Equal(t, "public", read.CacheScope)
	})
}
