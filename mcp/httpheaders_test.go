package mcp_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModernHTTPHeaderMismatchRelists(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	lists := 0
	var calls []string // the Mcp-Param-Region header of each tools/call
	srv := modernHTTP(t, map[string]any{"tools": map[string]any{}}, func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Method {
		case "tools/list":
			lists++
			region := map[string]any{"type": "string"}
			if lists > 1 { // the tool changed: region is now mirrored
				region["x-mcp-header"] = "Region"
			}
			writeJSON(w, result(m.ID, map[string]any{"resultType": "complete", "ttlMs": 0, "tools": []any{map[string]any{"name": "q",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"region": region}}}}}))
		case "tools/call":
			got := r.Header.Get("Mcp-Param-Region")
			calls = append(calls, got)
			if got == "" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32020,"message":"Header mismatch: Mcp-Param-Region is missing"}}`)
				return
			}
			writeJSON(w, result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "in " + got}}}))
		}
	})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
	require.True(t, c.Modern())
	_, err := c.Tools(ctxTimeout(t, 5*time.Second))
	require.NoError(t, err)
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "q", map[string]string{"region": "eu-west"})
	require.NoError(t, err)
	assert.Equal(t, "in eu-west", res.Text())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"", "eu-west"}, calls, "refused without the header, then sent with it after listing again")
	assert.Equal(t, 2, lists)
}
