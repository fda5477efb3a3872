package ndjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DeferredStrings are string fields to fill once a walk over a message
// has succeeded (Add each, then Fill), so that nothing is unescaped
// unless the whole message is understood. The strings point into the
// message's own bytes, unescaped in place: the message must be the
// caller's and is consumed. The first few are kept inside the value, which
// stays on the caller's stack (a slice appended to through a pointer would
// move it to the heap).
type DeferredStrings struct {
	n    int
	room [8]deferredString
	more []deferredString
}

type deferredString struct {
	span []byte
	dst  *string
}

// Add defers the JSON string v (quotes included) into *dst, and reports
// whether v is a string or null (which leaves *dst as it is).
func (d *DeferredStrings) Add(v []byte, dst *string) bool {
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

// Fill fills every deferred string. One that UnquoteInPlace refuses is
// decoded by encoding/json, with its rules.
func (d *DeferredStrings) Fill() {
	for _, s := range d.room[:d.n] {
		s.fill()
	}
	for _, s := range d.more {
		s.fill()
	}
}

func (s deferredString) fill() {
	if b, ok := UnquoteInPlace(s.span); ok {
		if len(b) > 0 {
			*s.dst = unsafe.String(unsafe.SliceData(b), len(b))
		}
		return
	}
	json.Unmarshal(s.span, s.dst) // invalid UTF-8 and other rarities: encoding/json's rules
}

// UnquoteInPlace decodes the JSON string literal q (quotes included) into
// q's own memory and returns the decoded bytes. It checks the literal
// first and changes nothing when it reports false: control characters,
// bad escapes or invalid UTF-8, which encoding/json then handles.
func UnquoteInPlace(q []byte) ([]byte, bool) {
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
