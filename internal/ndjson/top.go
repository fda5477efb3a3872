package ndjson

import "bytes"

// Top holds where the top-level members of a JSON-RPC message are in its
// line: each span is the raw value (nil when absent).
type Top struct {
	ID, Method, Result, Error []byte
}

// IsResponse reports whether the message is a response: an id, a result or
// an error, and no method.
func (t *Top) IsResponse() bool {
	return t.Method == nil && t.ID != nil && (t.Result != nil || t.Error != nil)
}

// ScanTop finds the top-level members of the JSON object in line without
// decoding anything: it only steps over strings and nested values. It
// reports false when line is not a well-nested object; the values found
// are not validated.
func ScanTop(line []byte) (Top, bool) {
	var t Top
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return t, false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) {
			return t, false
		}
		if line[i] == '}' {
			return t, true
		}
		if line[i] == ',' {
			i++
			continue
		}
		if line[i] != '"' {
			return t, false
		}
		end := stringEnd(line, i)
		if end < 0 {
			return t, false
		}
		key := line[i+1 : end]
		i = skipSpace(line, end+1)
		if i >= len(line) || line[i] != ':' {
			return t, false
		}
		i = skipSpace(line, i+1)
		vend := valueEnd(line, i)
		if vend < 0 {
			return t, false
		}
		v := line[i:vend]
		switch string(key) {
		case "id":
			t.ID = v
		case "method":
			t.Method = v
		case "result":
			t.Result = v
		case "error":
			t.Error = v
		}
		i = vend
	}
}

// valueEnd returns the index just past the JSON value starting at b[i], or
// -1 when it is cut off or not nested properly.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		e := stringEnd(b, i)
		if e < 0 {
			return -1
		}
		return e + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			// jump to the next character that matters
			k := bytes.IndexAny(b[j:], "\"{}[]")
			if k < 0 {
				return -1
			}
			j += k
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e + 1
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return -1
	default: // number, true, false, null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return j
	}
}
