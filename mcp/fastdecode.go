package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// decodeCallToolResult decodes a tools/call result. raw must be owned by
// the caller and is consumed: its strings are unescaped in place and the
// result's strings point into it, so a result costs one copy of its bytes
// (the one the connection made) and no more. Anything this decoder does not
// expect is decoded by encoding/json instead: it is a fast path, never a
// different meaning.
//
// Most results are read in one pass by decodeCompactResult; the others are
// walked (walkCallToolResult).
func decodeCallToolResult(raw []byte) (*CallToolResult, error) {
	if res, ok := decodeCompactResult(raw); ok {
		return res, nil
	}
	return walkCallToolResult(raw)
}

// walkCallToolResult is decodeCallToolResult for any result: its members
// are found by a walk, and what the walk does not expect goes to
// encoding/json.
func walkCallToolResult(raw []byte) (*CallToolResult, error) {
	res := &CallToolResult{}
	var d ndjson.DeferredStrings // on the stack: most results have a few strings
	var w ndjson.Walk            // a long text is crossed once, not for each level it is in
	ok := w.Members(raw, func(key, v []byte) bool {
		switch string(key) {
		case "content":
			if string(v) == "null" {
				res.Content = nil
				return true
			}
			// The blocks are found first and the slice made to their
			// number: deferred strings point into its elements.
			var small [8][]byte // as many as DeferredStrings keeps on the stack
			items := small[:0]
			if !w.Elements(v, func(item []byte) bool { items = append(items, item); return true }) {
				return false
			}
			res.Content = make([]Content, len(items))
			for i, item := range items {
				if !decodeContent(item, &res.Content[i], &d, &w) {
					return false
				}
			}
			return true
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
func decodeContent(obj []byte, c *Content, d *ndjson.DeferredStrings, w *ndjson.Walk) bool {
	return w.Members(obj, func(key, v []byte) bool {
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

// decodeTool decodes one tool of a tools/list page into t, as encoding/json
// would. raw is consumed: strings are unescaped in place in it (and point
// into it), the schemas and other raw members are its spans; icons go to
// encoding/json. raw must be valid JSON (a page is checked whole before
// its tools are decoded). A key that may name a field to encoding/json
// but not to this decoder (see foldsTo) sends the whole tool to
// encoding/json.
func decodeTool(raw []byte, t *Tool) error {
	var d ndjson.DeferredStrings
	ok := ndjson.Members(raw, func(key, v []byte) bool {
		switch string(key) {
		case "name":
			return d.Add(v, &t.Name)
		case "title":
			return d.Add(v, &t.Title)
		case "description":
			return d.Add(v, &t.Description)
		case "inputSchema":
			t.InputSchema = v
		case "outputSchema":
			t.OutputSchema = v
		case "execution":
			t.Execution = v
		case "_meta":
			t.Meta = v
		case "annotations":
			return decodeAnnotations(v, &t.Annotations, &d)
		case "icons":
			return json.Unmarshal(v, &t.Icons) == nil
		default:
			return !foldsTo(key, toolKeys)
		}
		return true
	})
	if !ok {
		*t = Tool{}
		return json.Unmarshal(raw, t)
	}
	d.Fill()
	return nil
}

// decodeAnnotations decodes a tool's annotations into *dst as
// encoding/json and ToolAnnotations.UnmarshalJSON would: null clears them,
// an object is decoded into the annotations already there (a key given
// twice), members it does not know go to Extra.
func decodeAnnotations(v []byte, dst **ToolAnnotations, d *ndjson.DeferredStrings) bool {
	if string(v) == "null" {
		*dst = nil
		return true
	}
	a := *dst
	if a == nil {
		a = new(ToolAnnotations)
	}
	var extra map[string]json.RawMessage
	ok := ndjson.Members(v, func(key, v []byte) bool {
		switch string(key) {
		case "title":
			return d.Add(v, &a.Title)
		case "readOnlyHint":
			return hintField(v, &a.ReadOnlyHint)
		case "destructiveHint":
			return hintField(v, &a.DestructiveHint)
		case "idempotentHint":
			return hintField(v, &a.IdempotentHint)
		case "openWorldHint":
			return hintField(v, &a.OpenWorldHint)
		}
		if foldsTo(key, annotationKeys) || !utf8.Valid(key) { // encoding/json would change the key
			return false
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[string(key)] = v
		return true
	})
	if !ok {
		return false
	}
	a.Extra = extra
	*dst = a
	return true
}

// hintField decodes a boolean hint: null clears it.
func hintField(v []byte, dst **bool) bool {
	switch string(v) {
	case "true", "false":
		b := v[0] == 't'
		*dst = &b
	case "null":
		*dst = nil
	default:
		return false
	}
	return true
}

// The keys the types know, from their JSON tags: a field added to a type
// and not to the switches above is decoded by encoding/json, never
// dropped.
var (
	resultKeys     = jsonKeys(reflect.TypeFor[CallToolResult]())
	contentKeys    = jsonKeys(reflect.TypeFor[Content]())
	toolKeys       = jsonKeys(reflect.TypeFor[Tool]())
	annotationKeys = jsonKeys(reflect.TypeFor[ToolAnnotations]())
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

// foldsTo reports whether key may name one of keys to encoding/json,
// which this decoder leaves to it: key matches one but for case, or has
// escapes (which encoding/json reads before it matches).
func foldsTo(key []byte, keys []string) bool {
	if bytes.IndexByte(key, '\\') >= 0 {
		return true
	}
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

// compactBlocks is how many content blocks decodeCompactResult takes; a
// result with more is walked.
const compactBlocks = 4

// compactFields are the members of a content block decodeCompactResult
// takes, all strings, and the field of each; a block with any other
// member is walked.
var compactFields = [...]struct {
	key   string
	field func(*Content) *string
}{
	{"type", func(c *Content) *string { return &c.Type }},
	{"text", func(c *Content) *string { return &c.Text }},
	{"data", func(c *Content) *string { return &c.Data }},
	{"mimeType", func(c *Content) *string { return &c.MimeType }},
	{"uri", func(c *Content) *string { return &c.URI }},
	{"name", func(c *Content) *string { return &c.Name }},
	{"title", func(c *Content) *string { return &c.Title }},
	{"description", func(c *Content) *string { return &c.Description }},
}

// compactField is where a string of a block is in the result: the span of
// its literal, quotes included (end 0: absent), and whether its bytes
// between the quotes are its value.
type compactField struct {
	start, end int32
	plain      bool
}

// oneBlock is a result of one content block, allocated at once.
type oneBlock struct {
	res     CallToolResult
	content [1]Content
}

// decodeCompactResult decodes, in one pass over raw, a result made only of
// "content" (up to compactBlocks blocks, each with string members of
// compactFields) and "isError", each at most once, with plain keys: what
// most tools answer. It reports false for anything else, having changed
// nothing in raw, and the walk of decodeCallToolResult takes it from the
// start. On success raw is consumed as there: strings with escapes are
// unescaped in place, and every string points into raw.
func decodeCompactResult(raw []byte) (*CallToolResult, bool) {
	if len(raw) > math.MaxInt32 {
		return nil, false
	}
	var blocks [compactBlocks][len(compactFields)]compactField
	nblocks := -1 // no content member
	isError, seenIsError := false, false
	i, more, ok := compactOpen(raw, 0, '{', '}')
	for ok && more {
		var key string
		if key, i, ok = compactKey(raw, i); !ok {
			break
		}
		switch {
		case key == "content" && nblocks < 0:
			nblocks, i = compactContent(raw, i, &blocks)
			ok = nblocks >= 0
		case key == "isError" && !seenIsError:
			seenIsError = true
			switch {
			case bytes.HasPrefix(raw[i:], []byte("true")):
				isError, i = true, i+4
			case bytes.HasPrefix(raw[i:], []byte("false")):
				i += 5
			default:
				ok = false
			}
		default: // another member, or one given twice
			ok = false
		}
		if ok {
			i, more, ok = compactNext(raw, i, '}')
		}
	}
	if !ok || ndjson.SkipSpace(raw, i) != len(raw) {
		return nil, false
	}

	var res *CallToolResult
	switch nblocks {
	case -1:
		res = &CallToolResult{}
	case 1:
		one := &oneBlock{}
		res = &one.res
		res.Content = one.content[:]
	default:
		res = &CallToolResult{Content: make([]Content, nblocks)}
	}
	res.IsError = isError
	var d ndjson.DeferredStrings
	for b := range max(nblocks, 0) {
		c := &res.Content[b]
		for k, f := range blocks[b] {
			if f.end == 0 {
				continue
			}
			dst := compactFields[k].field(c)
			if f.plain {
				*dst = ndjson.Alias(raw[f.start+1 : f.end-1])
			} else {
				d.Add(raw[f.start:f.end], dst)
			}
		}
	}
	d.Fill()
	return res, true
}

// compactKey reads the key of a member that starts at raw[i] and the colon
// after it; next is where its value starts. The key must be plain: one
// with escapes or of another case may still name a field to
// encoding/json, and is walked.
func compactKey(raw []byte, i int) (key string, next int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", 0, false
	}
	end, plain := ndjson.ScanString(raw, i)
	if end < 0 || !plain {
		return "", 0, false
	}
	next = ndjson.SkipSpace(raw, end)
	if next >= len(raw) || raw[next] != ':' {
		return "", 0, false
	}
	return ndjson.Alias(raw[i+1 : end-1]), ndjson.SkipSpace(raw, next+1), true
}

// compactContent reads the content array that starts at raw[i] into
// blocks; it returns how many blocks it held and the index past the
// array, or -1.
func compactContent(raw []byte, i int, blocks *[compactBlocks][len(compactFields)]compactField) (n, next int) {
	i, more, ok := compactOpen(raw, i, '[', ']')
	for ok && more {
		if n == compactBlocks {
			return -1, 0
		}
		fields := &blocks[n]
		n++
		var inBlock bool
		i, inBlock, ok = compactOpen(raw, i, '{', '}')
		for ok && inBlock {
			var key string
			var v int
			if key, v, ok = compactKey(raw, i); !ok {
				break
			}
			k := compactKeyIndex(key)
			if k < 0 || fields[k].end != 0 || v >= len(raw) || raw[v] != '"' {
				return -1, 0 // another member, one given twice, or a value not a string
			}
			end, plain := ndjson.ScanString(raw, v)
			if end < 0 {
				return -1, 0
			}
			fields[k] = compactField{start: int32(v), end: int32(end), plain: plain}
			i, inBlock, ok = compactNext(raw, end, '}')
		}
		if ok {
			i, more, ok = compactNext(raw, i, ']')
		}
	}
	if !ok {
		return -1, 0
	}
	return n, i
}

// compactOpen steps into the object or array (open, close) that starts at
// raw[i], after any space: next is past close when it is empty (more is
// false), or where its first member or element starts.
func compactOpen(raw []byte, i int, open, close byte) (next int, more, ok bool) {
	i = ndjson.SkipSpace(raw, i)
	if i >= len(raw) || raw[i] != open {
		return 0, false, false
	}
	i = ndjson.SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == close {
		return i + 1, false, true
	}
	return i, true, true
}

// compactNext steps past what follows a member or element that ends at
// raw[i]: a comma (more: next is where the next one starts) or close
// (next is past it), after any space; anything else is not ok.
func compactNext(raw []byte, i int, close byte) (next int, more, ok bool) {
	i = ndjson.SkipSpace(raw, i)
	switch {
	case i >= len(raw):
		return 0, false, false
	case raw[i] == close:
		return i + 1, false, true
	case raw[i] == ',':
		return ndjson.SkipSpace(raw, i+1), true, true
	}
	return 0, false, false
}

// compactKeyIndex is the index in compactFields of key, or -1.
func compactKeyIndex(key string) int {
	for k := range compactFields {
		if compactFields[k].key == key {
			return k
		}
	}
	return -1
}
