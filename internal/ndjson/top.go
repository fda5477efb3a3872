package ndjson

// Top holds where the top-level members of a JSON-RPC message are in its
// line: each span is the raw value (nil when absent).
type Top struct {
	ID, Method, Params, Result, Error []byte
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
	t, _, ok := scanTop(line)
	return t, ok
}

// scanTop is ScanTop, returning the index just past the object's end too.
func scanTop(line []byte) (Top, int, bool) {
	var t Top
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return t, 0, false
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) {
			return t, 0, false
		}
		if line[i] == '}' {
			return t, i + 1, true
		}
		if line[i] == ',' {
			i++
			continue
		}
		if line[i] != '"' {
			return t, 0, false
		}
		end := stringEnd(line, i)
		if end < 0 {
			return t, 0, false
		}
		key := line[i+1 : end]
		i = skipSpace(line, end+1)
		if i >= len(line) || line[i] != ':' {
			return t, 0, false
		}
		i = skipSpace(line, i+1)
		vend := valueEnd(line, i, nil)
		if vend < 0 {
			return t, 0, false
		}
		v := line[i:vend]
		switch string(key) {
		case "id":
			t.ID = v
		case "method":
			t.Method = v
		case "params":
			t.Params = v
		case "result":
			t.Result = v
		case "error":
			t.Error = v
		}
		i = vend
	}
}

// structural marks the bytes that matter when stepping over a nested value.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// valueEnd returns the index just past the JSON value starting at b[i], or
// -1 when it is cut off or not nested properly.
func valueEnd(b []byte, i int, w *Walk) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		e := w.stringEnd(b, i)
		if e < 0 {
			return -1
		}
		return e + 1
	case '{', '[':
		var small [32]byte
		stack := small[:0] // the closers expected, innermost last
		for j := i; j < len(b); {
			// jump to the next character that matters
			for j < len(b) && !structural[b[j]] {
				j++
			}
			if j == len(b) {
				return -1
			}
			switch c := b[j]; c {
			case '"':
				e := w.stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e + 1
				continue
			case '{':
				stack = append(stack, '}')
			case '[':
				stack = append(stack, ']')
			default:
				if len(stack) == 0 || stack[len(stack)-1] != c {
					return -1 // a closer that does not match
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return j + 1
				}
			}
			j++
		}
		return -1
	default: // number, true, false, null
		j := i
	scan:
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n', ':', '"', '{', '[':
				break scan
			}
			j++
		}
		if j == i {
			return -1 // no value here
		}
		return j
	}
}

// Members calls fn with each member of the JSON object obj, in order. It
// reports false when obj is not a well-nested object (or fn returned
// false). Values are not validated.
func Members(obj []byte, fn func(key, value []byte) bool) bool {
	return (*Walk)(nil).Members(obj, fn)
}

// Members is the package's Members, remembering long strings in w.
func (w *Walk) Members(obj []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return skipSpace(obj, i+1) == len(obj)
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		end := stringEnd(obj, i) // a key: short
		if end < 0 {
			return false
		}
		key := obj[i+1 : end]
		i = skipSpace(obj, end+1)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		vend := valueEnd(obj, i, w)
		if vend < 0 || !fn(key, obj[i:vend]) {
			return false
		}
		i = vend
	}
}

// Elements calls fn with each element of the JSON array arr. It reports
// false when arr is not a well-nested array (or fn returned false).
func Elements(arr []byte, fn func(value []byte) bool) bool {
	return (*Walk)(nil).Elements(arr, fn)
}

// Elements is the package's Elements, remembering long strings in w.
func (w *Walk) Elements(arr []byte, fn func(value []byte) bool) bool {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i++
	for {
		i = skipSpace(arr, i)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ']':
			return skipSpace(arr, i+1) == len(arr)
		case ',':
			i++
			continue
		}
		vend := valueEnd(arr, i, w)
		if vend < 0 || !fn(arr[i:vend]) {
			return false
		}
		i = vend
	}
}

// A Walk is Members and Elements remembering where the last long string
// they crossed ends, so that a walk into a value whose end was found
// already does not cross its text again: a tool result's text is crossed
// to find the end of the content array, and then not again for the end of
// its block, nor of itself. The memory walked must not change while a Walk is used on it
// (a walk that defers its strings, as DeferredStrings do, may unescape
// them once it is done). The zero Walk is ready; a nil *Walk remembers
// nothing. A Walk is for one goroutine.
type Walk struct {
	quote *byte // the opening quote of the string remembered
	n     int   // how far after it the closing quote is
}

// longString is the shortest string a Walk remembers: below it, crossing
// again costs less than remembering.
const longString = 256

// stringEnd is the package's stringEnd, remembering a long string in w.
func (w *Walk) stringEnd(b []byte, start int) int {
	if w == nil {
		return stringEnd(b, start)
	}
	if w.quote == &b[start] && start+w.n < len(b) {
		return start + w.n
	}
	e := stringEnd(b, start)
	if e-start >= longString {
		w.quote, w.n = &b[start], e-start
	}
	return e
}
