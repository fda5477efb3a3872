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

func TestAppendResponse(t *testing.T) {
	tests := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"a result", func() ([]byte, error) { return AppendResponse(nil, []byte(`7`), map[string]string{"a": "x\ny"}) }, `{"jsonrpc":"2.0","id":7,"result":{"a":"x\ny"}}`},
		{"a string id and no result", func() ([]byte, error) { return AppendResponse(nil, []byte(`"s\u00e91"`), nil) }, `{"jsonrpc":"2.0","id":"s\u00e91","result":{}}`},
		{"raw JSON on lines of its own", func() ([]byte, error) {
			return AppendResponse(nil, []byte(`1`), json.RawMessage("{\n \"roots\": []\n}"))
		}, `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`},
		{"an error", func() ([]byte, error) {
			return AppendErrorResponse(nil, []byte(`-3`), -32601, `method not found: "x"`, nil)
		}, `{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"method not found: \"x\""}}`},
		{"an error with data", func() ([]byte, error) {
			return AppendErrorResponse(nil, []byte(`2`), 1, "m", []byte(`{"k": [1, 2]}`))
		}, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":{"k": [1, 2]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.got()
			require.NoError(t, err)
			require.True(t, len(b) > 0 && b[len(b)-1] == '\n', "one line")
			assert.Equal(t, tt.want, string(b[:len(b)-1]))
			assert.True(t, json.Valid(b))
		})
	}
	_, err := AppendResponse(nil, []byte(`1`), json.RawMessage(`{"cut":`))
	assert.Error(t, err, "a result that is not JSON is refused")
}

func TestAToolCallIsWrittenAlikeByValueAndByPointer(t *testing.T) {
	for _, tc := range []struct {
		name string
		call ToolCall
		meta []byte
		want string
	}{
		{"without _meta", ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}, nil,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`},
		{"with the request's _meta", ToolCall{Name: "e\"cho", Arguments: json.RawMessage(`{}`)}, []byte(`"k":1`),
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"e\"cho","arguments":{},"_meta":{"k":1}}}`},
		{"with _meta of its own and the request's", ToolCall{Name: "echo", Arguments: json.RawMessage(`{}`), Meta: json.RawMessage(`{"a":2}`)}, []byte(`"k":1`),
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"k":1,"a":2}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			byValue, err := AppendRequest(nil, 3, "tools/call", tc.call, tc.meta)
			require.NoError(t, err)
			byPointer, err := AppendRequest(nil, 3, "tools/call", &tc.call, tc.meta)
			require.NoError(t, err)
			assert.Equal(t, tc.want+"\n", string(byValue))
			assert.Equal(t, string(byValue), string(byPointer))
		})
	}
	var none *ToolCall
	b, err := AppendParams(nil, none)
	require.NoError(t, err)
	assert.Equal(t, "null", string(b), "a nil *ToolCall is encoding/json's null")
}
