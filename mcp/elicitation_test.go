package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestElicitation(t *testing.T) {
	form := func(result *mcp.ElicitResult) mcp.ElicitHandler {
		return func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return result, nil
		}
	}
	request := json.RawMessage(`{"mode":"form","message":"Who are you?","requestedSchema":` + formSchema + `}`)
	tests := []struct {
		name    string
		opts    mcp.Options
		request json.RawMessage
		want    string
	}{
		{"an accepted form gets the schema's defaults", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}})},
			request, `{"action":"accept","content":{"name":"Ada","age":30,"newsletter":false}}`},
		{"a request without mode is a form", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}})},
			json.RawMessage(`{"message":"?","requestedSchema":` + formSchema + `}`), `{"action":"accept","content":{"name":"Ada","age":36,"newsletter":false}}`},
		{"an answer that breaks the schema is not sent", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "", "color": "blue"}})},
			request, `error:-32602`},
		{"a declined form sends no content", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "decline", Content: map[string]any{"name": "x"}})},
			request, `{"action":"decline"}`},
		{"a schema that is not a flat form is refused", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept"})},
			json.RawMessage(`{"message":"?","requestedSchema":{"type":"object","properties":{"nested":{"type":"object"}}}}`), `error:-32602`},
		{"url mode reaches its handler", mcp.Options{ElicitURL: form(&mcp.ElicitResult{Action: "accept"})},
			json.RawMessage(`{"mode":"url","message":"Log in","url":"https://example.com/auth","elicitationId":"e1"}`), `{"action":"accept"}`},
		{"a mode not offered is invalid params", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept"})},
			json.RawMessage(`{"mode":"url","message":"Log in","url":"https://example.com/auth","elicitationId":"e1"}`), `error:-32602`},
		{"no elicitation handler at all is method not found", mcp.Options{}, request, `error:-32601`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			got := askClient(t, tt.opts, "elicitation/create", tt.request)
			if code, ok := strings.CutPrefix(tt.want, "error:"); ok {
				assert.Contains(t, got, `"code":`+code)
				return
			}
			assert.JSONEq(t, tt.want, got)
		})
	}
	t.Run("url mode completion is delivered", func(t *testing.T) {
		noLeaks(t)
		done := make(chan string, 1)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Notify("notifications/elicitation/complete", map[string]string{"elicitationId": "e1"})
			s.Reply(m.ID, mcptest.TextResult(""))
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			ElicitURL:           form(&mcp.ElicitResult{Action: "accept"}),
			ElicitationComplete: func(_ *mcp.Connection, id string) { done <- id }})
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "e1", <-done)
	})
}

const formSchema = `{"type":"object","properties":{
	"name":{"type":"string","minLength":1},
	"age":{"type":"integer","minimum":0,"default":30},
	"newsletter":{"type":"boolean","default":false},
	"color":{"type":"string","enum":["red","green"]},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},
	"required":["name","age"]}`

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
