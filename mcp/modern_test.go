package mcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		assert.JSONEq(t, `{"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, string(meta["io.modelcontextprotocol/clientCapabilities"]), m.Method)
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
	assert.Equal(t, 4, requests, "server/discover, ping, tools/call, tools/list")
	assert.NotContains(t, rec.list(), "initialize")
}

func TestModernReplacements(t *testing.T) {
	t.Run("SetLoggingLevel puts the level in the _meta of later requests", func(t *testing.T) {
		noLeaks(t)
		rec := &methods{}
		c := connect(t, (&mcptest.Server{Versions: mcptest.Modern, OnMessage: rec.on}).Transport())
		require.NoError(t, c.SetLoggingLevel(ctxTimeout(t, 5*time.Second), mcp.LevelWarning))
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		assert.NotContains(t, rec.list(), "logging/setLevel", "the modern revision removed it")
		all := rec.all()
		last := all[len(all)-1]
		require.Equal(t, "tools/list", last.Method)
		assert.JSONEq(t, `"warning"`, string(metaOf(t, last.Params)["io.modelcontextprotocol/logLevel"]))
		assert.JSONEq(t, `"2026-07-28"`, string(metaOf(t, last.Params)["io.modelcontextprotocol/protocolVersion"]))
	})
	t.Run("Ping asks server/discover", func(t *testing.T) {
		noLeaks(t)
		rec := &methods{}
		c := connect(t, (&mcptest.Server{Versions: mcptest.Modern, OnMessage: rec.on}).Transport())
		require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second)))
		assert.Equal(t, []string{"server/discover", "ping", "server/discover"}, rec.list(), "the handshake's probe and ping, then Ping's discover")
	})
	t.Run("SetRoots sends no list_changed, and the next input request sees the new roots", func(t *testing.T) {
		noLeaks(t)
		rec := &methods{}
		var answer retryParams
		srv := &mcptest.Server{Versions: mcptest.Modern, OnMessage: rec.on, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p retryParams
			json.Unmarshal(m.Params, &p)
			if p.InputResponses == nil {
				s.Reply(m.ID, inputRequired(map[string]any{"r": map[string]any{"method": "roots/list"}}, ""))
				return
			}
			answer = p
			s.Reply(m.ID, mcptest.TextResult("ok"))
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, Roots: []mcp.Root{}})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetRoots(ctxTimeout(t, 5*time.Second), []mcp.Root{{URI: "file:///new"}}))
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
		require.NoError(t, err)
		assert.NotContains(t, rec.list(), "notifications/roots/list_changed")
		assert.JSONEq(t, `{"roots":[{"uri":"file:///new"}]}`, string(answer.InputResponses["r"]))
	})
}

func TestModernServerMayAnswerAnyCallWithATask(t *testing.T) {
	noLeaks(t)
	f := newTaskFake(true)
	f.script = []map[string]any{f.task("completed", map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "late"}}}})}
	srv := f.server()
	srv.Tools = []json.RawMessage{mcptest.Raw(map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"}})} // no execution
	c := connect(t, srv.Transport())
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
	require.NoError(t, err)
	assert.Equal(t, "late", res.Text())

	t.Run("unless the client turned tasks off", func(t *testing.T) {
		var caps json.RawMessage
		srv.OnMessage = func(m *mcptest.Message) {
			if m.Method == "tools/call" {
				caps = json.RawMessage(gjson(t, m.Params, "_meta", "io.modelcontextprotocol/clientCapabilities"))
			}
		}
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, DisableTasks: true})
		c.CallTool(ctxTimeout(t, 10*time.Second), "slow", nil)
		assert.NotContains(t, string(caps), mcp.ExtensionTasks)
	})
}
