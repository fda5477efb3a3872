package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
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

func TestElicitationFormSchemaIsRestricted(t *testing.T) {
	field := func(extra map[string]any) map[string]any {
		p := map[string]any{"type": "string"}
		for k, v := range extra {
			p[k] = v
		}
		return map[string]any{"type": "object", "properties": map[string]any{"f": p}}
	}
	tests := []struct {
		name   string
		schema any
	}{
		{"a schema bomb", schemaBomb(40)},
		{"$ref in a field", field(map[string]any{"$ref": "#"})},
		{"allOf in a field", field(map[string]any{"allOf": []any{map[string]any{"type": "string"}}})},
		{"a nested object", map[string]any{"type": "object", "properties": map[string]any{"f": map[string]any{"type": "object"}}}},
		{"additionalProperties as a schema", map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": map[string]any{"$ref": "#"}}},
		{"an option with more than const and title", field(map[string]any{"oneOf": []any{map[string]any{"const": "a", "title": "A", "allOf": []any{}}}})},
		{"multi-select items with a $ref", map[string]any{"type": "object", "properties": map[string]any{"f": map[string]any{"type": "array", "items": map[string]any{"enum": []any{"a"}, "$ref": "#"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused before the handler runs", func(t *testing.T) {
			noLeaks(t)
			var called atomic.Bool
			elicit := func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				called.Store(true)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			}
			got := askClient(t, mcp.Options{ElicitForm: elicit}, "elicitation/create", map[string]any{"message": "?", "requestedSchema": tt.schema})
			assert.Contains(t, got, `"code":-32602`)
			assert.False(t, called.Load())
		})
	}
	t.Run("every keyword of the spec's primitive fields is accepted", func(t *testing.T) {
		noLeaks(t)
		schema := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": []any{"name"}, "properties": map[string]any{
			"name":  map[string]any{"type": "string", "title": "Name", "description": "d", "minLength": 1, "maxLength": 9, "format": "email", "default": "a@b.c"},
			"age":   map[string]any{"type": "integer", "minimum": 0, "maximum": 150, "default": 3},
			"ok":    map[string]any{"type": "boolean", "default": true},
			"color": map[string]any{"type": "string", "enum": []any{"red", "green"}, "enumNames": []any{"Red", "Green"}},
			"size":  map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "s", "title": "Small"}}},
			"tags":  map[string]any{"type": "array", "minItems": 0, "maxItems": 2, "items": map[string]any{"type": "string", "enum": []any{"x", "y"}}},
			"picks": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"const": "p", "title": "P"}}}},
		}}
		elicit := func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x@y.z"}}, nil
		}
		got := askClient(t, mcp.Options{ElicitForm: elicit}, "elicitation/create", map[string]any{"message": "?", "requestedSchema": schema})
		assert.True(t, strings.Contains(got, `"action":"accept"`), got)
	})
}
