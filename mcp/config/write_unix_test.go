//go:build unix

package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withUmask runs the rest of the test under umask mask (the process's:
// no test of this package runs in parallel).
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Mode().Perm()
}

func TestNewFilesHonourTheUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o027, 0o077} {
		t.Run(os.FileMode(mask).String(), func(t *testing.T) {
			homeDir, project := home(t)
			withUmask(t, mask)
			ctx := context.Background()
			_, err := config.Add(ctx, project, config.ScopeProject, "p", json.RawMessage(`{"command":"x"}`))
			require.NoError(t, err)
			assert.Equal(t, 0o644&^os.FileMode(mask), mode(t, filepath.Join(project, ".mcp.json")), ".mcp.json is made 0644 less the umask, never chmod-ed wider")
			_, err = config.Add(ctx, project, config.ScopeUser, "u", json.RawMessage(`{"command":"x"}`))
			require.NoError(t, err)
			assert.Equal(t, 0o600&^os.FileMode(mask), mode(t, filepath.Join(homeDir, ".claude.json")))
			require.NoError(t, config.SaveApproval(project, "p", true))
			assert.Equal(t, 0o600&^os.FileMode(mask), mode(t, filepath.Join(project, ".claude", "settings.local.json")))
		})
	}
}

// `mcpls add -s project -e KEY=…` must not leave the value readable by
// every user, whatever the umask.
func TestAFileThatHoldsASecretIsNeverWiderThanTheUsers(t *testing.T) {
	_, project := home(t)
	withUmask(t, 0o022)
	ctx := context.Background()
	path := filepath.Join(project, ".mcp.json")

	_, err := config.Add(ctx, project, config.ScopeProject, "refs", json.RawMessage(`{"command":"x","env":{"K":"${K}"},"args":["--verbose"]}`))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), mode(t, path), "references to variables are no secret: the file stays the project's, to share")

	_, err = config.Add(ctx, project, config.ScopeProject, "secret", json.RawMessage(`{"command":"x","env":{"KEY":"s3cret"}}`))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), mode(t, path), "an env value written out makes it the user's own")

	_, err = config.Remove(ctx, project, config.ScopeProject, "secret")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), mode(t, path), "a file is never made wider than it is")

	t.Run("a file that held one before it was written", func(t *testing.T) {
		_, project := home(t)
		path := filepath.Join(project, ".mcp.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"old": {"type": "http", "url": "https://h.example/mcp", "headers": {"Authorization": "Bearer abc"}}}}`), 0o644))
		require.NoError(t, os.Chmod(path, 0o644))
		_, err := config.Add(ctx, project, config.ScopeProject, "new", json.RawMessage(`{"command":"x"}`))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), mode(t, path))
	})
	t.Run("a new file with a secret, under a umask that lets others read", func(t *testing.T) {
		_, project := home(t)
		withUmask(t, 0o002)
		_, err := config.Add(ctx, project, config.ScopeProject, "s", json.RawMessage(`{"type":"http","url":"https://h.example/mcp?api_key=abc"}`))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(project, ".mcp.json")))
	})
}

// A dotfile manager keeps ~/.claude.json as a link into its own folder:
// the writes go to the file it leads to, which is replaced whole; the
// link stays.
func TestALinkedClaudeJSONIsWrittenThrough(t *testing.T) {
	tests := []struct {
		name string
		lay  func(t *testing.T, homeDir string) (target string)
	}{
		{"an absolute link", func(t *testing.T, homeDir string) string {
			target := filepath.Join(homeDir, "dotfiles", "claude.json")
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
			require.NoError(t, os.WriteFile(target, []byte(`{"numStartups": 3}`), 0o644))
			require.NoError(t, os.Symlink(target, filepath.Join(homeDir, ".claude.json")))
			return target
		}},
		{"a relative link, as GNU Stow makes", func(t *testing.T, homeDir string) string {
			target := filepath.Join(homeDir, "dotfiles", "claude", ".claude.json")
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
			require.NoError(t, os.WriteFile(target, []byte(`{"numStartups": 3}`), 0o600))
			require.NoError(t, os.Symlink(filepath.Join("dotfiles", "claude", ".claude.json"), filepath.Join(homeDir, ".claude.json")))
			return target
		}},
		{"a link to a link", func(t *testing.T, homeDir string) string {
			target := filepath.Join(homeDir, "store", "claude.json")
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o700))
			require.NoError(t, os.WriteFile(target, []byte(`{"numStartups": 3}`), 0o600))
			require.NoError(t, os.Mkdir(filepath.Join(homeDir, "links"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join("..", "store", "claude.json"), filepath.Join(homeDir, "links", "claude.json")))
			require.NoError(t, os.Symlink(filepath.Join("links", "claude.json"), filepath.Join(homeDir, ".claude.json")))
			return target
		}},
		{"a link that leads to no file yet", func(t *testing.T, homeDir string) string {
			target := filepath.Join(homeDir, "dotfiles", "claude.json")
			require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
			require.NoError(t, os.Symlink(target, filepath.Join(homeDir, ".claude.json")))
			return target
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			homeDir, project := home(t)
			withUmask(t, 0o022)
			target := tt.lay(t, homeDir)
			link := filepath.Join(homeDir, ".claude.json")
			linkTo, err := os.Readlink(link)
			require.NoError(t, err)
			before, _ := os.Stat(target)
			ctx := context.Background()

			_, err = config.Add(ctx, project, config.ScopeUser, "u", json.RawMessage(`{"command":"x"}`))
			require.NoError(t, err)
			_, err = config.Add(ctx, project, config.ScopeLocal, "l", json.RawMessage(`{"command":"y"}`))
			require.NoError(t, err)
			require.NoError(t, config.SaveTrust(project))

			after, err := os.Lstat(target)
			require.NoError(t, err)
			assert.True(t, after.Mode().IsRegular())
			if before != nil {
				assert.False(t, os.SameFile(before, after), "the file is replaced whole (renamed over), not written in place")
			}
			assert.Equal(t, os.FileMode(0o600), after.Mode().Perm(), "~/.claude.json is the user's own")
			now, err := os.Readlink(link)
			require.NoError(t, err)
			assert.Equal(t, linkTo, now, "the link is kept as it was")
			cfg, err := config.Load(project)
			require.NoError(t, err)
			assert.Contains(t, cfg.Servers, "u")
			assert.Contains(t, cfg.Servers, "l")
			assert.True(t, cfg.Workspace.Trusted)
			_, err = config.Remove(ctx, project, config.ScopeUser, "u")
			require.NoError(t, err)
			entries, err := os.ReadDir(filepath.Dir(target))
			require.NoError(t, err)
			for _, e := range entries {
				assert.False(t, strings.HasPrefix(e.Name(), "."+filepath.Base(target)+"."), "no temporary file is left: %s", e.Name())
			}
		})
	}
	t.Run("the lock is Claude Code's: at the link's own path", func(t *testing.T) {
		homeDir, project := home(t)
		target := filepath.Join(homeDir, "dotfiles", "claude.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
		require.NoError(t, os.WriteFile(target, []byte(`{}`), 0o600))
		require.NoError(t, os.Symlink(target, filepath.Join(homeDir, ".claude.json")))
		require.NoError(t, os.Mkdir(target+".lock", 0o700))
		_, err := config.Add(context.Background(), project, config.ScopeUser, "u", json.RawMessage(`{"command":"x"}`))
		require.NoError(t, err, "a lock beside the file the link leads to is not Claude Code's")
		require.NoError(t, os.Mkdir(filepath.Join(homeDir, ".claude.json.lock"), 0o700))
		config.SetLockWait(t, 20*time.Millisecond)
		_, err = config.Add(context.Background(), project, config.ScopeUser, "v", json.RawMessage(`{"command":"x"}`))
		assert.ErrorIs(t, err, config.ErrLocked)
	})
}

func TestALinkThatIsNotTheUsersOwnIsNeverWrittenThrough(t *testing.T) {
	type layout struct {
		name string
		root bool // needs root, to give a file to another user
		lay  func(t *testing.T, homeDir string) (target string)
	}
	const other = 12345
	linked := func(t *testing.T, homeDir, dir string, dirMode os.FileMode) string {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.Chmod(dir, dirMode))
		target := filepath.Join(dir, "claude.json")
		require.NoError(t, os.WriteFile(target, []byte(`{}`), 0o600))
		require.NoError(t, os.Symlink(target, filepath.Join(homeDir, ".claude.json")))
		return target
	}
	tests := []layout{
		{"into a folder every user may write to", false, func(t *testing.T, homeDir string) string {
			return linked(t, homeDir, filepath.Join(t.TempDir(), "shared"), 0o777)
		}},
		{"a link that belongs to another user", true, func(t *testing.T, homeDir string) string {
			target := linked(t, homeDir, filepath.Join(t.TempDir(), "dots"), 0o755)
			require.NoError(t, os.Lchown(filepath.Join(homeDir, ".claude.json"), other, other))
			return target
		}},
		{"into a folder that belongs to another user", true, func(t *testing.T, homeDir string) string {
			dir := filepath.Join(t.TempDir(), "theirs")
			target := linked(t, homeDir, dir, 0o755)
			require.NoError(t, os.Chown(dir, other, other))
			return target
		}},
		{"to a file that belongs to another user", true, func(t *testing.T, homeDir string) string {
			target := linked(t, homeDir, filepath.Join(t.TempDir(), "dots"), 0o755)
			require.NoError(t, os.Chown(target, other, other))
			return target
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			homeDir, project := home(t)
			target := tt.lay(t, homeDir)
			_, err := config.Add(context.Background(), project, config.ScopeUser, "u", json.RawMessage(`{"command":"x"}`))
			assert.ErrorIs(t, err, config.ErrNotOwned)
			assert.ErrorIs(t, config.SaveTrust(project), config.ErrNotOwned)
			b, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, `{}`, string(b), "nothing is written")
			info, err := os.Lstat(filepath.Join(homeDir, ".claude.json"))
			require.NoError(t, err)
			assert.NotZero(t, info.Mode()&os.ModeSymlink, "the link is left as it was")
		})
	}
}
