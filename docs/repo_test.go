package docs

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// executableMagic are the first bytes of the executables go build writes
// on the systems the project is built on: ELF (Linux) and Mach-O (macOS,
// both byte orders, and the fat binary).
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xce, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xce},
	{0xca, 0xfe, 0xba, 0xbe},
}

// A clone holds sources, not what building them makes: `go build` in an
// example's folder writes its executable there, and none may be committed
// (each is tens of megabytes, and built for one system).
func TestNoExecutableIsCommitted(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not in a git work tree: %v", err)
	}
	files := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	require.NotEmpty(t, files)
	for _, f := range files {
		path := filepath.Join("..", string(f))
		fi, err := os.Lstat(path)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		require.NoError(t, err)
		if !fi.Mode().IsRegular() {
			continue // a link, or a submodule's folder
		}
		head, err := readHead(path, 4)
		require.NoError(t, err)
		assert.False(t, isExecutable(head), "%s is an executable: remove it (git rm --cached) and ignore it in .gitignore", f)
	}
}

func isExecutable(head []byte) bool {
	for _, m := range executableMagic {
		if bytes.HasPrefix(head, m) {
			return true
		}
	}
	return false
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return head[:k], err
}
