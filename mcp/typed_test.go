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

type weather struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
}

func TestCallToolAs(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "celsius": map[string]any{"type": "number"}}, "required": []any{"city", "celsius"}}
	answers := map[string]any{
		"good":    map[string]any{"content": []any{map[string]any{"type": "text", "text": "21"}}, "structuredContent": map[string]any{"city": "Lyon", "celsius": 21.5}},
		"bad":     map[string]any{"content": []any{map[string]any{"type": "text", "text": "?"}}, "structuredContent": map[string]any{"city": 7}},
		"failed":  map[string]any{"content": []any{map[string]any{"type": "text", "text": "no such city"}}, "isError": true},
		"nothing": mcptest.TextResult("just text"),
	}
	srv := &mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{}}
	for name, answer := range answers {
		def := map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
		if name != "nothing" {
			def["outputSchema"] = schema
		}
		srv.Tools = append(srv.Tools, mcptest.Raw(def))
		srv.ToolFuncs[name] = func(map[string]any) any { return answer }
	}
	c := connect(t, srv.Transport())
	ctx := ctxTimeout(t, 5*time.Second)
	_, err := c.Tools(ctx)
	require.NoError(t, err)

	t.Run("a result decodes into the Go type", func(t *testing.T) {
		w, res, err := mcp.CallToolAs[weather](ctx, c, "good", nil)
		require.NoError(t, err)
		assert.Equal(t, weather{"Lyon", 21.5}, w)
		assert.Equal(t, "21", res.Text())
	})
	t.Run("a result the outputSchema refuses is an *OutputSchemaError with the result", func(t *testing.T) {
		_, _, err := mcp.CallToolAs[weather](ctx, c, "bad", nil)
		var se *mcp.OutputSchemaError
		require.ErrorAs(t, err, &se)
		require.NotNil(t, se.Result)
		assert.JSONEq(t, `{"city":7}`, string(se.Result.StructuredContent))
	})
	t.Run("a failed tool is a *ToolError", func(t *testing.T) {
		_, res, err := mcp.CallToolAs[weather](ctx, c, "failed", nil)
		var te *mcp.ToolError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "no such city", res.Text())
	})
	t.Run("no structuredContent matches ErrBadResult", func(t *testing.T) {
		_, res, err := mcp.CallToolAs[weather](ctx, c, "nothing", nil)
		assert.ErrorIs(t, err, mcp.ErrBadResult)
		assert.Equal(t, "just text", res.Text())
	})
	t.Run("through a Manager too", func(t *testing.T) {
		noLeaks(t)
		m := newManager(t, nil, nil)
		require.NoError(t, m.Add("w", srv.Transport()))
		w, _, err := mcp.CallToolAs[weather](ctx, m, "mcp__w__good", nil)
		require.NoError(t, err)
		assert.Equal(t, "Lyon", w.City)
	})
}

func TestCallMeta(t *testing.T) {
	noLeaks(t)
	rec := &methods{}
	c := connect(t, (&mcptest.Server{Versions: mcptest.Modern, OnMessage: rec.on}).Transport())
	ctx := mcp.WithCallOptions(ctxTimeout(t, 5*time.Second), mcp.CallOptions{Meta: map[string]any{"com.example/trace": "abc", "n": 1}})
	_, err := c.CallTool(ctx, "echo", map[string]string{"text": "x"})
	require.NoError(t, err)
	all := rec.all()
	last := all[len(all)-1]
	require.Equal(t, "tools/call", last.Method)
	meta := metaOf(t, last.Params)
	assert.JSONEq(t, `"abc"`, string(meta["com.example/trace"]))
	assert.JSONEq(t, `1`, string(meta["n"]))
	assert.JSONEq(t, `"2026-07-28"`, string(meta["io.modelcontextprotocol/protocolVersion"]), "beside the protocol's own")
	var p struct{ Arguments map[string]string }
	require.NoError(t, json.Unmarshal(last.Params, &p))
	assert.Equal(t, "x", p.Arguments["text"])
}
