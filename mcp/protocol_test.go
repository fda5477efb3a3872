package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
)

func TestToolAnnotationsKeepWhatThisPackageDoesNotKnow(t *testing.T) {
	tests := []struct {
		name, in, out string
		readOnly      *bool
		extra         []string
	}{
		{name: "known hints only", in: `{"title":"Add","readOnlyHint":true}`,
			out: `{"title":"Add","readOnlyHint":true}`, readOnly: ptr(true)},
		{name: "unknown members are kept and written back", in: `{"readOnlyHint":false,"x-cost":{"usd":0.01},"streaming":true}`,
			out: `{"readOnlyHint":false,"streaming":true,"x-cost":{"usd":0.01}}`, readOnly: ptr(false), extra: []string{"streaming", "x-cost"}},
		{name: "an unknown member never overrides a known one", in: `{}`, out: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a mcp.ToolAnnotations
			require.NoError(t, json.Unmarshal([]byte(tt.in), &a))
			assert.Equal(t, tt.readOnly, a.ReadOnlyHint)
			var keys []string
			for k := range a.Extra {
				keys = append(keys, k)
			}
			assert.ElementsMatch(t, tt.extra, keys)
			b, err := json.Marshal(a)
			require.NoError(t, err)
			assert.JSONEq(t, tt.out, string(b))
		})
	}
	t.Run("Extra cannot replace a known field", func(t *testing.T) {
		a := mcp.ToolAnnotations{Title: "real", Extra: map[string]json.RawMessage{"title": json.RawMessage(`"forged"`)}}
		b, err := json.Marshal(a)
		require.NoError(t, err)
		assert.JSONEq(t, `{"title":"real"}`, string(b))
	})
}

func TestResultTextJoinsTheTextBlocks(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		{Type: mcp.ContentText, Text: "first"},
		{Type: mcp.ContentImage, Data: "aW1n", MimeType: "image/png", Text: "not text"},
		{Type: mcp.ContentText, Text: "second"},
	}}
	assert.Equal(t, "first\nsecond", res.Text())
	assert.Equal(t, "", (&mcp.CallToolResult{}).Text())
}

func ptr[T any](v T) *T { return &v }
