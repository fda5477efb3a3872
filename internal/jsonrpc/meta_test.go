package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStringMetaTakesBoundedTraceContextOnly(t *testing.T) {
	meta := map[string]any{
		"traceparent":                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"io.modelcontextprotocol/related-task": "t1",
		"huge":                                 strings.Repeat("x", MaxMetaValue+1),
		"number":                               7,
	}
	for i := range 100 {
		meta[fmt.Sprint("k", i)] = "v"
	}
	params, _ := json.Marshal(map[string]any{"_meta": meta})
	got := StringMeta(params)
	assert.LessOrEqual(t, len(got), MaxMetaKeys)
	assert.NotContains(t, got, "io.modelcontextprotocol/related-task", "the protocol's own keys are not trace context")
	assert.NotContains(t, got, "huge")
	assert.NotContains(t, got, "number")

	small, _ := json.Marshal(map[string]any{"_meta": map[string]any{"traceparent": "tp", "tracestate": "ts"}})
	assert.Equal(t, map[string]string{"traceparent": "tp", "tracestate": "ts"}, StringMeta(small))

}

func TestAppendMetaWritesMembersInKeyOrder(t *testing.T) {
	assert.Nil(t, AppendMeta(nil, nil))
	got := AppendMeta(nil, map[string]string{"tracestate": "a=1", "traceparent": "00-x\"y"})
	assert.Equal(t, `"traceparent":"00-x\"y","tracestate":"a=1"`, string(got))
	var obj map[string]string
	assert.NoError(t, json.Unmarshal([]byte("{"+string(got)+"}"), &obj))
}
