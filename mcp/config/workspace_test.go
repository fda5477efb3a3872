package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkspaceTrust(t *testing.T) {
	tests := []struct {
		name    string
		key     string // the ~/.claude.json project key that says trusted: "root", "sub", "parent"
		from    string // where LoadConfig runs: "root" or "sub"
		git     bool
		trusted bool
	}{
		{"the project root's entry trusts it", "root", "root", false, true},
		{"the git root's entry trusts a sub-directory", "root", "sub", true, true},
		{"the directory's own entry trusts it", "sub", "sub", true, true},
		{"a parent of the project root does not", "parent", "root", true, false},
		{"outside git, a parent directory's entry does not", "root", "sub", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, base := testdir.Scratch(t)
			root := filepath.Join(base, "repo")
			sub := filepath.Join(root, "sub")
			require.NoError(t, os.MkdirAll(sub, 0o755))
			if tt.git {
				require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
			}
			key := map[string]string{"root": root, "sub": sub, "parent": base}[tt.key]
			testdir.Write(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+key+`": {"hasTrustDialogAccepted": true}}}`)
			dir := map[string]string{"root": root, "sub": sub}[tt.from]
			cfg, err := config.Load(dir)
			require.NoError(t, err)
			require.NotNil(t, cfg.Workspace)
			assert.Equal(t, tt.trusted, cfg.Workspace.Trusted)
			assert.Equal(t, dir, cfg.Workspace.Dir)
			if tt.git {
				assert.Equal(t, root, cfg.Workspace.Root)
			} else {
				assert.Equal(t, dir, cfg.Workspace.Root)
			}
		})
	}
	t.Run("a symlinked directory is known by its real path", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(project, link))
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+project+`": {"hasTrustDialogAccepted": true}}}`)
		cfg, err := config.Load(link)
		require.NoError(t, err)
		assert.Equal(t, project, cfg.Workspace.Dir)
		assert.True(t, cfg.Workspace.Trusted)
	})
}

func TestSaveTrust(t *testing.T) {
	t.Run("it marks the project root trusted and keeps the rest of ~/.claude.json", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		require.NoError(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
		sub := filepath.Join(project, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"userID": "u", "numStartups": 12345678901234567890, "projects": {"`+project+`": {"allowedTools": ["x"]}}}`)
		cfg, _ := config.Load(sub)
		require.False(t, cfg.Workspace.Trusted)

		require.NoError(t, config.SaveTrust(sub))
		cfg, _ = config.Load(sub)
		assert.True(t, cfg.Workspace.Trusted)
		b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
		require.NoError(t, err)
		assert.JSONEq(t, `{"userID": "u", "numStartups": 12345678901234567890, "projects": {"`+project+`": {"allowedTools": ["x"], "hasTrustDialogAccepted": true}}}`, string(b))
		info, err := os.Stat(filepath.Join(home, ".claude.json"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm()&0o600)
	})
	t.Run("it writes through a link the user keeps there, to the file it leads to", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		target := filepath.Join(t.TempDir(), "elsewhere.json")
		testdir.Write(t, target, `{}`)
		link := filepath.Join(home, ".claude.json")
		require.NoError(t, os.Symlink(target, link))
		require.NoError(t, config.SaveTrust(project))
		b, _ := os.ReadFile(target)
		assert.Contains(t, string(b), `"hasTrustDialogAccepted":true`)
		info, err := os.Lstat(link)
		require.NoError(t, err)
		assert.NotZero(t, info.Mode()&os.ModeSymlink, "the link is kept")
	})
	t.Run("it never writes through a link into a folder every user may write to", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		shared := filepath.Join(t.TempDir(), "shared")
		require.NoError(t, os.Mkdir(shared, 0o777))
		require.NoError(t, os.Chmod(shared, 0o777))
		target := filepath.Join(shared, "elsewhere.json")
		testdir.Write(t, target, `{}`)
		require.NoError(t, os.Symlink(target, filepath.Join(home, ".claude.json")))
		err := config.SaveTrust(project)
		require.ErrorIs(t, err, config.ErrNotOwned)
		b, _ := os.ReadFile(target)
		assert.Equal(t, `{}`, string(b))
	})
}

func TestProjectRootAsClaudeCodeFindsIt(t *testing.T) {
	home, base := testdir.Scratch(t)
	root := filepath.Join(base, "repo")
	sub := filepath.Join(root, "sub", "deeper")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(sub, 0o755))
	testdir.Write(t, filepath.Join(base, ".mcp.json"), `{"mcpServers": {"above": {"command": "above"}, "shared": {"command": "from-above"}}}`)
	testdir.Write(t, filepath.Join(root, ".mcp.json"), `{"mcpServers": {"rooted": {"command": "rooted"}, "shared": {"command": "from-root"}}}`)
	testdir.Write(t, filepath.Join(sub, ".mcp.json"), `{"mcpServers": {"shared": {"command": "from-sub"}}}`)
	testdir.Write(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+root+`": {"mcpServers": {"mine": {"command": "local"}}}}}`)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)

	cfg, err := config.Load(sub)
	require.NoError(t, err)
	assert.Equal(t, []string{"above", "mine", "rooted", "shared"}, cfg.Names())
	assert.Equal(t, "from-sub", cfg.Servers["shared"].Command, "the nearer .mcp.json wins")
	assert.Equal(t, config.ScopeProject, cfg.Servers["above"].Scope, "parents' .mcp.json files are read, as Claude Code reads them")
	assert.Equal(t, config.ScopeLocal, cfg.Servers["mine"].Scope, "the local scope is keyed by the git root")
	assert.Equal(t, sub, cfg.Servers["shared"].ProjectDir)
	assert.Contains(t, config.Files(sub), filepath.Join(base, ".mcp.json"))
}
