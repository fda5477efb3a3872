package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/anthropic"
	"github.com/mcplug/mcplug/internal/mockllm"
	"github.com/mcplug/mcplug/internal/toolfixtures"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckToolRefusesWhatTheMessagesAPIRefuses(t *testing.T) {
	deep := `{"$defs":{"d0":{"type":"string"}`
	for i := 1; i < 40; i++ {
		deep += `,"d` + itoa(i) + `":{"allOf":[{"$ref":"#/$defs/d` + itoa(i-1) + `"},{"$ref":"#/$defs/d` + itoa(i-1) + `"}]}`
	}
	deep += `},"type":"object","properties":{"x":{"$ref":"#/$defs/d39"}}}`
	tests := []struct {
		name   string
		schema string
		err    string // "" when the API takes it
	}{
		{"an object schema", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, ""},
		{"a schema without type", `{"properties":{"a":{"type":"string"}}}`, ""},
		{"no schema at all", ``, ""},
		{"an empty object", `{}`, ""},
		{"another draft named in $schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"strin"}}}`, ""},
		{"not JSON", `{"type": "object",`, "is not JSON"},
		{"an array", `[{"type":"object"}]`, "is not a JSON object"},
		{"null", `null`, "is not a JSON object"},
		{"a type other than object", `{"type":"array","items":{}}`, `type is "array"`},
		{"a list of types", `{"type":["object","null"]}`, `type is ["object","null"]`},
		{"top-level oneOf", `{"type":"object","oneOf":[{"properties":{"a":{}}},{"properties":{"b":{}}}]}`, "uses top-level oneOf, which the Anthropic API does not accept"},
		{"top-level anyOf and allOf", `{"anyOf":[{}],"allOf":[{}]}`, "top-level anyOf/allOf"},
		{"a property key with a space", `{"type":"object","properties":{"a b":{"type":"string"}}}`, `property key "a b" does not match`},
		{"a property key of 65 characters", `{"type":"object","properties":{"` + strings.Repeat("k", 65) + `":{}}}`, "does not match"},
		{"an invalid type inside", `{"type":"object","properties":{"x":{"type":"strin"}}}`, "input schema is invalid"},
		{"a schema too costly to check", deep, "too complex"},
	}
	m := anthropic.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.CheckTool(mcp.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)})
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.LessOrEqual(t, len(err.Error()), 400, "a reason quotes little of the server's text")
		})
	}
}

func TestEveryFixtureToolPassesTheCheck(t *testing.T) {
	tools, err := toolfixtures.Exposed()
	require.NoError(t, err)
	require.Len(t, tools, 634)
	for _, tl := range tools {
		assert.NoError(t, anthropic.CheckSchema(tl.InputSchema), tl.Name)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// The SDK leaves out an input schema that is all zero, and the API
// refuses a tool without one: {"type":"object"} (mcptest's default, and
// the schema of a tool without arguments) must reach it whole.
func TestASchemaWithoutPropertiesIsSentWhole(t *testing.T) {
	mock, err := mockllm.Start(mockllm.Turn{Text: "ok"})
	require.NoError(t, err)
	defer mock.Close()
	m := anthropic.New(option.WithBaseURL(mock.URL), option.WithAPIKey("k"))
	for _, schema := range []string{`{"type":"object"}`, ``, `{}`} {
		req := &agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}},
			Tools: []mcp.Tool{{Name: "now", Description: "The time.", InputSchema: json.RawMessage(schema)}}}
		_, err := m.Generate(context.Background(), req, nil)
		require.NoError(t, err, "schema %q", schema)
		mock.Close()
		mock, err = mockllm.Start(mockllm.Turn{Text: "ok"})
		require.NoError(t, err)
		m = anthropic.New(option.WithBaseURL(mock.URL), option.WithAPIKey("k"))
	}
}
