package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolArgumentsEncodeAsEncodingJSONDoes(t *testing.T) {
	for _, args := range []any{
		map[string]string{"text": "line\nwith \"quotes\" and é"},
		map[string]any{"a": 17, "b": 25.0, "c": nil, "d": true, "e": "x"},
		map[string]any{"nested": map[string]any{"a": []any{1, 2}}},
		struct {
			Text string `json:"text"`
		}{"hi"},
		json.RawMessage(`{"raw": [1, 2]}`),
	} {
		want, err := json.Marshal(args)
		require.NoError(t, err)
		got, err := encodeArguments(nil, args)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
	for _, bad := range []any{[]int{1}, "text", 42} {
		_, err := encodeArguments(nil, bad)
		assert.Error(t, err, "%T is not an object", bad)
	}
	got, err := encodeArguments(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(got), "nil sends {}")
}

func BenchmarkEncodeArguments(b *testing.B) {
	for _, bc := range []struct {
		name string
		args any
	}{
		{"map of strings", map[string]string{"text": "hi"}},
		{"map of any", map[string]any{"a": 17, "b": 25}},
		{"struct", struct {
			Text string `json:"text"`
		}{"hi"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encodeArguments(buf[:0], bc.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
