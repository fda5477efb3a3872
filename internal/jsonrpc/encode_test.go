package jsonrpc

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendArgs(t *testing.T) {
	tests := []struct {
		name string
		args any
		fast bool
	}{
		{"a map of strings", map[string]string{"b": "2", "a": "1", "c": "x\"y\\z\n"}, true},
		{"an empty map", map[string]any{}, true},
		{"strings, numbers, booleans and null", map[string]any{"text": "hi", "n": 17, "m": int64(-3), "f": 25.0, "ok": true, "none": nil}, true},
		{"unicode and HTML characters", map[string]any{"é": "<b>&</b> ✓"}, true},
		{"a fraction", map[string]any{"f": 0.5}, false},
		{"a large float", map[string]any{"f": 1e21}, false},
		{"negative zero", map[string]any{"f": math.Copysign(0, -1)}, false},
		{"a nested map", map[string]any{"inner": map[string]any{"a": 1}}, false},
		{"a slice", map[string]any{"list": []any{1, 2}}, false},
		{"a struct", struct{ A int }{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.args)
			require.NoError(t, err)
			got, ok := AppendArgs([]byte("prefix"), tt.args)
			assert.Equal(t, tt.fast, ok)
			if !ok {
				assert.Equal(t, "prefix", string(got), "nothing is left behind")
				return
			}
			require.True(t, json.Valid(got[len("prefix"):]), "%s", got)
			assert.JSONEq(t, string(want), string(got[len("prefix"):]))
			var a, b any
			require.NoError(t, json.Unmarshal(want, &a))
			require.NoError(t, json.Unmarshal(got[len("prefix"):], &b))
			assert.Equal(t, a, b)
		})
	}
}

func TestAppendArgsSortsKeysAsEncodingJSON(t *testing.T) {
	args := map[string]any{"zeta": 1, "alpha": "a", "Mid": true, "_x": nil}
	want, err := json.Marshal(args)
	require.NoError(t, err)
	got, ok := AppendArgs(nil, args)
	require.True(t, ok)
	assert.Equal(t, string(want), string(got))
}
