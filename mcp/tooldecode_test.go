package mcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkToolAsEncodingJSON decodes raw, valid JSON, with decodeTool and with
// encoding/json, and wants the same Tool, or both refusing it.
func checkToolAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	var want Tool
	wantErr := json.Unmarshal(raw, &want)
	var got Tool
	err := decodeTool(bytes.Clone(raw), &got)
	if wantErr != nil {
		assert.Error(t, err, "encoding/json refuses %q", raw)
		return
	}
	require.NoError(t, err, "%q", raw)
	assert.Equal(t, want, got, "%q", raw)
}

func TestDecodeTool(t *testing.T) {
	for _, raw := range []string{
		`{"name":"add","description":"Add two numbers.\nReturns their sum: \"a + b\".","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}`,
		`{"name":"t","title":"T","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"_meta":{"x":1}}`,
		`{"name":"t","inputSchema":{},"annotations":{"title":"A","readOnlyHint":true,"custom":[1]},"icons":[{"src":"i.png","sizes":["16x16"]}]}`,
		`{"name":"t","annotations":null,"icons":null,"inputSchema":null,"description":null}`,
		`{"name":"dup","name":"last","name":null,"inputSchema":{"a":1},"inputSchema":{"b":2}}`,
		`{"name":"t","annotations":{"title":"a"},"annotations":{"readOnlyHint":false}}`,
		`{"n\u0061me":"an escaped key","Description":"a key of another case"}`,
		`{"name":"h\u00e9llo \ud83d\ude00","description":"bad utf8 ` + "\xff" + ` here","unknown":{"deep":[1,"}"]}}`,
		`{"name":"t","annotations":{"readOnlyHint":null,"openWorldHint":true,"idempotentHint":false,"x":null,"x":{"y":[]}}}`,
		`{"name":"t","annotations":{"READONLYHINT":true,"T\u0069tle":"folded and escaped keys"}}`,
		`{"name":"t","annotations":{"title":"first","x":1},"annotations":{"destructiveHint":true}}`,
		`{"name":"t","annotations":{"title":7}}`,
		`{"name":"t","annotations":[]}`,
		`{"name":7}`,
		`{"name":"t","icons":{"src":"not an array"}}`,
		`{"name":"t","annotations":{"readOnlyHint":"yes"}}`,
		`{}`,
		`[]`,
		`null`,
	} {
		t.Run(raw, func(t *testing.T) { checkToolAsEncodingJSON(t, []byte(raw)) })
	}
	t.Run("strings point into the page, unescaped in place", func(t *testing.T) {
		raw := []byte(`{"name":"a\nb","inputSchema":{"type":"object"}}`)
		var tool Tool
		require.NoError(t, decodeTool(raw, &tool))
		assert.Equal(t, "a\nb", tool.Name)
		assert.Equal(t, `{"type":"object"}`, string(tool.InputSchema))
	})
}

// Every field of Tool comes through decodeTool as encoding/json decodes
// it; a field of a kind this test has no sample for fails it.
func TestDecodeToolKnowsEveryField(t *testing.T) {
	for f := range reflect.TypeFor[Tool]().Fields() {
		var sample string
		switch f.Type {
		case reflect.TypeFor[string]():
			sample = `"a\nb\u00e9"`
		case reflect.TypeFor[json.RawMessage]():
			sample = `{"k":[1,"v"]}`
		case reflect.TypeFor[*ToolAnnotations]():
			sample = `{"title":"t\nu","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"x":1}`
		case reflect.TypeFor[[]Icon]():
			sample = `[{"src":"https://i.example/a.png"}]`
		default:
			t.Fatalf("no sample for field %s of type %s: add one", f.Name, f.Type)
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		t.Run(f.Name, func(t *testing.T) {
			checkToolAsEncodingJSON(t, []byte(`{"name":"n",`+strconv.Quote(name)+`:`+sample+`}`))
		})
	}
}

func FuzzDecodeTool(f *testing.F) {
	f.Add([]byte(`{"name":"add","description":"a\nb","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"icons":[{"src":"x"}]}`))
	f.Add([]byte(`{"n\u0061me":"x","NAME":"y","title":null,"_meta":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // decodeTool is given the tools of a page checked whole
		}
		checkToolAsEncodingJSON(t, raw)
	})
}

// A tool as real servers list them (the description has escapes, the
// schema is nested), by decodeTool and by encoding/json.
func BenchmarkDecodeTool(b *testing.B) {
	src := []byte(`{"name":"search_repositories","description":"Search for GitHub repositories.\nReturns \"name\", \"url\" and \"stars\" for each.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Search query (see GitHub search syntax)"},"page":{"type":"number","description":"Page number for pagination (default: 1)"},"perPage":{"type":"number","description":"Number of results per page (default: 30, max: 100)"}},"required":["query"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},"annotations":{"title":"Search repositories","readOnlyHint":true}}`)
	buf := make([]byte, len(src))
	b.Run("decodeTool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(buf, src)
			var t Tool
			if err := decodeTool(buf, &t); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t Tool
			if err := json.Unmarshal(src, &t); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The tools of 47 real servers (../shared/fixtures/tools), each decoded as
// encoding/json decodes it.
func TestDecodeToolOnRealServersTools(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "tools", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the fixtures beside the repository")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var page struct{ Tools []json.RawMessage }
		require.NoError(t, json.Unmarshal(b, &page), f)
		for _, raw := range page.Tools {
			checkToolAsEncodingJSON(t, raw)
			n++
		}
	}
	assert.Greater(t, n, 600, "tools decoded")
}

// The 634 tools of the fixtures, as checkTool decodes them (a copy each)
// and by encoding/json.
func BenchmarkDecodeRealTools(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "tools", "*.json"))
	var tools []json.RawMessage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var page struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(data, &page); err != nil {
			b.Fatal(err)
		}
		tools = append(tools, page.Tools...)
	}
	if len(tools) == 0 {
		b.Fatal("no fixtures")
	}
	b.Run("decodeTool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range tools {
				var t Tool
				if err := decodeTool(bytes.Clone(raw), &t); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range tools {
				var t Tool
				if err := json.Unmarshal(raw, &t); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
