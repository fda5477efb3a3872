package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWhatAServerRequestHandsAnObserverIsBounded(t *testing.T) {
	meta := map[string]any{
		"traceparent":                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"io.modelcontextprotocol/related-task": "t1",
		"huge":                                 strings.Repeat("x", maxMetaValue+1),
		"number":                               7,
	}
	for i := range 100 {
		meta[fmt.Sprint("k", i)] = "v"
	}
	params, _ := json.Marshal(map[string]any{"_meta": meta})
	got := stringMeta(params)
	assert.LessOrEqual(t, len(got), maxMetaKeys)
	assert.NotContains(t, got, "io.modelcontextprotocol/related-task", "the protocol's own keys are not trace context")
	assert.NotContains(t, got, "huge")
	assert.NotContains(t, got, "number")

	small, _ := json.Marshal(map[string]any{"_meta": map[string]any{"traceparent": "tp", "tracestate": "ts"}})
	assert.Equal(t, map[string]string{"traceparent": "tp", "tracestate": "ts"}, stringMeta(small))

	assert.Len(t, peerRequestID(strings.Repeat("9", 1000)), maxPeerID)
	assert.Equal(t, "17", peerRequestID("17"))
}
