package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast decoder must mean exactly what encoding/json means.
func checkSameAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	var want CallToolResult
	wantErr := json.Unmarshal(raw, &want)
	got, err := decodeCallToolResult(bytes.Clone(raw))
	if wantErr != nil {
		// encoding/json refuses it; the fast path may only accept what has
		// a clear meaning, and must never panic.
		return
	}
	require.NoError(t, err)
	// Compare through JSON, so that RawMessage spacing does not matter.
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	assert.JSONEq(t, string(a), string(b))
}

func TestDecodeCallToolResult(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"plain"}]}`,
		`{"content":[{"type":"text","text":"one"},{"type":"text","text":"two"},{"type":"image","data":"x","mimeType":"y"},{"type":"text","text":"four"},{"type":"text","text":"five"}]}`,
		`{"content":[{"type":"text","text":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u20ac \ud83d\ude00 lone \ud800 end"}],"isError":true}`,
		`{"content":[{"type":"text","text":"héllo wörld ✓"}]}`,
		`{"content":[{"type":"image","data":"aW1n","mimeType":"image/png","annotations":{"priority":1}}],"structuredContent":{"a":[1,2,{"b":"}"}]},"_meta":{"x":1}}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a","size":12,"icons":[{"src":"i.png"}]}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///b","text":"bee"}}],"unknown":{"deep":[1,2,3]}}`,
		`{"content":[],"isError":false}`,
		`{"content":null}`,
		`{}`,
		`{"content":[{"type":"text","text":"bad utf8 ` + "\xff\xfe" + ` here"}]}`,
		`{"content":[{"type":"text","text":null}]}`,
		`{"content":[{"type":"text","t\u0065xt":"an escaped key"}],"\u0069sError":true}`,
		`{"content":[{"type":"text","TEXT":"a key of another case"}]}`,
	} {
		t.Run(raw, func(t *testing.T) { checkSameAsEncodingJSON(t, []byte(raw)) })
	}
	t.Run("strings point into the buffer, unescaped in place", func(t *testing.T) {
		raw := []byte(`{"content":[{"type":"text","text":"a\nb"}]}`)
		res, err := decodeCallToolResult(raw)
		require.NoError(t, err)
		assert.Equal(t, "a\nb", res.Content[0].Text)
	})
	t.Run("a broken structure falls back with the buffer untouched", func(t *testing.T) {
		raw := []byte(`{"content":[{"type":"text","text":"a\nb"}],"isError":maybe}`)
		_, err := decodeCallToolResult(raw)
		assert.ErrorIs(t, err, ErrBadResult)
	})
}

func FuzzDecodeCallToolResult(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"a\nb\u00e9"}],"structuredContent":{"x":1},"isError":true}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"x","mimeType":"y","size":3}]}`))
	long := strings.Repeat(`line\n`, 60) // past the length a walk remembers a string from
	f.Add([]byte(`{"content":[{"type":"text","text":"` + long + `\""},{"type":"text","text":"` + long + `"}],"_meta":{"m":"` + long + `"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkSameAsEncodingJSON(t, raw) })
}

// A small result, as most tools answer, by this decoder and by encoding/json.
func BenchmarkDecodeSmallResult(b *testing.B) {
	src := []byte(`{"content":[{"type":"text","text":"hello from the bench server"}]}`)
	buf := make([]byte, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, src)
		if _, err := decodeCallToolResult(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// A result of 1 MiB of text, with a newline every 64 bytes (escapes) or
// none (plain), decoded from a fresh copy each time (the copy is the same
// for any decoder).
func BenchmarkDecodeLargeResult(b *testing.B) {
	for _, tc := range []struct{ name, line string }{
		{"escapes", strings.Repeat("x", 63) + "\n"},
		{"plain", strings.Repeat("x", 64)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			text, err := json.Marshal(strings.Repeat(tc.line, 1<<14))
			require.NoError(b, err)
			src := []byte(`{"content":[{"type":"text","text":` + string(text) + `}]}`)
			buf := make([]byte, len(src))
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, src)
				if res, err := decodeCallToolResult(buf); err != nil || len(res.Content[0].Text) != 1<<20 {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStdlibDecodeSmallResult(b *testing.B) {
	src := []byte(`{"content":[{"type":"text","text":"hello from the bench server"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		var r CallToolResult
		if err := json.Unmarshal(src, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeAllocations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		src    string
		allocs float64
	}{
		{"a text result: the result and its one block, at once", `{"content":[{"type":"text","text":"hello from the bench server"}]}`, 1},
		{"two contents with escapes", `{"content":[{"type":"text","text":"a\nb"},{"type":"text","text":"\u00e9"}],"isError":true}`, 2},
		{"more strings than fit on the stack", `{"content":[{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"},{"type":"text","text":"4"},{"type":"text","text":"5"}]}`, 4}, // and two growths of the overflow
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]byte, len(tc.src))
			allocs := testing.AllocsPerRun(100, func() {
				copy(buf, tc.src)
				if _, err := decodeCallToolResult(buf); err != nil {
					t.Fatal(err)
				}
			})
			assert.Equal(t, tc.allocs, allocs)
		})
	}
}

// Every field of Content and CallToolResult comes through the fast path
// as encoding/json decodes it: a field added to a type and not to the
// fast path's switches is decoded by encoding/json, not dropped. A field
// of a kind this test has no sample for fails it, so that a new field gets
// one.
func TestTheFastPathKnowsEveryField(t *testing.T) {
	sample := func(f reflect.StructField) string {
		switch f.Type {
		case reflect.TypeFor[string]():
			return `"a\nb\u00e9"`
		case reflect.TypeFor[bool]():
			return `true`
		case reflect.TypeFor[*int64]():
			return `7`
		case reflect.TypeFor[json.RawMessage]():
			return `{"k":[1,"v"]}`
		case reflect.TypeFor[[]Icon]():
			return `[{"src":"https://i.example/a.png"}]`
		case reflect.TypeFor[*ResourceContents]():
			return `{"uri":"file:///a","text":"t"}`
		case reflect.TypeFor[[]Content]():
			return `[{"type":"text","text":"inner"}]`
		}
		t.Fatalf("no sample for field %s of type %s: add one", f.Name, f.Type)
		return ""
	}
	check := func(t *testing.T, raw string) {
		var want CallToolResult
		require.NoError(t, json.Unmarshal([]byte(raw), &want))
		got, err := decodeCallToolResult([]byte(raw))
		require.NoError(t, err)
		assert.Equal(t, &want, got)
	}
	for f := range reflect.TypeFor[Content]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		t.Run("Content."+f.Name, func(t *testing.T) {
			check(t, `{"content":[{"type":"text",`+strconv.Quote(name)+`:`+sample(f)+`}]}`)
		})
	}
	for f := range reflect.TypeFor[CallToolResult]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "content" {
			continue
		}
		t.Run("CallToolResult."+f.Name, func(t *testing.T) {
			check(t, `{"content":[],`+strconv.Quote(name)+`:`+sample(f)+`}`)
		})
	}
	t.Run("the keys come from the tags", func(t *testing.T) {
		assert.Contains(t, contentKeys, "toolUseId")
		assert.Equal(t, []string{"content", "structuredContent", "isError", "_meta"}, resultKeys)
	})
}

// The one-pass decoder takes the results it is made for, means by them
// what the walk means, and leaves every other result, untouched, to the
// walk.
func TestTheCompactDecoderAgreesWithTheWalk(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		taken bool
	}{
		{`{"content":[{"type":"text","text":"hello from the bench server"}]}`, true},
		{` { "content" : [ { "type" : "text" , "text" : "spaced" } ] , "isError" : true } `, true},
		{`{"isError":false,"content":[{"type":"image","data":"aW1n","mimeType":"image/png"},{"type":"resource_link","uri":"file:///a","name":"a","title":"A","description":"d"}]}`, true},
		{`{"content":[{"type":"text","text":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 lone \ud800 end"}]}`, true},
		{`{"content":[{"type":"text","text":"héllo ✓ ` + "\xff" + `"}]}`, true},
		{`{"content":[{"type":"text","text":"` + strings.Repeat(`long\n`, 40) + `"}]}`, true},
		{`{"content":[]}`, true},
		{`{"content":[{}]}`, true},
		{`{}`, true},
		{`{"content":[{"type":"text","text":""}]}`, true},
		{`{"content":[{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"},{"type":"text","text":"4"}]}`, true},

		{`{"content":[{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"},{"type":"text","text":"4"},{"type":"text","text":"5"}]}`, false},
		{`{"content":[{"type":"text","text":"a","text":"b"}]}`, false},
		{`{"content":[{"type":"text"}],"content":[]}`, false},
		{`{"content":[{"type":"text","text":null}]}`, false},
		{`{"content":null}`, false},
		{`{"content":[{"type":"text","TEXT":"another case"}]}`, false},
		{`{"content":[{"type":"text","t\u0065xt":"an escaped key"}]}`, false},
		{`{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}`, false},
		{`{"content":[],"structuredContent":{"a":1}}`, false},
		{`{"content":[],"_meta":{}}`, false},
		{`{"content":[],"isError":1}`, false},
		{`{"content":[],"isError":truex}`, false},
		{`{"content":[{"type":"text","text":"a"},]}`, false},
		{`{"content":[{"type":"text","text":"a",}]}`, false},
		{`{"content":[{"type":"text" "text":"a"}]}`, false},
		{`{"content":[{"type":"text","text":"a"}]} x`, false},
		{`{"content":[{"type":"text","text":"a"}]`, false},
		{`{"content":[{"type":"text","text":"a}]}`, false},
		{`["content"]`, false},
		{``, false},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			raw := []byte(tc.raw)
			got, taken := decodeCompactResult(raw)
			require.Equal(t, tc.taken, taken)
			if !taken {
				assert.Equal(t, tc.raw, string(raw), "a result refused is left as it was")
				return
			}
			want, err := walkCallToolResult([]byte(tc.raw))
			require.NoError(t, err)
			assert.Equal(t, want, got)
			checkSameAsEncodingJSON(t, []byte(tc.raw))
		})
	}
}

// Whatever the one-pass decoder takes, the walk reads the same way, and
// what it refuses it leaves as it was.
func FuzzCompactResultAgreesWithTheWalk(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"a\nb\u00e9"}],"isError":true}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"x","mimeType":"y"},{"type":"text","text":"` + strings.Repeat(`line\n`, 20) + `"}]}`))
	f.Add([]byte(` {"isError":false , "content":[ {} ] } `))
	f.Fuzz(func(t *testing.T, raw []byte) {
		mine := bytes.Clone(raw)
		got, taken := decodeCompactResult(mine)
		if !taken {
			assert.Equal(t, raw, mine, "a result refused is left as it was")
			return
		}
		want, err := walkCallToolResult(bytes.Clone(raw))
		require.NoError(t, err, "the walk refuses what the one-pass decoder took")
		assert.Equal(t, want, got)
	})
}
