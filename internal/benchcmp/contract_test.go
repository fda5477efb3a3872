package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/mcplug/mcplug/internal/testproc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The contract floor must do what encoding/json does, byte for byte: the
// arguments it writes, the results it hands over, the messages it refuses.

func TestContractArgsAreWhatEncodingJSONWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"the bench's echo", map[string]any{"text": "hi"}},
		{"the bench's size", map[string]any{"size": 1 << 20}},
		{"no arguments", map[string]any{}},
		{"keys in encoding/json's order", map[string]any{"b": 1, "a": 2, "B": 3, "aa": 4, "": 5}},
		{"strings to escape", map[string]any{"s": "a\"b\\c\n\r\t\b\f\x00\x1f<>&\u2028\u2029\x7f"}},
		{"invalid UTF-8 and wide runes", map[string]any{"s": "\xff\xfe ok \xe2\x82 é 😀 \xed\xa0\x80"}},
		{"keys to escape", map[string]any{"<k>\n\xff": true}},
		{"scalars", map[string]any{"t": true, "f": false, "n": nil, "i64": int64(-7), "i": -1 << 40}},
		{"floats as encoding/json writes them", map[string]any{"a": 1.5, "b": 1e21, "c": 1e-7, "d": 123456789.0, "e": math.Copysign(0, -1), "f": 1e20, "g": 5e-324, "h": math.MaxFloat64}},
		{"values it leaves to encoding/json", map[string]any{"list": []any{1, "x"}, "obj": map[string]any{"k": 1.5}, "u8": uint8(3), "f32": float32(0.1)}},
		{"more keys than it sorts itself", func() map[string]any {
			m := map[string]any{}
			for i := range 20 {
				m[string(rune('a'+i))] = i
			}
			return m
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.args)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(appendContractArgs(nil, tc.args)))
		})
	}
}

func FuzzContractArgs(f *testing.F) {
	f.Add("text", "hi", int64(1), 1.5, true)
	f.Add("<&>", "\xff\u2028\x01\"\\", int64(-1<<62), 1e-7, false)
	f.Add("", "é😀\xed\xa0\x80", int64(0), 1e21, false)
	f.Fuzz(func(t *testing.T, key, s string, n int64, x float64, b bool) {
		args := map[string]any{key: s, key + "n": n, key + "x": x, "b" + key: b, "z": nil, "s" + key: s + key}
		want, err := json.Marshal(args)
		if err != nil { // NaN, ±Inf
			assert.True(t, math.IsNaN(x) || math.IsInf(x, 0), "encoding/json refused %v: %v", args, err)
			return
		}
		assert.Equal(t, string(want), string(appendContractArgs(nil, args)))
	})
}

// results are results the contract decoder must read as encoding/json
// does, or hand to it: the seeds of the fuzz test too.
var results = []struct {
	name string
	raw  string
	fast bool // read by the hand-written decoder, without encoding/json
}{
	{"the bench's echo", `{"content":[{"type":"text","text":"hello from the bench server"}]}`, true},
	{"space everywhere", " \t\r\n{ \"content\" : [ { \"type\" : \"text\" , \"text\" : \"x\" } ] , \"isError\" : true } \n", true},
	{"escapes", `{"content":[{"type":"text","text":"a\nb\"c\\d\/e\b\f\r\t\u00e9\u20ac\ud83d\ude00"}]}`, true},
	{"lone surrogates made U+FFFD", `{"content":[{"type":"text","text":"\ud800 \udc00 \ud800\u0041 \ud800\ud800 \ud83d"}]}`, true},
	{"invalid UTF-8 made U+FFFD", "{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\xe2\x82c\xed\xa0\x80d\xc0\xaf\"}]}", true},
	{"valid UTF-8", `{"content":[{"type":"text","text":"é€😀 ok"}]}`, true},
	{"a raw control character is refused", "{\"content\":[{\"type\":\"text\",\"text\":\"a\x01b\"}]}", false},
	{"a raw newline is refused", "{\"content\":[{\"type\":\"text\",\"text\":\"a\nb\"}]}", false},
	{"a bad escape is refused", `{"content":[{"type":"text","text":"a\qb"}]}`, false},
	{"a short \\u is refused", `{"content":[{"type":"text","text":"\u12"}]}`, false},
	{"members it does not know are checked and skipped", `{"content":[{"type":"text","text":"x","annotations":{"a":[1,-2.5e+3,true,null,"\u0041"]}}],"_meta":{"k":{}},"structuredContent":[]}`, true},
	{"a bad number in a member skipped is refused", `{"content":[],"_meta":{"n":01}}`, false},
	{"a bad literal is refused", `{"isError":tru}`, false},
	{"nulls", `{"content":[null,{"type":null,"text":null}],"isError":null}`, true},
	{"no content", `{"content":null}`, true},
	{"empty content", `{"content":[]}`, true},
	{"an empty object", `{}`, true},
	{"null", `null`, false},
	{"a key given twice", `{"content":[{"type":"text","text":"a","text":"b"}]}`, false},
	{"a key that differs by case", `{"Content":[{"TYPE":"text","text":"x"}]}`, false},
	{"a key with an escape", `{"cont\u0065nt":[{"type":"text","text":"x"}]}`, false},
	{"a wrong type", `{"content":"text"}`, false},
	{"trailing garbage", `{"content":[]} x`, false},
	{"truncated", `{"content":[{"type":"text","text":"x`, false},
	{"not JSON", `hello`, false},
	{"an unknown key differing by case from none", `{"zzz":1,"content":[]}`, true},
	{"deep nesting", `{"a":` + repeat("[", 1100) + repeat("]", 1100) + `}`, false},
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestContractResultIsWhatEncodingJSONDecodes(t *testing.T) {
	for _, tc := range results {
		t.Run(tc.name, func(t *testing.T) {
			sameAsEncodingJSON(t, []byte(tc.raw))
			d := contractDecoder{data: []byte(tc.raw)}
			assert.Equal(t, tc.fast, d.result(&contractResult{}) && d.end(), "read by the hand-written decoder")
		})
	}
}

func TestContractResultStringsAreTheirOwn(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"plain"},{"type":"text","text":"esc\naped"}]}`)
	res, err := decodeContractResult(raw)
	require.NoError(t, err)
	for i := range raw {
		raw[i] = 'X'
	}
	assert.Equal(t, []contractContent{{"text", "plain"}, {"text", "esc\naped"}}, res.Content)
}

func TestContractToolsAreWhatEncodingJSONDecodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		fast bool
	}{
		{"the bench's tools", `{"tools":[{"name":"echo","description":"Answer a short text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},{"name":"big","description":"Answer size bytes of text.","inputSchema":{"type":"object"}}]}`, true},
		{"a schema with space kept", `{"tools":[{"name":"a\u00e9","title":"T","inputSchema":{ "type" : "object" },"outputSchema":[1]}],"nextCursor":"c"}`, true},
		{"a null schema", `{"tools":[{"name":"a","inputSchema":null}]}`, false},
		{"no tools", `{"tools":null}`, true},
		{"a bad schema", `{"tools":[{"name":"a","inputSchema":{"type":}}]}`, false},
		{"a key that differs by case", `{"tools":[{"Name":"a"}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameToolsAsEncodingJSON(t, []byte(tc.raw))
			d := contractDecoder{data: []byte(tc.raw)}
			assert.Equal(t, tc.fast, d.tools(&contractTools{}) && d.end(), "read by the hand-written decoder")
		})
	}
}

func TestContractResponseFindsTheResult(t *testing.T) {
	n, err := contractTextLen([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\u00e9"}]}}` + "\n"))
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	_, err = contractTextLen([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`))
	assert.ErrorIs(t, err, errResponse)
	_, err = contractTextLen([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a"}]}`))
	assert.Error(t, err, "a line cut short")
	_, err = contractTextLen([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a` + "\x02" + `"}]}}`))
	assert.Error(t, err, "a control character")
}

func FuzzContractResponse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\u00e9"}]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"Result":{"content":[]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":null}`))
	for _, tc := range results {
		f.Add([]byte(`{"id":1,"result":` + tc.raw + `}`))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		var want contractResult
		wantErr := json.Unmarshal(line, &env)
		switch {
		case wantErr != nil:
		case env.Error != nil:
			wantErr = errResponse
		case env.Result == nil:
			wantErr = errNoResult
		default:
			wantErr = json.Unmarshal(env.Result, &want)
		}
		got, err := contractResponse(append([]byte(nil), line...))
		if wantErr != nil {
			assert.Error(t, err, "encoding/json: %v", wantErr)
			if errors.Is(wantErr, errResponse) || errors.Is(wantErr, errNoResult) {
				assert.ErrorIs(t, err, wantErr)
			}
			return
		}
		require.NoError(t, err)
		assert.Equal(t, want, *got)
	})
}

func FuzzContractResult(f *testing.F) {
	for _, tc := range results {
		f.Add([]byte(tc.raw))
	}
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{}}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameAsEncodingJSON(t, raw)
		sameToolsAsEncodingJSON(t, raw)
	})
}

// sameAsEncodingJSON checks that the contract decoder and encoding/json
// read raw alike: the same result, or both an error.
func sameAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	var want contractResult
	wantErr := json.Unmarshal(raw, &want)
	got, err := decodeContractResult(append([]byte(nil), raw...))
	if wantErr != nil {
		assert.Error(t, err, "encoding/json: %v", wantErr)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, *got)
	assert.Equal(t, want.Content == nil, got.Content == nil, "nil and empty content are told apart")
}

func sameToolsAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	var want contractTools
	wantErr := json.Unmarshal(raw, &want)
	got, err := decodeContractTools(append([]byte(nil), raw...))
	if wantErr != nil {
		assert.Error(t, err, "encoding/json: %v", wantErr)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, *got)
	assert.Equal(t, want.Tools == nil, got.Tools == nil, "nil and empty tools are told apart")
}

// BenchmarkContractResponse is what the contract floor spends on an
// answer: the bench server's echo, and its large results.
func BenchmarkContractResponse(b *testing.B) {
	for _, tc := range []struct {
		name, tool string
		size       int
	}{
		{"echo", "echo", 0},
		{"1 MiB with escapes", "big", 1 << 20},
		{"1 MiB plain", "plain", 1 << 20},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"size":%d}}}`+"\n", tc.tool, tc.size)
			line, ok := testproc.BenchAnswer(nil, []byte(req))
			require.True(b, ok)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := contractTextLen(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
