// Package testdir makes the files and directories of tests: config files
// in a home directory and a project of their own.
package testdir

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes content to path, making its directories, or fails t.
func Write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Scratch returns two new directories, symlinks resolved, and makes home
// the test's $HOME (and $CLAUDE_CONFIG_DIR empty, which counts as unset),
// so that nothing the test loads or saves touches the user's own files.
func Scratch(t *testing.T) (home, project string) {
	t.Helper()
	home, _ = filepath.EvalSymlinks(t.TempDir())
	project, _ = filepath.EvalSymlinks(t.TempDir())
	Home(t, home)
	return home, project
}

// Home makes home the test's $HOME, and $CLAUDE_CONFIG_DIR empty, so that
// the user's own Claude Code files are those of home.
func Home(t testing.TB, home string) {
	t.Helper()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
}
