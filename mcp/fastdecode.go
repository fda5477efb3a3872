package mcp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

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
	var d deferredStrings // on the stack: most results have a few strings
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
	d.run()
	return res, nil
}

// decodeContent decodes one content block; strings are deferred, so that
// nothing is unescaped unless the whole result walks cleanly.
func decodeContent(obj []byte, c *Content, d *deferredStrings) bool {
	return ndjson.Members(obj, func(key, v []byte) bool {
		switch string(key) {
		case "type":
			return d.add(v, &c.Type)
		case "text":
			return d.add(v, &c.Text)
		case "data":
			return d.add(v, &c.Data)
		case "mimeType":
			return d.add(v, &c.MimeType)
		case "uri":
			return d.add(v, &c.URI)
		case "name":
			return d.add(v, &c.Name)
		case "title":
			return d.add(v, &c.Title)
		case "description":
			return d.add(v, &c.Description)
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

var (
	resultKeys  = []string{"content", "structuredContent", "_meta", "isError"}
	contentKeys = []string{"type", "text", "data", "mimeType", "uri", "name", "title", "description",
		"annotations", "_meta", "size", "icons", "resource", "id", "input", "toolUseId", "content", "structuredContent", "isError"}
)

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

// deferredStrings are string fields to fill once the walk has succeeded.
// The first few are kept in room, inside the value, which stays on the
// caller's stack (a slice appended to through a pointer would move it to
// the heap).
type deferredStrings struct {
	n    int
	room [8]deferredString
	more []deferredString
}

type deferredString struct {
	span []byte
	dst  *string
}

func (d *deferredStrings) add(v []byte, dst *string) bool {
	if len(v) < 2 || v[0] != '"' {
		return string(v) == "null"
	}
	if d.n < len(d.room) {
		d.room[d.n] = deferredString{v, dst}
		d.n++
	} else {
		d.more = append(d.more, deferredString{v, dst})
	}
	return true
}

func (d *deferredStrings) run() {
	for _, s := range d.room[:d.n] {
		s.fill()
	}
	for _, s := range d.more {
		s.fill()
	}
}

func (s deferredString) fill() {
	if b, ok := unquoteInPlace(s.span); ok {
		if len(b) > 0 {
			*s.dst = unsafe.String(unsafe.SliceData(b), len(b))
		}
		return
	}
	json.Unmarshal(s.span, s.dst) // invalid UTF-8 and other rarities: encoding/json's rules
}

// unquoteInPlace decodes the JSON string literal q (quotes included) into
// q's own memory and returns the decoded bytes. It checks the literal
// first and changes nothing when it reports false: control characters,
// bad escapes or invalid UTF-8, which encoding/json then handles.
func unquoteInPlace(q []byte) ([]byte, bool) {
	s := q[1 : len(q)-1]
	if !checkLiteral(s) {
		return nil, false
	}
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return s, true
	}
	w := i
	for i < len(s) {
		if s[i] != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				j = len(s) - i
			}
			w += copy(s[w:], s[i:i+j])
			i += j
			continue
		}
		i++
		switch c := s[i]; c {
		case '"', '\\', '/':
			s[w] = c
		case 'b':
			s[w] = '\b'
		case 'f':
			s[w] = '\f'
		case 'n':
			s[w] = '\n'
		case 'r':
			s[w] = '\r'
		case 't':
			s[w] = '\t'
		case 'u':
			r := hex4(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' { // checkLiteral saw its four digits
					r2 = hex4(s[i+3 : i+7])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			w += utf8.EncodeRune(s[w:], r)
			i++
			continue
		}
		w++
		i++
	}
	return s[:w], true
}

// checkLiteral reports whether s (a string literal without its quotes) has
// only valid escapes, no control characters and valid UTF-8.
func checkLiteral(s []byte) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8 // eight bytes that need no look
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		case c == '\\':
			i++
			if i >= len(s) {
				return false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+5 > len(s) || hex4(s[i+1:i+5]) < 0 {
					return false
				}
				i += 4
			default:
				return false
			}
		}
	}
	return ascii || utf8.Valid(s)
}

// plain8 reports whether the eight bytes in w are printable ASCII other
// than a backslash: no control character (< 0x20), no byte >= 0x80, no '\\'.
func plain8(w uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	control := (w - 0x20*ones) &^ w & highs
	backslash := ((w ^ '\\'*ones) - ones) &^ (w ^ '\\'*ones) & highs
	return (control | backslash | w&highs) == 0
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
