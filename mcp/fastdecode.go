package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// decodeCallToolResult decodes a tools/call result. raw must be owned by
// the caller and is consumed: its strings are unescaped in place and the
// result's strings point into it, so a result costs one copy of its bytes
// (the one the connection made) and no more. Anything this decoder does not
// expect is decoded by encoding/json instead: it is a fast path, never a
// different meaning.
func decodeCallToolResult(raw []byte) (*CallToolResult, error) {
	res := &CallToolResult{}
	var d ndjson.DeferredStrings // on the stack: most results have a few strings
	ok := ndjson.Members(raw, func(key, v []byte) bool {
		switch string(key) {
		case "content":
			if string(v) == "null" {
				res.Content = nil
				return true
			}
			// Size the slice first: deferred strings point into its elements.
			n := 0
			if !ndjson.Elements(v, func([]byte) bool { n++; return true }) {
				return false
			}
			res.Content = make([]Content, n)
			i := 0
			return ndjson.Elements(v, func(item []byte) bool {
				i++
				return decodeContent(item, &res.Content[i-1], &d)
			})
		case "structuredContent":
			return rawField(v, &res.StructuredContent)
		case "_meta":
			return rawField(v, &res.Meta)
		case "isError":
			return boolField(v, &res.IsError)
		}
		return !foldsTo(key, resultKeys) // encoding/json matches keys case-insensitively: leave those to it
	})
	if !ok {
		res = &CallToolResult{}
		if err := json.Unmarshal(raw, res); err != nil {
			return nil, &badResult{err}
		}
		return res, nil
	}
	d.Fill()
	return res, nil
}

// decodeContent decodes one content block; strings are deferred, so that
// nothing is unescaped unless the whole result walks cleanly.
func decodeContent(obj []byte, c *Content, d *ndjson.DeferredStrings) bool {
	return ndjson.Members(obj, func(key, v []byte) bool {
		switch string(key) {
		case "type":
			return d.Add(v, &c.Type)
		case "text":
			return d.Add(v, &c.Text)
		case "data":
			return d.Add(v, &c.Data)
		case "mimeType":
			return d.Add(v, &c.MimeType)
		case "uri":
			return d.Add(v, &c.URI)
		case "name":
			return d.Add(v, &c.Name)
		case "title":
			return d.Add(v, &c.Title)
		case "description":
			return d.Add(v, &c.Description)
		case "annotations":
			return rawField(v, &c.Annotations)
		case "_meta":
			return rawField(v, &c.Meta)
		case "size":
			return json.Unmarshal(v, &c.Size) == nil
		case "icons":
			return json.Unmarshal(v, &c.Icons) == nil
		case "resource":
			return json.Unmarshal(v, &c.Resource) == nil
		}
		// Any other key the Content type knows (sampling's tool_use and
		// tool_result fields), or one that differs from those only by case,
		// goes to encoding/json; keys Content lacks are ignored, as there.
		return !foldsTo(key, contentKeys)
	})
}

// The keys the types know, from their JSON tags: a field added to a type
// and not to the switches above is decoded by encoding/json, never
// dropped.
var (
	resultKeys  = jsonKeys(reflect.TypeFor[CallToolResult]())
	contentKeys = jsonKeys(reflect.TypeFor[Content]())
)

// jsonKeys returns the member names encoding/json gives the fields of the
// struct type t.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// foldsTo reports whether key matches one of keys but for case.
func foldsTo(key []byte, keys []string) bool {
	for _, k := range keys {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// rawField keeps a JSON value that must be valid; null means absent.
func rawField(v []byte, dst *json.RawMessage) bool {
	if bytes.Equal(v, []byte("null")) {
		return true
	}
	if !json.Valid(v) {
		return false
	}
	*dst = v
	return true
}

func boolField(v []byte, dst *bool) bool {
	switch string(v) {
	case "true":
		*dst = true
	case "false", "null":
		*dst = false
	default:
		return false
	}
	return true
}
