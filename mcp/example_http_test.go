package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcplug/mcplug/mcp"
)

// A remote server over Streamable HTTP. The server here answers each POST
// with one JSON message; real servers may also answer with SSE streams,
// which the transport reads the same way.
func ExampleStreamableHTTPTransport() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream, no DELETE
			return
		}
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := map[string]any{}
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "weather", "version": "1.0"}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "sunny, 21°C"}}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	defer server.Close()

	ctx := context.Background()
	t := &mcp.StreamableHTTPTransport{URL: server.URL, Headers: http.Header{"Authorization": {"Bearer token"}}}
	c, err := mcp.Connect(ctx, t, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "forecast", map[string]string{"city": "Oslo"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.InitializeResult().ServerInfo.Name+":", res.Text())
	// Output:
	// weather: sunny, 21°C
}
