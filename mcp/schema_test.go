package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaBomb is a small schema whose definitions each refer twice to the
// next: applying it visits 2^depth subschemas.
func schemaBomb(depth int) map[string]any {
	defs := map[string]any{}
	for i := range depth {
		next := fmt.Sprintf("#/$defs/d%d", i+1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{map[string]any{"$ref": next}, map[string]any{"$ref": next}}}
	}
	defs[fmt.Sprintf("d%d", depth)] = map[string]any{"type": "object"}
	return map[string]any{"type": "object", "$ref": "#/$defs/d0", "$defs": defs}
}

// withOutputSchema is a server whose tool "t" declares schema and answers
// structured.
func withOutputSchema(schema any, structured any) *mcptest.Server {
	return &mcptest.Server{
		Tools: []json.RawMessage{mcptest.Raw(map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}, "outputSchema": schema})},
		ToolFuncs: map[string]func(map[string]any) any{"t": func(map[string]any) any {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "{}"}}, "structuredContent": structured}
		}},
	}
}

// callWithin calls tool "t" and fails the test when the call takes longer
// than d (the call is left running).
func callWithin(t *testing.T, c *mcp.Connection, d time.Duration) (*mcp.CallToolResult, error) {
	t.Helper()
	type out struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := c.CallTool(context.Background(), "t", nil)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(d):
		t.Fatalf("the call took more than %v", d)
		return nil, nil
	}
}

func TestOutputSchema(t *testing.T) {
	noLeaks(t)
	schemaTool := `{"name":"weather","inputSchema":{"type":"object"},"outputSchema":{
		"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"$defs":{"temp":{"type":"number"}},
		"properties":{"temp":{"$ref":"#/$defs/temp"},"unit":{"enum":["C","F"]}},
		"required":["temp"],
		"allOf":[{"if":{"properties":{"unit":{"const":"F"}}},"then":{"properties":{"temp":{"minimum":-460}}}}]}}`
	results := map[string]string{
		"good":    `{"content":[],"structuredContent":{"temp":21.5,"unit":"C"}}`,
		"bad":     `{"content":[],"structuredContent":{"temp":"warm"}}`,
		"missing": `{"content":[{"type":"text","text":"21.5"}]}`,
		"failed":  `{"content":[{"type":"text","text":"no sensor"}],"isError":true}`,
		"ifthen":  `{"content":[],"structuredContent":{"temp":-500,"unit":"F"}}`,
	}
	srv := &mcptest.Server{
		Tools: []json.RawMessage{json.RawMessage(schemaTool)},
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct{ Arguments struct{ Case string } }
			json.Unmarshal(m.Params, &p)
			s.Reply(m.ID, json.RawMessage(results[p.Arguments.Case]))
		}},
	}
	c := connect(t, srv.Transport())
	ctx := ctxTimeout(t, 5*time.Second)
	tools, err := c.Tools(ctx)
	require.NoError(t, err)
	require.Len(t, tools, 1)
	var want, got any
	require.NoError(t, json.Unmarshal([]byte(schemaTool), &want))
	raw, err := json.Marshal(tools[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, want, got, "the tool, its $schema, $defs, allOf and if/then/else round-trip")

	for _, tc := range []struct {
		name string
		ok   bool
	}{{"good", true}, {"failed", true}, {"bad", false}, {"missing", false}, {"ifthen", false}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.CallTool(ctx, "weather", map[string]string{"case": tc.name})
			if tc.ok {
				require.NoError(t, err)
				require.NotNil(t, res)
				return
			}
			var se *mcp.OutputSchemaError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "weather", se.Tool)
			assert.NotErrorIs(t, err, mcp.ErrClosed, "a schema mismatch is not a transport error")
			assert.NoError(t, c.Err())
		})
	}
}

func TestOutputSchemaWorkIsBounded(t *testing.T) {
	t.Run("a schema bomb is refused, and the call returns at once", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, withOutputSchema(schemaBomb(40), map[string]any{"a": 1}).Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var tc *mcp.SchemaTooComplexError
		require.ErrorAs(t, err, &tc, "a schema that cannot be applied is never taken as permissive")
		var se *mcp.OutputSchemaError
		assert.ErrorAs(t, err, &se)
	})
	t.Run("a schema that refers outside itself is not fetched, and its results are refused", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, withOutputSchema(map[string]any{"$ref": "https://example.com/schema.json"}, map[string]any{"a": 1}).Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var se *mcp.OutputSchemaError
		require.ErrorAs(t, err, &se)
		assert.Contains(t, err.Error(), "only references within the schema are followed")
	})
	t.Run("a schema with shared definitions within bounds is applied", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, withOutputSchema(schemaBomb(8), "not an object").Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var se *mcp.OutputSchemaError
		require.ErrorAs(t, err, &se)
	})
	t.Run("a schema applied to a huge value is refused, not run", func(t *testing.T) {
		noLeaks(t)
		values := make([]any, 60000)
		for i := range values {
			values[i] = i
		}
		c := connect(t, withOutputSchema(schemaBomb(10), map[string]any{"v": values}).Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var tc *mcp.SchemaTooComplexError
		require.ErrorAs(t, err, &tc)
		var se *mcp.OutputSchemaError
		assert.ErrorAs(t, err, &se)
	})
}
