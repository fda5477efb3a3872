package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A branch of many properties is refused in time in proportion to its
// size: each name was looked up among those merged so far, and 120,000
// properties (1.4 MB, well under a message's 64 MiB) took minutes. 24
// times the properties take about 24 times as long, past the cap alike
// (the quickest of three runs each: a ratio, so that the machine's speed
// and load cancel out); looking each name up among the others made it
// over 500.
func TestABranchOfManyPropertiesIsRefusedInLinearTime(t *testing.T) {
	branch := func(n int) json.RawMessage {
		var b strings.Builder
		b.WriteString(`{"anyOf":[{"properties":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{}`, i)
		}
		b.WriteString(`}}]}`)
		return json.RawMessage(b.String())
	}
	quickest := func(schema json.RawMessage) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			_, err := flatten(schema, true)
			best = min(best, time.Since(start))
			require.EqualError(t, err, "input schema uses top-level anyOf and could not be normalized")
		}
		return best
	}
	small, large := quickest(branch(5_000)), quickest(branch(120_000))
	t.Logf("5,000 properties in %v, 120,000 in %v: %.1f times", small, large, float64(large)/float64(small))
	assert.Less(t, float64(large)/float64(small), 100.0, "5,000 properties in %v, 120,000 in %v", small, large)
}

// Whatever a server's schema, flattening it does not panic, and what it
// makes is a JSON object of type "object", with properties and required,
// no larger than a few times the schema, and a note no longer than the
// schema's names.
func FuzzFlatten(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","oneOf":[{"properties":{"id":{"type":"integer"}},"required":["id"]},{"properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"]}]}`,
		`{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"},{"$ref":"#/definitions/b"},{"$ref":"#/$defs/missing"}],"$defs":{"a":{"properties":{"x":{}},"required":["x"]}},"definitions":{"b":{"$ref":"#/definitions/b"}}}`,
		`{"properties":{"x":{"type":"number"}},"required":["x","x",1,null],"allOf":[{"properties":{"y":{}},"required":["y","nowhere"]},{"properties":{"x":{"type":"string"}}}]}`,
		`{"anyOf":[true,false,null,1,"s",[],{}],"oneOf":[{"properties":{"10":{},"2":{},"bad name":{},"a":1}}],"allOf":[]}`,
		`{"anyOf":[{"properties":{"a":{"type":"string"},"a":{"type":"number"}}},{"properties":{"a":{"type":"boolean"}}}],"additionalProperties":false,"title":"T","description":"D","$schema":"x"}`,
		`{"oneOf":{"a":{}}}`,
		`{"allOf":[{"required":["a"],"properties":{"a":{"anyOf":[{"oneOf":[{}]}]}}}],"anyOf":[{"required":[["a"]]}]}`,
		`{"anyOf":[{"properties":{"\u00e9":{},"a\"b":{},"k":{"default":1e400}}}]}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, schema []byte, everyBranch bool) {
		if !json.Valid(schema) {
			return // a schema that is not JSON is refused before (checkSchema)
		}
		_ = rootCombinators(schema)
		fl, err := flatten(schema, everyBranch)
		if err != nil {
			return
		}
		require.True(t, json.Valid(fl.schema), "%s", fl.schema)
		var got struct {
			Type       *string                    `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(fl.schema, &got))
		require.NotNil(t, got.Type)
		assert.Equal(t, "object", *got.Type)
		assert.NotNil(t, got.Properties)
		assert.NotNil(t, got.Required)
		assert.LessOrEqual(t, len(got.Properties), maxFlattenProperties)
		for name := range got.Properties {
			assert.Regexp(t, propertyName, name)
		}
		for _, name := range got.Required {
			assert.Contains(t, got.Properties, name)
		}
		assert.LessOrEqual(t, len(fl.schema), 4*len(schema)+128, "the flattened schema grows with the schema alone")
		assert.LessOrEqual(t, len(fl.note), 2*len(schema)+256, "the note grows with the schema alone")
		suspect(fl.schema)
	})
}
