package formschema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckTakesOnlyTheSpecsPrimitiveForms(t *testing.T) {
	tests := []struct {
		name, schema, err string
	}{
		{name: "primitive fields", schema: `{"type":"object","properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0},"ok":{"type":"boolean","default":true}},"required":["name"]}`},
		{name: "a titled single select", schema: `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","title":"Red"}]}}}`},
		{name: "a multi select", schema: `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`},
		{name: "not an object", schema: `[]`, err: "not an object"},
		{name: "not of type object", schema: `{"type":"array"}`, err: `must have "type": "object"`},
		{name: "composition at the top", schema: `{"type":"object","allOf":[{}]}`, err: `keyword "allOf" is not allowed`},
		{name: "a $ref in a field", schema: `{"type":"object","properties":{"a":{"$ref":"#/x"}}}`, err: `keyword "$ref" is not allowed`},
		{name: "a nested object", schema: `{"type":"object","properties":{"a":{"type":"object"}}}`, err: "not a primitive form field"},
		{name: "an array that is no multi select", schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`, err: "multi-select enum"},
		{name: "an option with more than const and title", schema: `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","pattern":"x"}]}}}`, err: `keyword "pattern" is not allowed`},
		{name: "additionalProperties as a schema", schema: `{"type":"object","additionalProperties":{"type":"string"}}`, err: "may only be true or false"},
		{name: "a required field that is not defined", schema: `{"type":"object","properties":{},"required":["x"]}`, err: `required property "x" is not defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Check(json.RawMessage(tt.schema))
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "object", s.Type)
		})
	}
}

func TestWithDefaultsFillsOnlyWhatIsMissing(t *testing.T) {
	s, err := Check(json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer","default":30},"b":{"type":"boolean","default":false},"c":{"type":"string"}}}`))
	require.NoError(t, err)
	given := map[string]any{"a": 41}
	assert.Equal(t, map[string]any{"a": 41, "b": false}, s.WithDefaults(given))
	assert.Equal(t, map[string]any{"a": 41}, given, "the answer given is not changed")
	assert.Equal(t, map[string]any{"a": float64(30), "b": false}, s.WithDefaults(nil))
}
