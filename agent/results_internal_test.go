package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read starts and ends on a character's start, whatever offset and
// length it is given, so that the text is whole; reading on from each
// end gets every byte once.
func TestAReadNeverCutsACharacter(t *testing.T) {
	text := strings.Repeat("a日🙂é\n", 1000)
	s := &resultStore{parent: t.TempDir(), max: DefaultMaxKeptBytes}
	defer s.close()
	path, kept, err := s.keep("t", text)
	require.NoError(t, err)
	assert.Equal(t, 1000, kept.lines)
	for _, length := range []int64{1, 2, 3, 5, 7, 100} {
		var got strings.Builder
		for at := int64(0); at < kept.size; {
			chunk, start, end, _, err := s.read(path, at, length)
			require.NoError(t, err)
			require.Equal(t, at, start, "read on from the last end")
			require.True(t, utf8.ValidString(chunk))
			require.Greater(t, end, start)
			got.WriteString(chunk)
			at = end
		}
		assert.Equal(t, text, got.String(), "length %d", length)
	}
	for off := int64(0); off < 12; off++ {
		chunk, start, _, _, err := s.read(path, off, 4)
		require.NoError(t, err)
		assert.True(t, utf8.RuneStart(text[start]), "offset %d starts at %d", off, start)
		assert.LessOrEqual(t, start, off)
		assert.True(t, strings.HasPrefix(text[start:], chunk))
	}
	for _, tc := range []struct {
		offset int64
		line   int
	}{{0, 1}, {10, 1}, {11, 2}, {10999, 1000}} {
		line, err := s.lineAt(path, kept, tc.offset)
		require.NoError(t, err)
		assert.Equal(t, tc.line, line, "offset %d", tc.offset)
	}
}

func TestTheResultsKeptAreBounded(t *testing.T) {
	s := &resultStore{parent: t.TempDir(), max: 1000}
	defer s.close()
	_, _, err := s.keep("t", strings.Repeat("x", 600))
	require.NoError(t, err)
	_, _, err = s.keep("t", strings.Repeat("x", 600))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already take 600 of the 1000 bytes they may")
}

func TestLineNumbersPastTheFirstBlock(t *testing.T) {
	s := &resultStore{parent: t.TempDir(), max: DefaultMaxKeptBytes}
	defer s.close()
	path, kept, err := s.keep("t", strings.Repeat("abc\n", 50_000)) // 200,000 bytes over four blocks
	require.NoError(t, err)
	for _, off := range []int64{0, 3, 4, lineBlock - 1, lineBlock, 100_000, 199_999} {
		line, err := s.lineAt(path, kept, off)
		require.NoError(t, err)
		assert.Equal(t, int(off/4)+1, line, "offset %d", off)
	}
}
