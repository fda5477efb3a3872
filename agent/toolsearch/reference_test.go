package toolsearch

// The walks the index used before it read schemas and text by hand: the
// tests check that the new ones agree with them.

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ReferenceArguments is arguments as read through jsontext's tokens.
func ReferenceArguments(schema json.RawMessage) (names, descs string) {
	var sc tokenWalk
	return sc.arguments(schema)
}

type tokenWalk struct {
	dec          *jsontext.Decoder
	reader       bytes.Reader
	names, descs []byte
	stack        []frame
}

func (sc *tokenWalk) arguments(schema json.RawMessage) (names, descs string) {
	if len(schema) == 0 {
		return "", ""
	}
	sc.reader.Reset(schema)
	if sc.dec == nil {
		sc.dec = jsontext.NewDecoder(&sc.reader, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	} else {
		sc.dec.Reset(&sc.reader, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	}
	dec := sc.dec
	nb, db := sc.names[:0], sc.descs[:0]
	count := 0
	stack := sc.stack[:0]
walk:
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			break // the end, or a syntax error
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expectName && kind == '"' {
			raw, err := dec.ReadValue()
			if err != nil {
				break walk
			}
			top.name, top.expectName = memberOf(string(raw)), false
			if top.props && count < maxArgs {
				count++
				nb, _ = jsontext.AppendUnquote(nb, raw)
				nb = append(nb, ' ')
			}
			continue
		}
		switch kind {
		case '{', '[':
			if len(stack) >= 2*maxDepth+2 {
				if dec.SkipValue() != nil { // past the depth taken: the value is skipped whole
					break walk
				}
				if top != nil && top.obj {
					top.expectName = true
				}
				continue
			}
			if _, err := dec.ReadToken(); err != nil {
				break walk
			}
			f := frame{obj: kind == '{', expectName: kind == '{'}
			if top != nil && top.obj {
				f.props = top.name == propertiesMember && !top.props
				f.arg = top.props
			}
			stack = append(stack, f)
		case '}', ']':
			if _, err := dec.ReadToken(); err != nil {
				break walk
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].expectName = true
			}
		default:
			raw, err := dec.ReadValue()
			if err != nil {
				break walk
			}
			if top != nil && top.obj {
				if top.arg && top.name == descriptionMember && kind == '"' {
					db, _ = jsontext.AppendUnquote(db, raw)
					db = append(db, ' ')
				}
				top.expectName = true
			}
		}
		if len(stack) == 0 {
			break walk
		}
	}
	sc.names, sc.descs, sc.stack = nb, db, stack[:0]
	return string(nb), string(db)
}

// frame is an object or array arguments is in.
type frame struct {
	obj        bool   // an object, not an array
	props      bool   // a "properties" object: its member names are arguments
	arg        bool   // an argument's schema: its "description" describes it
	name       member // the member being read
	expectName bool
}

// ReferenceEachWord is eachWord a byte or rune at a time.
// eachWord calls fn with the words of s, substrings of it: s is split at
// non-letters and non-digits, and within a run of letters at a change
// from lower to upper case ("pullRequest", and "HTTPServer" as HTTP,
// Server) and between letters and digits. ASCII is read a byte at a
// time through a table; other runes are classed by package unicode.
func ReferenceEachWord(s string, fn func(string)) {
	start, prevAt := -1, 0 // where the word and prev began
	prev, prevPrev := other, other
	for i := 0; i < len(s); {
		c, size := byteClass[s[i]&0x7f], 1
		if s[i] >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			c = classOf(r)
		}
		switch {
		case c == other:
			if start >= 0 {
				fn(s[start:i])
			}
			start, prev, prevPrev = -1, other, other
			i += size
			continue
		case start < 0:
			start = i
		case (c == digit) != (prev == digit):
			fn(s[start:i])
			start = i
		case c == upper && prev == lower:
			fn(s[start:i])
			start = i
		case prev == upper && c == lower && prevAt > start && prevPrev == upper:
			// "HTTPServer": the last capital begins the next word.
			fn(s[start:prevAt])
			start = prevAt
		}
		prevPrev, prev, prevAt = prev, c, i
		i += size
	}
	if start >= 0 {
		fn(s[start:])
	}
}
