package schemawork

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doubling is a schema whose depth definitions each refer twice to the
// next: applying it visits 2^depth subschemas.
func doubling(depth int) string {
	defs := map[string]any{}
	for i := range depth {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{next, next}}
	}
	defs[fmt.Sprintf("d%d", depth)] = map[string]any{"type": "string"}
	b, _ := json.Marshal(map[string]any{"$defs": defs, "$ref": "#/$defs/d0"})
	return string(b)
}

func TestOfCountsWhatApplyingASchemaVisits(t *testing.T) {
	tests := []struct {
		name, schema string
		want         int
	}{
		{name: "one schema", schema: `{"type":"string"}`, want: 1},
		{name: "true is a schema too", schema: `true`, want: 1},
		{name: "each property", schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"items":{"type":"integer"}}}}`, want: 4},
		{name: "a shared definition counts every time it is reached", schema: `{"$defs":{"s":{"type":"string"}},"anyOf":[{"$ref":"#/$defs/s"},{"$ref":"#/$defs/s"}]}`, want: 5},
		// d_i is itself and twice (its $ref object and d_{i+1}): c_i+3 = 2(c_{i+1}+3), c_10 = 1,
		// so c_0 = 4·2^10 - 3, and the root adds one.
		{name: "ten doublings", schema: doubling(10), want: 4<<10 - 3 + 1},
		{name: "forty doublings stop at the limit", schema: doubling(40), want: MaxSchemaWork + 1},
		{name: "a $ref cycle ends", schema: `{"$defs":{"a":{"properties":{"next":{"$ref":"#/$defs/a"}}}},"$ref":"#/$defs/a"}`, want: 4},
		{name: "a $ref to another document is not loaded", schema: `{"$ref":"https://example.com/other.json"}`, want: 1},
		{name: "a $ref by $id", schema: `{"$id":"https://x.test/root","$defs":{"s":{"$id":"https://x.test/s","type":"string"}},"$ref":"https://x.test/s"}`, want: 2},
		{name: "a JSON pointer with escapes", schema: `{"$defs":{"a/b":{"type":"string"}},"$ref":"#/$defs/a~1b"}`, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			require.NoError(t, json.Unmarshal([]byte(tt.schema), &doc))
			assert.Equal(t, tt.want, Of(doc, "urn:test", MaxSchemaWork))
		})
	}
}
