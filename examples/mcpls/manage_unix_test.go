//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `mcpls add -s project -e KEY=…` writes the value into .mcp.json: the
// file is then the user's alone, whatever the umask; one without a secret
// is the project's, made as the umask says.
func TestAddKeepsAFileWithASecretToTheUser(t *testing.T) {
	tests := []struct {
		name  string
		umask int
		args  []string
		mode  os.FileMode
	}{
		{"a secret, umask 077", 0o077, []string{"-e", "GITHUB_TOKEN=ghp_s3cret"}, 0o600},
		{"a secret, umask 022", 0o022, []string{"-e", "GITHUB_TOKEN=ghp_s3cret"}, 0o600},
		{"a reference to a variable, umask 022", 0o022, []string{"-e", "GITHUB_TOKEN=${GITHUB_TOKEN}"}, 0o644},
		{"no env, umask 022", 0o022, nil, 0o644},
		{"no env, umask 027", 0o027, nil, 0o640},
		{"no env, umask 077", 0o077, nil, 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			old := syscall.Umask(tt.umask)
			defer syscall.Umask(old)
			args := append(append([]string{"add", "-s", "project", "gh"}, tt.args...), "--", "npx", "-y", "srv")
			code, _, stderr := w.mcpls(t, "", args...)
			require.Equal(t, 0, code, stderr)
			info, err := os.Stat(filepath.Join(w.project, ".mcp.json"))
			require.NoError(t, err)
			assert.Equal(t, tt.mode, info.Mode().Perm())
		})
	}
}

func TestAddWritesThroughALinkedClaudeJSON(t *testing.T) {
	w := newWorkspace(t)
	target := filepath.Join(w.home, "dotfiles", "claude.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, []byte(`{"numStartups": 1}`), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(w.home, ".claude.json")))
	code, _, stderr := w.mcpls(t, "", "add", "-s", "user", "u", "--", "npx", "-y", "srv")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = w.mcpls(t, "", "remove", "-s", "user", "u")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = w.mcpls(t, "", "add", "u2", "--", "x")
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"u2"`)
	assert.NotContains(t, string(b), `"u"`)
	info, err := os.Lstat(filepath.Join(w.home, ".claude.json"))
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&os.ModeSymlink)
}
