package mockllm

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMockRefusesToolSchemasTheAPIRefuses(t *testing.T) {
	tests := []struct {
		name   string
		tool   string
		refuse string // "" when taken
	}{
		{"an object schema", `{"name":"t","input_schema":{"type":"object","properties":{"a":{"type":"string"}}}}`, ""},
		{"the API's own tool search tool", `{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`, ""},
		{"no input_schema", `{"name":"t"}`, "not a JSON object"},
		{"no type", `{"name":"t","input_schema":{"properties":{}}}`, "Field required to be"},
		{"an array type", `{"name":"t","input_schema":{"type":"array"}}`, "Field required to be"},
		{"a top-level oneOf", `{"name":"t","input_schema":{"type":"object","oneOf":[{},{}]}}`, "oneOf, allOf, or anyOf at the top level"},
		{"a property key with a space", `{"name":"t","input_schema":{"type":"object","properties":{"a b":{}}}}`, "property keys should match"},
		{"an invalid schema", `{"name":"t","input_schema":{"type":"object","properties":{"a":{"type":"strin"}}}}`, "JSON schema is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(Turn{Text: "ok"})
			require.NoError(t, err)
			defer s.Close()
			resp := post(t, s.URL, `{"model":"m","max_tokens":10,"messages":[],"tools":[`+tt.tool+`]}`)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tt.refuse == "" {
				assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
				return
			}
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, string(body), tt.refuse)
		})
	}
}
