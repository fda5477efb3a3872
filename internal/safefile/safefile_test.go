//go:build unix

package safefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadTakesOnlyARegularFileWithinItsBound(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "a.json")
	require.NoError(t, os.WriteFile(regular, []byte(`{"a":1}`), 0o600))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(regular, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	b, err := Read(regular, 64)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(b))
	b, err = Read(link, 64)
	require.NoError(t, err, "a symlink to a regular file is read")
	assert.Equal(t, `{"a":1}`, string(b))
	b, err = Read(filepath.Join(dir, "missing"), 64)
	assert.NoError(t, err)
	assert.Nil(t, b, "a missing file is no file")
	_, err = Read(fifo, 64) // would block without O_NONBLOCK: no writer
	assert.ErrorIs(t, err, ErrNotRegular)
	_, err = Read(dir, 64)
	assert.ErrorIs(t, err, ErrNotRegular)
	_, err = Read(regular, 3)
	assert.ErrorIs(t, err, ErrTooLarge)

	obj, err := ReadJSONObject(regular, 64)
	require.NoError(t, err)
	assert.Equal(t, "1", obj["a"].(interface{ String() string }).String(), "numbers as written")
	require.NoError(t, os.WriteFile(regular, []byte(`[1]`), 0o600))
	_, err = ReadJSONObject(regular, 64)
	assert.ErrorContains(t, err, "not a JSON object")
}

func TestWriteNeverWritesThroughALink(t *testing.T) {
	home := t.TempDir()
	elsewhere := t.TempDir()
	target := filepath.Join(elsewhere, "settings.json")
	require.NoError(t, os.WriteFile(target, []byte("theirs"), 0o644))

	linkedFile := filepath.Join(home, "linked")
	require.NoError(t, os.Mkdir(linkedFile, 0o700))
	require.NoError(t, os.Symlink(target, filepath.Join(linkedFile, "settings.json")))
	assert.ErrorIs(t, Write(linkedFile, "settings.json", []byte("mine")), ErrNotRegular)

	linkedDir := filepath.Join(home, "linkeddir")
	require.NoError(t, os.Symlink(elsewhere, linkedDir))
	assert.ErrorIs(t, Write(linkedDir, "settings.json", []byte("mine")), ErrNotRegular)
	b, _ := os.ReadFile(target)
	assert.Equal(t, "theirs", string(b), "nothing was written through either link")

	fresh := filepath.Join(home, "fresh")
	require.NoError(t, Write(fresh, "s.json", []byte("one")))
	info, err := os.Stat(filepath.Join(fresh, "s.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "made 0600, in a folder made 0700")
	require.NoError(t, os.Chmod(filepath.Join(fresh, "s.json"), 0o400))
	require.NoError(t, Write(fresh, "s.json", []byte("two")))
	info, _ = os.Stat(filepath.Join(fresh, "s.json"))
	assert.Equal(t, os.FileMode(0o400), info.Mode().Perm(), "never wider than it was")
	b, _ = os.ReadFile(filepath.Join(fresh, "s.json"))
	assert.Equal(t, "two", string(b))
	entries, _ := os.ReadDir(fresh)
	assert.Len(t, entries, 1, "no temporary file is left")
}
