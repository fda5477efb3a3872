package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/anthropic"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkingScript is a script that refuses what the Messages API refuses.
type checkingScript struct{ *script }

func (c checkingScript) CheckTool(t mcp.Tool) error { return anthropic.CheckSchema(t.InputSchema) }

// nested is a schema nested depth levels deep.
func nested(depth int) string {
	return strings.Repeat(`{"type":"array","items":`, depth) + `{"type":"integer"}` + strings.Repeat(`}`, depth)
}

func TestASchemaThatStartsWithACombinatorIsFlattenedAsClaudeCodeFlattensIt(t *testing.T) {
	tests := []struct {
		name, schema, description string
		wantSchema, wantNote      string
	}{
		{"a oneOf merges its branches, a property they define differently becomes an anyOf, and what every branch requires is required",
			`{"type":"object","oneOf":[{"properties":{"id":{"type":"integer"}},"required":["id"]},{"properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"]}]}`,
			"Pick one.",
			`{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"integer"}]},"name":{"type":"string"}},"required":["id"],"additionalProperties":true}`,
			"Input constraint: Provide parameters for exactly one of: (id) or (id, name)."},
		{"an anyOf follows a $ref into $defs and keeps $defs",
			`{"type":"object","anyOf":[{"$ref":"#/$defs/byName"},{"properties":{"url":{"type":"string"}},"required":["url"]}],"$defs":{"byName":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
			"",
			`{"type":"object","properties":{"name":{"type":"string"},"url":{"type":"string"}},"required":[],"$defs":{"byName":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},"additionalProperties":true}`,
			"Input constraint: Provide parameters for at least one of: (name) or (url)."},
		{"an allOf adds its branches' required, and a property defined at the top wins",
			`{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"allOf":[{"properties":{"y":{"type":"string"}},"required":["y","nowhere"]},{"properties":{"x":{"type":"string"},"z":{"type":"boolean"}}}]}`,
			"Both.",
			`{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"string"},"z":{"type":"boolean"}},"required":["x","y"],"additionalProperties":true}`,
			"Input constraint: all listed parameters apply together (flattened from a JSON Schema allOf)."},
		{"a definition two branches refer to counts once, and equal definitions make no anyOf",
			`{"oneOf":[{"$ref":"#/definitions/a"},{"$ref":"#/definitions/a"},{"properties":{"k":{"type":"string"}},"required":["k"]}],"definitions":{"a":{"properties":{"k":{"type":"string"},"v":{}},"required":["k","v"]}}}`,
			"",
			`{"type":"object","properties":{"k":{"type":"string"},"v":{}},"required":["k"],"definitions":{"a":{"properties":{"k":{"type":"string"},"v":{}},"required":["k","v"]}},"additionalProperties":true}`,
			"Input constraint: Provide parameters for exactly one of: (k, v) or (k)."},
		{"names that are numbers come first and a name the API refuses is dropped",
			`{"anyOf":[{"properties":{"b":{"type":"string"},"10":{"type":"string"},"2":{"type":"string"},"bad name":{"type":"string"}}}]}`,
			"",
			`{"type":"object","properties":{"2":{"type":"string"},"10":{"type":"string"},"b":{"type":"string"}},"required":[],"additionalProperties":true}`,
			"Input constraint: Provide parameters for at least one of: (2, 10, b, bad name)."},
		{"the kept keys stay, additionalProperties as the schema says, and a branch that is not an object names no group",
			`{"title":"T","description":"D","additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema","anyOf":[true,{"properties":{"a":{"type":"string"}},"required":["a"]}],"allOf":[{"required":["a"]}]}`,
			"Tool.",
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"description":"D","title":"T"}`,
			"Input constraint: Provide parameters for at least one of: (a)."},
		{"a oneOf whose branches name nothing speaks of parameter groups",
			`{"oneOf":[{"type":"object"},{"type":"object","minProperties":1}]}`,
			"",
			`{"type":"object","properties":{},"required":[],"additionalProperties":true}`,
			"Input constraint: Provide parameters for exactly one of the documented parameter groups (flattened from a JSON Schema oneOf)."},
		{"a suspect result (a default holding a required with a number) merges no differences",
			`{"oneOf":[{"properties":{"id":{"type":"integer"}},"required":["id"]},{"properties":{"id":{"type":"string"}},"required":["id"]}],"$defs":{"d":{"default":{"required":["b",1]}}}}`,
			"",
			`{"type":"object","properties":{"id":{"type":"integer"}},"required":[],"$defs":{"d":{"default":{"required":["b",1]}}},"additionalProperties":true}`,
			"Input constraint: Provide parameters for exactly one of: (id)."},
		{"a result nested past 64 levels merges no differences",
			`{"anyOf":[{"properties":{"id":` + nested(70) + `},"required":["id"]},{"properties":{"id":{"type":"string"}},"required":["id"]}]}`,
			"",
			`{"type":"object","properties":{"id":` + nested(70) + `},"required":[],"additionalProperties":true}`,
			"Input constraint: Provide parameters for at least one of: (id)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := agent.Funcs{{Tool: mcp.Tool{Name: "t", Description: tt.description, InputSchema: json.RawMessage(tt.schema)}}}
			s := checkingScript{&script{replies: []*agent.Response{answer("ok")}}}
			_, err := (&agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}}).Chat(context.Background(), "go")
			require.NoError(t, err)
			require.Len(t, s.requests[0].Tools, 1, "the tool is sent")
			got := s.requests[0].Tools[0]
			assert.JSONEq(t, tt.wantSchema, string(got.InputSchema))
			want := tt.wantNote
			if tt.description != "" {
				want += "\n\n" + tt.description
			}
			assert.Equal(t, want, got.Description)
			_, noted := sectionOf(s.requests[0], agent.UnavailableToolsTitle)
			assert.False(t, noted)
		})
	}
}

func TestASchemaThatCannotBeFlattenedIsLeftOutWithWhy(t *testing.T) {
	many := make([]string, 1025)
	for i := range many {
		many[i] = `{"properties":{"p":{"type":"string"}}}`
	}
	tests := []struct {
		name, schema, why string
	}{
		{"a combinator that is not an array", `{"type":"object","oneOf":{"a":{}}}`,
			"input schema has top-level oneOf that is not an array"},
		{"more branches than the bound", `{"anyOf":[` + strings.Join(many, ",") + `]}`,
			"input schema uses top-level anyOf and could not be normalized"},
		{"a flattened schema the API refuses", `{"anyOf":[{"properties":{"a":{"type":5}}}]}`,
			"its input schema is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := agent.Funcs{{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}}}
			s := checkingScript{&script{replies: []*agent.Response{answer("ok")}}}
			_, err := (&agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}}).Chat(context.Background(), "go")
			require.NoError(t, err)
			assert.Empty(t, s.requests[0].Tools)
			note, ok := sectionOf(s.requests[0], agent.UnavailableToolsTitle)
			require.True(t, ok)
			assert.Contains(t, note.Text, `- "t": "`+tt.why)
		})
	}
}

func TestNoFlattenLeavesOutASchemaThatStartsWithACombinator(t *testing.T) {
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","oneOf":[{"properties":{"a":{}}}]}`)}}}
	s := checkingScript{&script{replies: []*agent.Response{answer("ok")}}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}, ToolSchemas: &agent.ToolSchemaOptions{NoFlatten: true}}
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	assert.Empty(t, s.requests[0].Tools)
	note, ok := sectionOf(s.requests[0], agent.UnavailableToolsTitle)
	require.True(t, ok)
	assert.Contains(t, note.Text, `- "t": "its input schema uses top-level oneOf, which the Anthropic API does not accept"`)
}

func TestAModelThatTakesACombinatorGetsTheSchemaAsItIs(t *testing.T) {
	schema := `{"type":"object","oneOf":[{"properties":{"a":{}}}]}`
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "t", Description: "T.", InputSchema: json.RawMessage(schema)}}}
	s := &script{replies: []*agent.Response{answer("ok")}}
	_, err := (&agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}}).Chat(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, s.requests[0].Tools, 1)
	assert.JSONEq(t, schema, string(s.requests[0].Tools[0].InputSchema))
	assert.Equal(t, "T.", s.requests[0].Tools[0].Description)
}
