package mcp_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFramingServersGetWrong(t *testing.T) {
	t.Run("a pretty-printed response reaches its call", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
			"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				s.WriteRaw("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": " + string(m.ID) + ",\n  \"result\": {\n    \"content\": [\n      {\"type\": \"text\", \"text\": \"pretty\"}\n    ]\n  }\n}\n")
			},
		}}
		c := connect(t, srv.Transport())
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "pretty", res.Text())
	})
	t.Run("a batch of responses delivers each to its call", func(t *testing.T) {
		noLeaks(t)
		var mu sync.Mutex
		var ids []string
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
			"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				mu.Lock()
				defer mu.Unlock()
				ids = append(ids, string(m.ID))
				if len(ids) < 2 {
					return // answer both at once
				}
				var parts []string
				for _, id := range ids {
					parts = append(parts, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"for `+id+`"}]}}`)
				}
				s.WriteRaw("[" + strings.Join(parts, ",") + "]\n")
			},
		}}
		c := connect(t, srv.Transport())
		var wg sync.WaitGroup
		texts := make([]string, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
				if assert.NoError(t, err) {
					texts[i] = res.Text()
				}
			}()
		}
		wg.Wait()
		for _, text := range texts {
			assert.True(t, strings.HasPrefix(text, "for "), text)
		}
		assert.NotEqual(t, texts[0], texts[1], "each call got its own response")
	})
}
