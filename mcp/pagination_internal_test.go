package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageByEncodingJSON is how a page was decoded before, through
// encoding/json alone: the reference listPage must agree with.
func pageByEncodingJSON(raw []byte, key string) (*page[json.RawMessage], error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, ErrBadResult
	}
	out := &page[json.RawMessage]{}
	if items, ok := m[key]; ok {
		if err := json.Unmarshal(items, &out.Items); err != nil {
			return nil, err
		}
	}
	if next, ok := m["nextCursor"]; ok {
		json.Unmarshal(next, &out.NextCursor)
	}
	if ttl, ok := m["ttlMs"]; ok {
		var n int64
		if json.Unmarshal(ttl, &n) == nil {
			out.TTLMs = &n
		}
	}
	if scope, ok := m["cacheScope"]; ok {
		json.Unmarshal(scope, &out.CacheScope)
	}
	return out, nil
}

// pageOf runs listPage on a result as a Connection decodes it.
func pageOf(raw []byte) (*page[json.RawMessage], error) {
	c := pager{call: func(_ context.Context, method string, _, result any) error {
		return (&Connection{}).decode(method, append([]byte(nil), raw...), result)
	}}
	return listPage[json.RawMessage](context.Background(), c, "tools/list", "tools", nil)
}

func checkPageAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	want, wantErr := pageByEncodingJSON(raw, "tools")
	got, err := pageOf(raw)
	if wantErr != nil {
		require.Error(t, err, "encoding/json refuses %q", raw)
		assert.True(t, errors.Is(err, ErrBadResult), "%v", err)
		return
	}
	require.NoError(t, err, "%q", raw)
	if len(want.Items) == 0 {
		assert.Empty(t, got.Items)
		want.Items, got.Items = nil, nil
	}
	assert.Equal(t, want, got, "%q", raw)
}

func TestAPageDecodesAsEncodingJSONDecodesIt(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"tools and a cursor", `{"tools":[{"name":"a"},{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c2"}`},
		{"no tools", `{"tools":[]}`},
		{"null tools", `{"tools":null}`},
		{"no tools member", `{"nextCursor":"x"}`},
		{"space everywhere", " {\n \"tools\" : [ {\"name\":\"a\"} , 1 ] ,\"ttlMs\": 5000 , \"cacheScope\":\"private\" } "},
		{"a duplicate member: the last wins", `{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}`},
		{"an escaped member name", `{"\u0074ools":[{"name":"a"}],"next\u0043ursor":"n"}`},
		{"a name that differs only by case is another member", `{"Tools":[{"name":"a"}]}`},
		{"a cursor of the wrong type is ignored", `{"tools":[],"nextCursor":7,"ttlMs":"x"}`},
		{"a null result", `null`},
		{"an array result", `[{"name":"a"}]`},
		{"tools that are no array", `{"tools":{"name":"a"}}`},
		{"invalid JSON in an unknown member", `{"tools":[],"x":tru}`},
		{"invalid JSON in a tool", `{"tools":[{"name":}]}`},
		{"a cut result", `{"tools":[{"name":"a"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPageAsEncodingJSON(t, []byte(tt.raw)) })
	}
}

func FuzzPageDecodesAsEncodingJSONDecodesIt(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a"}],"nextCursor":"c","ttlMs":1,"cacheScope":"public"}`))
	f.Add([]byte(`{"\u0074ools":[1,"x",null],"tools":[]}`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkPageAsEncodingJSON(t, raw) })
}
