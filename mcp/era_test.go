package mcp_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/mcptest"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metaOf returns the _meta of a request's params.
func metaOf(t *testing.T, params json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(params, &p))
	return p.Meta
}

// methods records the methods of the requests a fake server receives.
type methods struct {
	mu   sync.Mutex
	seen []mcptest.Message
}

func (r *methods) on(m *mcptest.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, *m)
}

func (r *methods) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.seen {
		out = append(out, m.Method)
	}
	return out
}

func (r *methods) all() []mcptest.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mcptest.Message(nil), r.seen...)
}

func TestEras(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		pinned   string
		want     string
		modern   bool
		methods  []string // the first ones the server receives
	}{
		{"a modern-only server is spoken to in 2026-07-28", mcptest.Modern, "", "2026-07-28", true, []string{"server/discover", "tools/list"}},
		{"a dual-era server too", mcptest.DualEra, "", "2026-07-28", true, []string{"server/discover", "tools/list"}},
		{"a legacy server gets initialize after the probe", nil, "", "2025-11-25", false, []string{"server/discover", "initialize", "notifications/initialized", "tools/list"}},
		{"a pinned legacy version skips the probe", mcptest.DualEra, "2025-11-25", "2025-11-25", false, []string{"initialize", "notifications/initialized", "tools/list"}},
		{"a server that lists only a legacy version of ours", []string{"2027-01-01", "2025-11-25"}, "", "2025-11-25", false, []string{"server/discover", "initialize", "notifications/initialized", "tools/list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			rec := &methods{}
			srv := &mcptest.Server{Name: "eras", Instructions: "hi", Versions: tt.versions, OnMessage: rec.on}
			c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, ProtocolVersion: tt.pinned})
			require.NoError(t, err)
			defer c.Close()
			info := c.InitializeResult()
			assert.Equal(t, tt.want, info.ProtocolVersion)
			assert.Equal(t, tt.modern, c.Modern())
			assert.Equal(t, "eras", info.ServerInfo.Name, "the server's info, from either era")
			assert.Equal(t, "hi", info.Instructions)
			require.NotNil(t, info.Capabilities.Tools)
			tools, err := c.Tools(ctxTimeout(t, 5*time.Second))
			require.NoError(t, err)
			assert.Len(t, tools, 2)
			res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "echo", map[string]string{"text": "both eras"})
			require.NoError(t, err)
			assert.Equal(t, "both eras", res.Text())
			got := rec.list()
			require.GreaterOrEqual(t, len(got), len(tt.methods))
			assert.Equal(t, tt.methods, got[:len(tt.methods)])
		})
	}
	t.Run("a pinned modern version never falls back", func(t *testing.T) {
		noLeaks(t)
		_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), (&mcptest.Server{}).Transport(), &mcp.Options{Logger: quiet, ProtocolVersion: "2026-07-28"})
		var rpcErr *mcp.Error
		require.ErrorAs(t, err, &rpcErr)
		assert.Equal(t, int64(mcp.CodeMethodNotFound), rpcErr.Code)
	})
	t.Run("a version this client does not speak cannot be pinned", func(t *testing.T) {
		_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), (&mcptest.Server{}).Transport(), &mcp.Options{Logger: quiet, ProtocolVersion: "1999-01-01"})
		assert.ErrorContains(t, err, "not one this client speaks")
	})
	t.Run("a legacy server that never answers the probe gets initialize", func(t *testing.T) {
		noLeaks(t)
		defer mcp.SetProbeTimeout(50 * time.Millisecond)()
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"server/discover": func(*mcptest.Session, *mcptest.Message) {}}}
		c := connect(t, srv.Transport())
		assert.False(t, c.Modern())
	})
}

func TestModernRequestMeta(t *testing.T) {
	noLeaks(t)
	rec := &methods{}
	srv := &mcptest.Server{Versions: mcptest.Modern, OnMessage: rec.on}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
		ClientInfo: &mcp.Implementation{Name: "tester", Version: "9"}, Roots: []mcp.Root{}})
	require.NoError(t, err)
	defer c.Close()
	ctx := mcp.WithCallOptions(ctxTimeout(t, 5*time.Second), mcp.CallOptions{Progress: func(mcp.Progress) {}})
	_, err = c.CallTool(ctx, "echo", map[string]string{"text": "x"})
	require.NoError(t, err)
	_, err = c.Tools(ctxTimeout(t, 5*time.Second))
	require.NoError(t, err)

	requests := 0
	for _, m := range rec.all() {
		if m.ID == nil {
			continue
		}
		requests++
		meta := metaOf(t, m.Params)
		assert.JSONEq(t, `"2026-07-28"`, string(meta["io.modelcontextprotocol/protocolVersion"]), m.Method)
		assert.JSONEq(t, `{"name":"tester","version":"9"}`, string(meta["io.modelcontextprotocol/clientInfo"]), m.Method)
		assert.JSONEq(t, `{"roots":{}}`, string(meta["io.modelcontextprotocol/clientCapabilities"]), m.Method)
		if m.Method == "tools/call" {
			assert.Contains(t, meta, "progressToken", "the caller's _meta is kept beside the modern keys")
			var p struct {
				Name      string
				Arguments map[string]string
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			assert.Equal(t, "echo", p.Name)
			assert.Equal(t, "x", p.Arguments["text"])
		}
	}
	assert.Equal(t, 3, requests, "server/discover, tools/call, tools/list")
	assert.NotContains(t, rec.list(), "initialize")
}
