package ndjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlain8(t *testing.T) {
	slow := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x80 || c == '\\' {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		t.Helper()
		assert.Equal(t, slow(b), plain8(binary.LittleEndian.Uint64(b)), "%q", b)
	}
	special := []byte{0, 0x1f, 0x20, 0x21, '"', '[', '\\', ']', 0x7f, 0x80, 0xc3, 0xff}
	for _, c := range special { // each special byte in each position, among plain and among specials
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = c
			check(b)
			for _, d := range special {
				b2 := []byte{d, d, d, d, d, d, d, d}
				b2[pos] = c
				check(b2)
			}
		}
	}
	state := uint64(1)
	for range 200_000 { // and random words
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		b := binary.LittleEndian.AppendUint64(nil, state)
		check(b)
		for i := range b {
			b[i] = 0x20 + b[i]%0x60 // mostly plain: the interesting side
		}
		check(b)
	}
}

func TestUnquoteInPlace(t *testing.T) {
	tests := []struct {
		name, literal string
		ok            bool
	}{
		{"plain text is the literal's own bytes", `"hello, world"`, true},
		{"every short escape", `"a\"b\\c\/d\be\ff\ng\rh\ti"`, true},
		{"a newline every few bytes, as file contents have", `"line one\nline two\nline three\n"`, true},
		{"a BMP escape", `"caf\u00e9"`, true},
		{"a surrogate pair", `"\ud83d\ude00 smile"`, true},
		{"a lone surrogate becomes U+FFFD", `"\ud83d alone"`, true},
		{"multi-byte UTF-8", `"données, 中文"`, true},
		{"invalid UTF-8 becomes U+FFFD a byte at a time", "\"a\xff\xfeb\xe2\x82\"", true},
		{"invalid UTF-8 after an escape", "\"a\\n\xffb\"", true},
		{"a control character is refused", "\"a\tb\"", false},
		{"a control character after an escape is refused", "\"a\\nbcdefghijklmnop\tb\"", false},
		{"a bad escape is refused", `"a\qb"`, false},
		{"a short unicode escape is refused", `"\u12"`, false},
		{"a backslash at the end is refused", `"ab\"`, false},
		{"a bad escape after a surrogate is refused", `"\ud83d\uzzzz"`, false},
		{"a long text with an escape in each word", `"` + strings.Repeat(`abcdefg\n`, 40) + `"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want string
			b := []byte(tt.literal)
			got, ok := UnquoteInPlace(b)
			require.Equal(t, tt.ok, ok)
			if !ok {
				assert.Error(t, json.Unmarshal(b, &want), "encoding/json refuses what is left as well")
				assert.Error(t, json.Unmarshal([]byte(tt.literal), &want), "and the literal itself")
				return
			}
			require.NoError(t, json.Unmarshal([]byte(tt.literal), &want))
			assert.Equal(t, want, string(got), "the meaning encoding/json gives it")
		})
	}
}

func TestDeferredStringsFillOnlyWhenAsked(t *testing.T) {
	// Twelve strings: more than the room kept inside the value.
	msg := []byte(`["caf\u00e9","tab\there",null,"a","b","c","d","e","f","g","h","last\n"]`)
	var items [][]byte
	require.True(t, Elements(msg, func(v []byte) bool { items = append(items, v); return true }))
	var d DeferredStrings
	dst := make([]string, len(items))
	for i, v := range items {
		require.True(t, d.Add(v, &dst[i]))
	}
	assert.Equal(t, make([]string, len(items)), dst, "nothing is filled before Fill")
	assert.False(t, d.Add([]byte(`42`), new(string)), "a number is not a string")
	d.Fill()
	assert.Equal(t, []string{"café", "tab\there", "", "a", "b", "c", "d", "e", "f", "g", "h", "last\n"}, dst, "escapes decoded in place, null leaving its field")
}

// Any literal means to UnquoteInPlace what it means to encoding/json: the
// same text, or a refusal from both.
func FuzzUnquoteInPlace(f *testing.F) {
	for _, s := range []string{`"hello"`, `"a\nb"`, `"\ud83d\ude00"`, "\"\xff\"", `"\ud83d x"`, `"` + strings.Repeat(`abcdefg\n`, 4) + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || bytes.IndexByte(lit[1:len(lit)-1], '"') >= 0 && !json.Valid(lit) {
			t.Skip() // a scanner hands over only what ends at the first unescaped quote
		}
		var want string
		wantErr := json.Unmarshal(lit, &want)
		got, ok := UnquoteInPlace(bytes.Clone(lit))
		if wantErr != nil {
			assert.False(t, ok, "encoding/json refused it: %v", wantErr)
			return
		}
		require.True(t, ok)
		assert.Equal(t, want, string(got))
	})
}

// BenchmarkUnquoteInPlace decodes 1 MiB of text as a server writes it:
// a newline (an escape) every 64 bytes, none, and text that is not all
// ASCII.
func BenchmarkUnquoteInPlace(b *testing.B) {
	for _, tc := range []struct {
		name string
		text string
	}{
		{"escapes", strings.Repeat(strings.Repeat("x", 63)+"\n", 1<<14)},
		{"plain", strings.Repeat("x", 1<<20)},
		{"utf8", strings.Repeat(strings.Repeat("x", 56)+"café\n", 1<<14)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lit, err := json.Marshal(tc.text)
			require.NoError(b, err)
			buf := make([]byte, len(lit))
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				copy(buf, lit)
				out, ok := UnquoteInPlace(buf)
				if !ok || len(out) != len(tc.text) {
					b.Fatal("not decoded")
				}
			}
		})
	}
}

// The word-at-a-time check of text agrees with the byte-at-a-time one,
// whatever byte stands wherever in a text of any length up to 80 bytes.
func TestCheckTextAgreesWithABytewiseLook(t *testing.T) {
	for n := 0; n <= 80; n++ {
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{0x00, 0x01, 0x1f, 0x20, 0x21, 0x5c, 0x7f, 0x80, 0xc3, 0xff} {
				b := bytes.Repeat([]byte{'x'}, n)
				b[pos] = c
				if pos > 0 {
					b[pos-1] = 0x20 // the lowest byte that is not a control: a borrow from c must not mark it
				}
				wantASCII, wantOK := checkBytes(b)
				ascii, ok := checkText(b)
				require.Equal(t, wantOK, ok, "%d bytes, %#x at %d: control", n, c, pos)
				if ok {
					require.Equal(t, wantASCII, ascii, "%d bytes, %#x at %d: ASCII", n, c, pos)
				}
			}
		}
	}
}

// Escapes at every spacing, of every length, decode as encoding/json
// decodes them, however the text between falls on words as it moves down.
func TestUnquoteInPlaceMovesTextBetweenEscapesOfAnySpacing(t *testing.T) {
	escapes := []string{`\n`, `\"`, `\\`, `\u00e9`, `\ud83d\ude00`, `\/`}
	for gap := 0; gap <= 200; gap++ {
		for _, esc := range escapes {
			var lit strings.Builder
			lit.WriteByte('"')
			for i := 0; lit.Len() < 600; i++ {
				lit.WriteString(strings.Repeat(string(rune('a'+i%26)), gap))
				lit.WriteString(esc)
				lit.WriteString(escapes[i%len(escapes)]) // a second, different escape right after
			}
			lit.WriteString("tail")
			lit.WriteByte('"')
			var want string
			require.NoError(t, json.Unmarshal([]byte(lit.String()), &want))
			got, ok := UnquoteInPlace([]byte(lit.String()))
			require.True(t, ok, "gap %d, %s", gap, esc)
			require.Equal(t, want, string(got), "gap %d, %s", gap, esc)
		}
	}
}

// ScanString finds the end stringEnd finds, and calls a literal plain
// exactly when it is short and every byte between its quotes stands for
// itself.
func TestScanStringAgreesWithStringEnd(t *testing.T) {
	bytesOf := []string{"a", " ", "~", "\x7f", `\"`, `\\`, `\n`, `\u00e9`, "é", "\x01", "\xff"}
	for n := 0; n <= shortString+2; n += 1 + n/8 {
		for _, b := range bytesOf {
			for _, at := range []int{0, n / 2, n} {
				body := strings.Repeat("x", at) + b + strings.Repeat("y", n-at)
				lit := []byte(`"` + body + `"` + `,"next":1`)
				end, plain := ScanString(lit, 0)
				want := stringEnd(lit, 0) + 1
				assert.Equal(t, want, end, "%q", lit)
				wantPlain := len(body) <= shortString
				for _, c := range []byte(body) {
					wantPlain = wantPlain && c != '\\' && (c >= ' ' && c <= '~' || c == 0x7f) // DEL needs no escape in JSON
				}
				assert.Equal(t, wantPlain, plain, "%q", lit)
			}
		}
	}
	t.Run("a literal that does not end", func(t *testing.T) {
		for _, s := range []string{`"abc`, `"ab\"`, `"` + strings.Repeat("z", 100)} {
			end, _ := ScanString([]byte(s), 0)
			assert.Equal(t, -1, end, s)
		}
	})
}
