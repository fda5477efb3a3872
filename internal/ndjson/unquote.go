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
// q's own memory and returns the decoded bytes, with encoding/json's
// meaning: invalid UTF-8 becomes U+FFFD, a byte at a time (in new memory).
// It reports false for a control character or a bad escape, which
// encoding/json refuses too; q is then left as it is from that byte on
// (what comes before it may have moved), so that encoding/json given q
// refuses it as well.
//
// It checks the literal for control characters and non-ASCII bytes
// first, 32 bytes at a time; then finds each escape with IndexByte and
// moves the text between two down at once when an escape has shortened
// the text before it.
func UnquoteInPlace(q []byte) ([]byte, bool) {
	s := q[1 : len(q)-1]
	// The whole literal is checked at once, escapes included (they are
	// ASCII and no control): a long look costs less than one per stretch
	// between escapes, which are short in text full of newlines.
	ascii, ok := checkText(s)
	if !ok {
		return nil, false
	}
	w, i := 0, 0 // where the next byte goes, and the next byte read
	for i < len(s) {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			j = len(s) - i
		}
		if w != i {
			copy(s[w:], s[i:i+j])
		}
		w, i = w+j, i+j
		if i == len(s) {
			break
		}
		if i+1 >= len(s) {
			return nil, false
		}
		switch c := s[i+1]; c {
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
			if i+6 > len(s) {
				return nil, false
			}
			r := hex4(s[i+2 : i+6])
			if r < 0 {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = hex4(s[i+2 : i+6])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			w += utf8.EncodeRune(s[w:], r) // at most the six bytes of the escape read
			continue
		default:
			return nil, false
		}
		w++
		i += 2
	}
	out := s[:w]
	if !ascii && !utf8.Valid(out) {
		out = validUTF8(out)
	}
	return out, true
}

// checkText reports whether b is all ASCII, and whether it has no
// control character. It looks at four words at a time and never at a
// byte alone but for the last few: a word has a byte below 0x20 exactly
// when (w - 0x20…20) &^ w has a high bit set (a borrow may mark the wrong
// byte, never a word without one), and a byte from 0x80 up when w has.
func checkText(b []byte) (ascii, ok bool) {
	var low, high uint64 // the words' marks, gathered
	for ; len(b) >= 32; b = b[32:] {
		w0 := binary.LittleEndian.Uint64(b[0:8])
		w1 := binary.LittleEndian.Uint64(b[8:16])
		w2 := binary.LittleEndian.Uint64(b[16:24])
		w3 := binary.LittleEndian.Uint64(b[24:32])
		low |= (w0-0x20*ones)&^w0 | (w1-0x20*ones)&^w1 | (w2-0x20*ones)&^w2 | (w3-0x20*ones)&^w3
		high |= w0 | w1 | w2 | w3
	}
	for ; len(b) >= 8; b = b[8:] {
		w := binary.LittleEndian.Uint64(b[0:8])
		low |= (w - 0x20*ones) &^ w
		high |= w
	}
	if low&highs != 0 {
		return false, false
	}
	plain, ok := checkBytes(b)
	return plain && high&highs == 0, ok
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// checkBytes is checkText a byte at a time.
func checkBytes(b []byte) (ascii, ok bool) {
	ascii = true
	for _, c := range b {
		if c < 0x20 {
			return false, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii, true
}

// validUTF8 is b with each byte of invalid UTF-8 replaced by U+FFFD, as
// encoding/json decodes a string, in new memory.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/2)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
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

// ScanString returns the index just past the JSON string literal that
// opens at b[i] (a quote), or -1 when the literal does not end in b. plain
// reports that the bytes between its quotes are its value: printable ASCII
// with no escape, to be used as they are. A short literal is looked at a
// byte at a time; one longer than shortString bytes is crossed by
// stringEnd and reported not plain, whatever it holds, so that its check
// and unescaping (UnquoteInPlace) cross it once more, not twice.
func ScanString(b []byte, i int) (end int, plain bool) {
	j := i + 1
	for n := min(len(b), j+shortString); j < n; j++ {
		switch c := b[j]; {
		case plainByte[c]:
		case c == '"':
			return j + 1, true
		default: // an escape, a control character or a byte from 0x80 up
			if e := stringEnd(b, i); e >= 0 {
				return e + 1, false
			}
			return -1, false
		}
	}
	if e := stringEnd(b, i); e >= 0 {
		return e + 1, false
	}
	return -1, false
}

// shortString is how many bytes of a string ScanString looks at one by
// one before it leaves the rest to stringEnd.
const shortString = 64

// plainByte marks the bytes that stand for themselves in a JSON string:
// printable ASCII but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// SkipSpace returns the index of the first byte of b from i on that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int { return skipSpace(b, i) }

// Alias returns the string whose bytes are b's, without a copy: b must
// never change afterwards (a message consumed by its decoding).
func Alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
