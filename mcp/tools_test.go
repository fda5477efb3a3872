package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolListCache(t *testing.T) {
	noLeaks(t)
	var lists atomic.Int32
	changed := make(chan struct{}, 1)
	srv := &mcptest.Server{
		OnMessage: func(m *mcptest.Message) {
			if m.Method == "tools/list" {
				lists.Add(1)
			}
		},
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Notify("notifications/tools/list_changed", nil)
			s.Reply(m.ID, mcptest.TextResult(""))
		}},
	}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
		ToolListChanged: func(*mcp.Connection) { changed <- struct{}{} }})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)
	_, err = c.Tools(ctx)
	require.NoError(t, err)
	_, err = c.Tools(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(1), lists.Load(), "a server that announces changes is listed once")
	_, err = c.CallTool(ctx, "x", nil)
	require.NoError(t, err)
	<-changed
	_, err = c.Tools(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(2), lists.Load(), "list_changed drops the cached list")
}

func TestTools(t *testing.T) {
	t.Run("every page is fetched", func(t *testing.T) {
		noLeaks(t)
		tools := []json.RawMessage{}
		for i := range 5 {
			tools = append(tools, mcptest.Raw(map[string]any{"name": fmt.Sprintf("t%d", i), "inputSchema": map[string]any{"type": "object"}}))
		}
		c := connect(t, (&mcptest.Server{Tools: tools, PageSize: 2}).Transport())
		got, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		var names []string
		for _, tool := range got {
			names = append(names, tool.Name)
		}
		assert.Equal(t, []string{"t0", "t1", "t2", "t3", "t4"}, names)
	})
	t.Run("a repeated cursor ends the listing instead of looping", func(t *testing.T) {
		noLeaks(t)
		calls := 0
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/list": func(s *mcptest.Session, m *mcptest.Message) {
			calls++
			s.Reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": fmt.Sprint("t", calls), "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": "same"})
		}}}
		c := connect(t, srv.Transport())
		got, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		assert.Len(t, got, 2, "the first page, and the one the repeated cursor led to")
	})
	t.Run("a tool with a missing or invalid schema does not fail the list", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{Tools: []json.RawMessage{
			json.RawMessage(`{"name":"no_schema"}`),
			json.RawMessage(`{"name":"null_schema","inputSchema":null}`),
			json.RawMessage(`{"name":"string_schema","inputSchema":"object"}`),
			json.RawMessage(`{"inputSchema":{"type":"object"}}`),
			json.RawMessage(`{"name":42}`),
			json.RawMessage(`{"name":"good","title":"Good","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"x":{"type":"string"}}},"annotations":{"readOnlyHint":true,"x-vendor":{"cost":3}},"icons":[{"src":"https://example.com/i.png","sizes":["48x48"]}],"_meta":{"k":"v"}}`),
		}}
		c := connect(t, srv.Transport())
		got, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.Equal(t, "no_schema", got[0].Name)
		assert.JSONEq(t, `{"type":"object"}`, string(got[0].InputSchema))
		assert.Equal(t, "null_schema", got[1].Name)
		assert.JSONEq(t, `{"type":"object"}`, string(got[1].InputSchema))
		good := got[2]
		assert.Equal(t, "Good", good.Title)
		assert.Equal(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"x":{"type":"string"}}}`, string(good.InputSchema), "the schema is kept byte for byte")
		require.NotNil(t, good.Annotations)
		require.NotNil(t, good.Annotations.ReadOnlyHint)
		assert.True(t, *good.Annotations.ReadOnlyHint)
		assert.JSONEq(t, `{"k":"v"}`, string(good.Meta))
		assert.Equal(t, "https://example.com/i.png", good.Icons[0].Src)
		ann, err := json.Marshal(good.Annotations)
		require.NoError(t, err)
		assert.JSONEq(t, `{"readOnlyHint":true,"x-vendor":{"cost":3}}`, string(ann), "unknown annotation fields are kept")
	})
}

func TestCallTool(t *testing.T) {
	reply := func(result string) *mcptest.Server {
		return &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": json.RawMessage(result)})
		}}}
	}
	t.Run("nil arguments are sent as an empty object", func(t *testing.T) {
		noLeaks(t)
		args := make(chan string, 1)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct{ Arguments json.RawMessage }
			json.Unmarshal(m.Params, &p)
			args <- string(p.Arguments)
			s.Reply(m.ID, mcptest.TextResult("ok"))
		}}}
		c := connect(t, srv.Transport())
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "anything", nil)
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text())
		assert.Equal(t, "{}", <-args)
	})
	t.Run("arguments that are not an object are refused before sending", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, (&mcptest.Server{}).Transport())
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "echo", []int{1, 2})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "must be a JSON object")
	})
	t.Run("every content type of 2025-11-25 decodes", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, reply(`{"content":[
			{"type":"text","text":"hi"},
			{"type":"image","data":"aW1n","mimeType":"image/png"},
			{"type":"audio","data":"YXVk","mimeType":"audio/wav"},
			{"type":"resource_link","uri":"file:///a.txt","name":"a.txt","mimeType":"text/plain","size":12},
			{"type":"resource","resource":{"uri":"file:///b.txt","mimeType":"text/plain","text":"bee"}},
			{"type":"resource","resource":{"uri":"file:///c.bin","blob":"AAE="}}
		],"structuredContent":{"n":1},"isError":true,"_meta":{"m":1}}`).Transport())
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		require.Len(t, res.Content, 6)
		assert.Equal(t, mcp.Content{Type: "text", Text: "hi"}, res.Content[0])
		assert.Equal(t, mcp.Content{Type: "image", Data: "aW1n", MimeType: "image/png"}, res.Content[1])
		assert.Equal(t, mcp.Content{Type: "audio", Data: "YXVk", MimeType: "audio/wav"}, res.Content[2])
		assert.Equal(t, "file:///a.txt", res.Content[3].URI)
		assert.Equal(t, int64(12), *res.Content[3].Size)
		require.NotNil(t, res.Content[4].Resource)
		assert.Equal(t, "bee", *res.Content[4].Resource.Text)
		assert.Equal(t, "AAE=", *res.Content[5].Resource.Blob)
		assert.JSONEq(t, `{"n":1}`, string(res.StructuredContent))
		assert.True(t, res.IsError)
		assert.Equal(t, "hi", res.Text())
	})
	for _, bad := range []string{`null`, `[]`, `"text"`, `42`, `{"content":[null]}`, `{"content":[{"type":"text","text":"a"},null]}`, `{"content":[{}]}`, `{"content":[7]}`, `{"content":["text"]}`} {
		t.Run("a result of "+bad+" is an error, not an empty success", func(t *testing.T) {
			noLeaks(t)
			c := connect(t, reply(bad).Transport())
			res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
			assert.Nil(t, res)
			assert.ErrorIs(t, err, mcp.ErrBadResult)
			assert.NoError(t, c.Err(), "the connection goes on")
		})
	}
	t.Run("a JSON-RPC error from the server is an *Error", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, (&mcptest.Server{}).Transport())
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "nope", nil)
		var rpcErr *mcp.Error
		require.ErrorAs(t, err, &rpcErr)
		assert.Equal(t, int64(mcp.CodeInvalidParams), rpcErr.Code)
		assert.Equal(t, "unknown tool: nope", rpcErr.Message)
	})
}

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
