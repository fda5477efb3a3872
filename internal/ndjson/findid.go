package ndjson

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// findID looks for the top-level "id" of a message of which only the first
// and last bytes were kept (head + ' ' + tail). It scans the head with a
// small tokenizer that tracks nesting, and failing that checks whether the
// id is the last member of the object (or the last but "jsonrpc"), which is
// how most SDKs order a response. It reports the raw id and true on success.
func findID(headTail []byte) (json.RawMessage, bool) {
	head := headTail[:min(len(headTail), headKeep)]
	if id := topLevel(head, "id"); id != nil {
		return id, true
	}
	if m := idAtEnd.FindSubmatch(headTail); m != nil {
		return json.RawMessage(bytes.Clone(m[1])), true
	}
	return nil, false
}

var idAtEnd = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)

// topLevel scans a (possibly truncated) JSON object for a member named name
// at depth one whose value is a number or a string, and returns that value.
func topLevel(b []byte, name string) json.RawMessage {
	depth := 0
	expectKey := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{':
			depth++
			expectKey = true
		case '[':
			depth++
			expectKey = false
		case '}', ']':
			depth--
			if depth <= 0 {
				return nil
			}
		case ',':
			if depth == 1 {
				expectKey = true
			}
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return nil
			}
			isKey := depth == 1 && expectKey
			key := b[i+1 : end]
			i = end
			if !isKey {
				continue
			}
			expectKey = false
			if string(key) != name {
				continue
			}
			j := skipSpace(b, i+1)
			if j >= len(b) || b[j] != ':' {
				return nil
			}
			j = skipSpace(b, j+1)
			if j >= len(b) {
				return nil
			}
			if b[j] == '"' {
				e := stringEnd(b, j)
				if e < 0 {
					return nil
				}
				return json.RawMessage(bytes.Clone(b[j : e+1]))
			}
			e := j
			for e < len(b) && (b[e] == '-' || (b[e] >= '0' && b[e] <= '9')) {
				e++
			}
			if e == j || e == len(b) {
				return nil
			}
			return json.RawMessage(bytes.Clone(b[j:e]))
		}
	}
	return nil
}

// stringEnd returns the index of the quote closing the string that opens at
// b[start], or -1 when the string is cut off.
func stringEnd(b []byte, start int) int {
	i := start + 1
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return -1
		}
		i += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for j := i - 1; j > start && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
