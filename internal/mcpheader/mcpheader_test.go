package mcpheader

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForToolFollowsTheSpecsRules(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []Param
		err          string
	}{
		{name: "no annotation, nothing parsed", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "a string, an integer and a boolean, nested through properties",
			schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},
				"opts":{"type":"object","properties":{"limit":{"type":"integer","x-mcp-header":"Limit"},"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}}}}`,
			want: []Param{{path: []string{"region"}, name: "Region", typ: "string"}, {path: []string{"opts", "limit"}, name: "Limit", typ: "integer"}, {path: []string{"opts", "dry"}, name: "Dry-Run", typ: "boolean"}}},
		{name: "the same name twice, whatever its case", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`,
			err: "used twice"},
		{name: "not a token", schema: `{"properties":{"a":{"type":"string","x-mcp-header":"a b"}}}`, err: "not an HTTP header token"},
		{name: "empty", schema: `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`, err: "not an HTTP header token"},
		{name: "an object property", schema: `{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, err: "not string, integer or boolean"},
		{name: "inside anyOf, not reached through properties alone", schema: `{"anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
			err: "reached through properties alone"},
		{name: "on the root", schema: `{"type":"string","x-mcp-header":"A"}`, err: "reached through properties alone"},
		{name: "an example that names one is not an annotation", schema: `{"properties":{"a":{"type":"string","examples":[{"x-mcp-header":"A"}]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ForTool(json.RawMessage(tt.schema))
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestValuesEncodeWhatAHeaderCannotCarry(t *testing.T) {
	hs := []Param{{path: []string{"s"}, name: "S", typ: "string"}, {path: []string{"n"}, name: "N", typ: "integer"}, {path: []string{"b"}, name: "B", typ: "boolean"}}
	tests := []struct {
		name, args string
		want       http.Header
		err        string
	}{
		{name: "plain values as they are", args: `{"s":"eu-west 1","n":42,"b":true}`,
			want: http.Header{"Mcp-Param-S": {"eu-west 1"}, "Mcp-Param-N": {"42"}, "Mcp-Param-B": {"true"}}},
		{name: "non-ASCII, a newline and edge spaces in base64", args: `{"s":"Zürich\nnext"}`,
			want: http.Header{"Mcp-Param-S": {"=?base64?WsO8cmljaApuZXh0?="}}},
		{name: "a value that looks encoded is encoded", args: `{"s":"=?base64?eA==?="}`,
			want: http.Header{"Mcp-Param-S": {"=?base64?PT9iYXNlNjQ/ZUE9PT89?="}}},
		{name: "absent and null have no header", args: `{"s":null}`, want: http.Header{}},
		{name: "a whole float is an integer", args: `{"n":7.0}`, want: http.Header{"Mcp-Param-N": {"7"}}},
		{name: "a fraction is not", args: `{"n":7.5}`, err: "not an integer"},
		{name: "past JavaScript's safe range", args: `{"n":9007199254740993}`, err: "safe integer range"},
		{name: "a string for a boolean", args: `{"b":"yes"}`, err: "is not of type boolean"},
		{name: "a boolean for a string", args: `{"s":false}`, err: "is not of type string"},
		{name: "a number for a string", args: `{"s":3}`, err: "is not of type string"},
		{name: "an object", args: `{"n":{"v":1}}`, err: "is not of type integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Values(hs, json.RawMessage(tt.args))
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSetStandardNamesTheMethodAndItsTarget(t *testing.T) {
	tests := []struct {
		method, params string
		want           http.Header
	}{
		{`"tools/call"`, `{"name":"add","arguments":{"name":"not this one"}}`, http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"add"}}},
		{`"resources/read"`, `{"uri":"file:///ü.txt"}`, http.Header{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"=?base64?ZmlsZTovLy/DvC50eHQ=?="}}},
		{`"tasks/get"`, `{"taskId":"t-1"}`, http.Header{"Mcp-Method": {"tasks/get"}, "Mcp-Name": {"t-1"}}},
		{`"tools/list"`, `{}`, http.Header{"Mcp-Method": {"tools/list"}}},
		{`"x\/custom"`, `{"name":"n"}`, http.Header{"Mcp-Method": {"x/custom"}}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			h := http.Header{}
			SetStandard(h, []byte(tt.method), []byte(tt.params))
			assert.Equal(t, tt.want, h)
		})
	}
}
