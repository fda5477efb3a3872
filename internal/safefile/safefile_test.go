//go:build unix

package safefile

import (
	"io"
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

func TestANewFileHasItsModeLessTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	write := func(name string, opts *WriteOptions) os.FileMode {
		require.NoError(t, WriteWith(dir, name, opts, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }))
		info, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		return info.Mode().Perm()
	}
	assert.Equal(t, os.FileMode(0o600), write("shared.json", &WriteOptions{Mode: 0o644}), "0644 less the umask 077, never chmod-ed to 0644")
	require.NoError(t, os.Chmod(filepath.Join(dir, "shared.json"), 0o640))
	assert.Equal(t, os.FileMode(0o640), write("shared.json", &WriteOptions{Mode: 0o644}), "an existing file keeps its mode")
	assert.Equal(t, os.FileMode(0o600), write("shared.json", &WriteOptions{Mode: 0o644, Private: true}), "Private narrows it to the user's")
	syscall.Umask(0o002)
	assert.Equal(t, os.FileMode(0o600), write("secret.json", &WriteOptions{Mode: 0o644, Private: true}), "Private caps a new file whatever the umask")
	assert.Equal(t, os.FileMode(0o600), write("default.json", nil), "nil options: a private file")
}

func TestWriteGoesThroughOnlyTheUsersOwnLink(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(t.TempDir(), "dots")
	require.NoError(t, os.Mkdir(dots, 0o755))
	target := filepath.Join(dots, "claude.json")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(home, ".claude.json")
	require.NoError(t, os.Symlink(target, link))
	data := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}

	assert.ErrorIs(t, WriteWith(home, ".claude.json", &WriteOptions{Mode: 0o600}, data("new")), ErrNotRegular, "without FollowOwnLink, a link is never written through")

	var seen os.FileInfo
	follow := &WriteOptions{Mode: 0o600, FollowOwnLink: true, BeforeRename: func(now os.FileInfo) error { seen = now; return nil }}
	require.NoError(t, WriteWith(home, ".claude.json", follow, data("new")))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&os.ModeSymlink, "the link is kept")
	require.NotNil(t, seen, "BeforeRename sees the file the link leads to")
	assert.True(t, seen.Mode().IsRegular())

	t.Run("a link another user owns", func(t *testing.T) {
		mine := userID
		userID = func() int { return mine() + 1 } // every file here is then another user's
		defer func() { userID = mine }()
		err := WriteWith(home, ".claude.json", follow, data("theirs"))
		assert.ErrorIs(t, err, ErrNotOwned)
		assert.ErrorContains(t, err, "is a link that belongs to uid")
		b, _ := os.ReadFile(target)
		assert.Equal(t, "new", string(b))
	})
	t.Run("a link that leads to a folder", func(t *testing.T) {
		require.NoError(t, os.Symlink(dots, filepath.Join(home, "dir.json")))
		assert.ErrorIs(t, WriteWith(home, "dir.json", follow, data("x")), ErrNotRegular)
	})
	t.Run("a loop of links", func(t *testing.T) {
		require.NoError(t, os.Symlink("loop-b", filepath.Join(home, "loop-a")))
		require.NoError(t, os.Symlink("loop-a", filepath.Join(home, "loop-b")))
		assert.ErrorIs(t, WriteWith(home, "loop-a", follow, data("x")), ErrNotRegular)
	})
	t.Run("a folder on the way that others may write to", func(t *testing.T) {
		require.NoError(t, os.Chmod(dots, 0o777))
		defer os.Chmod(dots, 0o755)
		assert.ErrorIs(t, WriteWith(home, ".claude.json", follow, data("x")), ErrNotOwned)
	})
}
