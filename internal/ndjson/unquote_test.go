package ndjson

import (
	"encoding/binary"
	"encoding/json"
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
		{"a control character is left to encoding/json", "\"a\tb\"", false},
		{"a bad escape is left to encoding/json", `"a\qb"`, false},
		{"a short unicode escape is left to encoding/json", `"\u12"`, false},
		{"invalid UTF-8 is left to encoding/json", "\"\xff\"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want string
			b := []byte(tt.literal)
			got, ok := UnquoteInPlace(b)
			require.Equal(t, tt.ok, ok)
			if !ok {
				assert.Equal(t, tt.literal, string(b), "nothing is changed when it refuses")
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
