package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
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
		{"a modern-only server is spoken to in 2026-07-28", mcptest.Modern, "", "2026-07-28", true, []string{"server/discover", "ping", "tools/list"}},
		{"a dual-era server too", mcptest.DualEra, "", "2026-07-28", true, []string{"server/discover", "ping", "tools/list"}},
		{"a legacy server gets initialize after the probe", nil, "", "2025-11-25", false, []string{"server/discover", "ping", "initialize", "notifications/initialized", "tools/list"}},
		{"a pinned legacy version skips the probe", mcptest.DualEra, "2025-11-25", "2025-11-25", false, []string{"initialize", "notifications/initialized", "tools/list"}},
		{"a server that lists only a legacy version of ours", []string{"2027-01-01", "2025-11-25"}, "", "2025-11-25", false, []string{"server/discover", "ping", "initialize", "notifications/initialized", "tools/list"}},
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

func TestManagerServesBothEras(t *testing.T) {
	noLeaks(t)
	m := newManager(t, configOf(t, map[string]any{
		"modern": scenarioEntry("modern"),
		"dual":   scenarioEntry("dual-era"),
		"legacy": scenarioEntry("basic"),
	}), nil)
	ctx := ctxTimeout(t, 30*time.Second)
	for _, server := range []string{"modern", "dual", "legacy"} {
		res, err := m.CallTool(ctx, "mcp__"+server+"__echo", map[string]string{"text": server})
		require.NoError(t, err, server)
		assert.Equal(t, server, res.Text())
	}
	st := statusOf(m)
	assert.Equal(t, "2026-07-28", st["modern"].ProtocolVersion)
	assert.Equal(t, "2026-07-28", st["dual"].ProtocolVersion)
	assert.Equal(t, "2025-11-25", st["legacy"].ProtocolVersion)
}

func TestHTTPEraIsRememberedForTheURL(t *testing.T) {
	tt := t
	noLeaks(t)
	var mu sync.Mutex
	var got []string
	modern := false
	srv := scriptedServer(t, &scripted{})
	wrap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m rpcMsg
			json.Unmarshal(body, &m)
			mu.Lock()
			got = append(got, m.Method)
			isModern := modern
			mu.Unlock()
			if isModern && m.Method == "initialize" { // the server was upgraded: modern only
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`)
				return
			}
			if isModern && m.Method == "server/discover" {
				writeJSON(w, result(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}}}))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(wrap.Close)
	transport := &mcp.StreamableHTTPTransport{URL: wrap.URL + "/era"}
	connectOnce := func(t *mcp.StreamableHTTPTransport) *mcp.Connection {
		c := httpConnect(tt, t, nil)
		require.NoError(tt, c.Close())
		return c
	}
	assert.False(t, connectOnce(transport).Modern())
	assert.False(t, connectOnce(transport).Modern())
	mu.Lock()
	assert.Equal(t, 1, countOf(got, "server/discover"), "the second connection knew the server was legacy")
	mu.Unlock()
	assert.False(t, connectOnce(&mcp.StreamableHTTPTransport{URL: wrap.URL + "/era"}).Modern())
	mu.Lock()
	assert.Equal(t, 1, countOf(got, "server/discover"), "another transport to the same URL knew the server was legacy")
	mu.Unlock()
	assert.False(t, connectOnce(&mcp.StreamableHTTPTransport{URL: wrap.URL + "/era", Client: &http.Client{}}).Modern())
	mu.Lock()
	assert.Equal(t, 2, countOf(got, "server/discover"), "a transport with another Client knew nothing: it may reach another server")
	modern = true
	mu.Unlock()
	assert.True(t, connectOnce(transport).Modern(), "a remembered era that fails is probed again")
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// modernHTTP is a Streamable HTTP server of 2026-07-28 only: an mcptest
// server with caps answers server/discover, and handle every other
// request, at the HTTP level.
func modernHTTP(t *testing.T, caps map[string]any, handle func(w http.ResponseWriter, r *http.Request, m rpcMsg)) *httptest.Server {
	fake := &mcptest.Server{Versions: mcptest.Modern, Capabilities: caps}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m rpcMsg
		json.Unmarshal(body, &m)
		if m.Method == "server/discover" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			fake.ServeHTTP(w, r)
			return
		}
		handle(w, r, m)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestModernHTTPBrokenStreamSendsTheRequestAgain(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var ids []string
	var headers []http.Header
	srv := modernHTTP(t, map[string]any{"tools": map[string]any{}}, func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		switch m.Method {
		case "tools/call":
			mu.Lock()
			ids = append(ids, string(m.ID))
			headers = append(headers, r.Header.Clone())
			first := len(ids) == 1
			mu.Unlock()
			if first { // the stream breaks before the response
				w.Header().Set("Content-Type", "text/event-stream")
				sseWrite(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
				return
			}
			writeJSON(w, result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "second time"}}}))
		}
	})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
	require.True(t, c.Modern())
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
	require.NoError(t, err)
	assert.Equal(t, "second time", res.Text())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ids, 2)
	assert.NotEqual(t, ids[0], ids[1], "a new request, with a new id")
	for _, h := range headers {
		assert.Empty(t, h.Get("Last-Event-ID"), "no resumption in this era")
		assert.Empty(t, h.Get("Mcp-Session-Id"))
		assert.Equal(t, "2026-07-28", h.Get("MCP-Protocol-Version"))
		assert.Equal(t, "tools/call", h.Get("Mcp-Method"))
		assert.Equal(t, "t", h.Get("Mcp-Name"))
	}
}

func TestModernHTTPListenEndsAtClose(t *testing.T) {
	noLeaks(t)
	opened := make(chan struct{}, 4)
	srv := modernHTTP(t, map[string]any{"tools": map[string]any{"listChanged": true}}, func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		switch m.Method {
		case "subscriptions/listen":
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s},\"notifications\":{\"toolsListChanged\":true}}}\n\n", m.ID)
			opened <- struct{}{}
			<-r.Context().Done() // open until the client goes
		default:
			writeJSON(w, result(m.ID, map[string]any{"resultType": "complete", "tools": []any{}}))
		}
	})
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.StreamableHTTPTransport{URL: srv.URL}, &mcp.Options{Logger: quiet, ToolListChanged: func(*mcp.Connection) {}})
	require.NoError(t, err)
	select {
	case <-opened:
	case <-time.After(5 * time.Second):
		t.Fatal("no subscriptions/listen")
	}
	require.NoError(t, c.Close()) // noLeaks checks that the listen and its POST ended
}

func TestModernHTTPCancellationClosesTheStream(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var methods []string
	ended := make(chan struct{})
	srv := modernHTTP(t, map[string]any{"tools": map[string]any{}}, func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		mu.Lock()
		methods = append(methods, m.Method)
		mu.Unlock()
		if m.Method == "tools/call" {
			<-r.Context().Done() // works until the client goes
			close(ended)
		}
	})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
	require.True(t, c.Modern())
	_, err := c.CallTool(ctxTimeout(t, 100*time.Millisecond), "slow", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call's stream is still open")
	}
	require.NoError(t, c.Close())
	mu.Lock()
	defer mu.Unlock()
	assert.NotContains(t, methods, "notifications/cancelled", "closing the stream is the cancellation in this era")
}
