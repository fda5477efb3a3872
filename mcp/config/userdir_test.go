package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"
)

// configDir makes a home and a project (a git work tree) with servers and
// approvals in the home's files, and a config folder for
// $CLAUDE_CONFIG_DIR with others.
func configDir(t *testing.T) (homeDir, cfgDir, project string) {
	t.Helper()
	homeDir, project = home(t)
	cfgDir = filepath.Join(t.TempDir(), "claude-config")
	testdir.Write(t, filepath.Join(homeDir, ".claude.json"), `{"mcpServers": {"from-home": {"command": "h"}},
		"projects": {"`+project+`": {"mcpServers": {"local-home": {"command": "lh"}}}}}`)
	testdir.Write(t, filepath.Join(homeDir, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["p-home"]}`)
	testdir.Write(t, filepath.Join(cfgDir, ".claude.json"), `{"mcpServers": {"from-dir": {"command": "d"}},
		"projects": {"`+project+`": {"hasTrustDialogAccepted": true, "mcpServers": {"local-dir": {"command": "ld"}}}}}`)
	testdir.Write(t, filepath.Join(cfgDir, "settings.json"), `{"enabledMcpjsonServers": ["p-dir"]}`)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"p-home": {"command": "x"}, "p-dir": {"command": "y"}}}`)
	return homeDir, cfgDir, project
}

// state is what Load made of a server: its scope, and whether it runs.
func state(cfg *config.Config, name string) string {
	sc := cfg.Servers[name]
	switch {
	case sc == nil:
		return "absent"
	case sc.Scope == config.ScopeProject && sc.Approval != config.Approved:
		return "project, not approved"
	}
	return string(sc.Scope)
}

func TestClaudeConfigDirHoldsTheUsersFiles(t *testing.T) {
	tests := []struct {
		name string
		dir  func(cfgDir string) string // $CLAUDE_CONFIG_DIR
		want map[string]string
	}{
		{"unset: ~/.claude.json and ~/.claude/settings.json", func(string) string { return "" },
			map[string]string{"from-home": "user", "local-home": "local", "p-home": "project", "from-dir": "absent", "local-dir": "absent", "p-dir": "project, not approved"}},
		{"set: its .claude.json and settings.json, and not the home's", func(d string) string { return d },
			map[string]string{"from-dir": "user", "local-dir": "local", "p-dir": "project", "from-home": "absent", "local-home": "absent", "p-home": "project, not approved"}},
		{"set to a relative folder: taken from the working directory", func(d string) string {
			return filepath.Join(".", filepath.Base(d))
		}, map[string]string{"from-dir": "user", "local-dir": "local", "p-dir": "project", "from-home": "absent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, cfgDir, project := configDir(t)
			t.Chdir(filepath.Dir(cfgDir))
			t.Setenv(config.ConfigDirEnv, tt.dir(cfgDir))
			cfg, err := config.Load(project)
			require.NoError(t, err)
			for name, want := range tt.want {
				assert.Equal(t, want, state(cfg, name), name)
			}
			if tt.dir(cfgDir) != "" {
				assert.True(t, cfg.Workspace.Trusted, "the trust of the folder's .claude.json counts")
				assert.Equal(t, filepath.Join(cfgDir, ".claude.json"), cfg.Servers["from-dir"].Source)
				files := config.Files(project)
				assert.Contains(t, files, filepath.Join(cfgDir, ".claude.json"))
				assert.Contains(t, files, filepath.Join(cfgDir, "settings.json"))
				assert.NotContains(t, files, filepath.Join(os.Getenv("HOME"), ".claude.json"))
			}
		})
	}
}

// Claude Code given CLAUDE_CONFIG_DIR="" reads the settings.json of the
// directory it runs in, which a repository can ship; an empty value is
// unset here.
func TestAnEmptyClaudeConfigDirIsUnset(t *testing.T) {
	_, _, project := configDir(t)
	testdir.Write(t, filepath.Join(project, "settings.json"), `{"enabledMcpjsonServers": ["p-dir"], "enableAllProjectMcpServers": true}`)
	t.Chdir(project)
	t.Setenv(config.ConfigDirEnv, "")
	cfg, err := config.Load(project)
	require.NoError(t, err)
	assert.Equal(t, "project, not approved", state(cfg, "p-dir"), "the project's settings.json approves nothing")
	assert.Equal(t, "project", state(cfg, "p-home"))
	assert.Equal(t, "user", state(cfg, "from-home"))
}

func TestClaudeConfigDirTakesTheWrites(t *testing.T) {
	homeDir, project := home(t)
	homeFile := filepath.Join(homeDir, ".claude.json")
	testdir.Write(t, homeFile, `{"mcpServers": {"keep": {"command": "k"}}}`)
	cfgDir := filepath.Join(t.TempDir(), "not", "made", "yet")
	t.Setenv(config.ConfigDirEnv, cfgDir)
	ctx := context.Background()
	entry := json.RawMessage(`{"type":"stdio","command":"x","args":[],"env":{}}`)

	for _, scope := range []config.Scope{config.ScopeUser, config.ScopeLocal} {
		c, err := config.Add(ctx, project, scope, "s-"+string(scope), entry)
		require.NoError(t, err, scope)
		assert.Equal(t, filepath.Join(cfgDir, ".claude.json"), c.File, scope)
	}
	info, err := os.Stat(cfgDir)
	require.NoError(t, err, "the folder is made, with its parents")
	assert.Zero(t, info.Mode().Perm()&0o077, "the user's own: %v", info.Mode())
	require.NoError(t, config.SaveTrust(project))
	cfg, err := config.Load(project)
	require.NoError(t, err)
	assert.Equal(t, "user", state(cfg, "s-user"))
	assert.Equal(t, "local", state(cfg, "s-local"))
	assert.Equal(t, "absent", state(cfg, "keep"), "~/.claude.json is not read")
	assert.True(t, cfg.Workspace.Trusted, "the trust went to the folder's .claude.json")

	_, err = config.Remove(ctx, project, config.ScopeUser, "s-user")
	require.NoError(t, err)
	_, err = config.ResetProjectChoices(ctx, project)
	require.NoError(t, err)
	b, err := os.ReadFile(homeFile)
	require.NoError(t, err)
	assert.JSONEq(t, `{"mcpServers": {"keep": {"command": "k"}}}`, string(b), "~/.claude.json is not written")

	t.Run("under Claude Code's lock, beside the folder's .claude.json", func(t *testing.T) {
		config.SetLockWait(t, 0)
		lock := filepath.Join(cfgDir, ".claude.json.lock")
		require.NoError(t, os.Mkdir(lock, 0o700))
		defer os.Remove(lock)
		_, err := config.Add(ctx, project, config.ScopeUser, "late", entry)
		assert.ErrorIs(t, err, config.ErrLocked)
		assert.ErrorContains(t, err, lock)
	})
}
