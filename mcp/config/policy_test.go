package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestThePolicyAllowsAsClaudeCodeDoes(t *testing.T) {
	byName := &config.Server{Name: "byname", Type: config.TypeStdio, Command: "true"}
	byCmd := &config.Server{Name: "bycmd", Type: config.TypeStdio, Command: "node", Args: []string{"srv.js"}}
	byURL := &config.Server{Name: "byurl", Type: config.TypeHTTP, URL: "https://api.corp.example/mcp"}
	other := &config.Server{Name: "other", Type: config.TypeStdio, Command: "true"}
	denied := &config.Server{Name: "denied", Type: config.TypeStdio, Command: "true"}
	all := []*config.Server{byName, byCmd, byURL, other, denied}
	// Each case is one Claude Code 2.1.332 was seen to decide so (claude
	// mcp list under /etc/claude-code/managed-settings.json).
	tests := []struct {
		name     string
		settings string
		want     []string
	}{
		{"names, commands and URLs", `{"allowedMcpServers":[{"serverName":"byname"},{"serverName":"denied"},{"serverCommand":["node","srv.js"]},{"serverUrl":"https://*.corp.example/*"}],"deniedMcpServers":[{"serverName":"denied"}]}`, []string{"bycmd", "byurl"}},
		{"names only", `{"allowedMcpServers":[{"serverName":"byname"},{"serverName":"byurl"}]}`, []string{"byname", "byurl"}},
		{"a command entry makes stdio servers match a command", `{"allowedMcpServers":[{"serverName":"byname"},{"serverName":"byurl"},{"serverCommand":["x"]}]}`, []string{"byurl"}},
		{"denied by command and URL", `{"deniedMcpServers":[{"serverCommand":["node","srv.js"]},{"serverUrl":"https://api.*"}]}`, []string{"byname", "other", "denied"}},
		{"an empty allow list", `{"allowedMcpServers":[]}`, nil},
		{"a host * spans dots", `{"allowedMcpServers":[{"serverUrl":"https://*.example/*"}]}`, []string{"byurl"}},
		{"URL entries leave stdio servers to names", `{"allowedMcpServers":[{"serverUrl":"https://api.corp.example/*"},{"serverName":"other"}]}`, []string{"byurl", "other"}},
		{"no policy", ``, []string{"byname", "bycmd", "byurl", "other", "denied"}},
		{"keys read exactly, as Claude Code reads them", `{"AllowedMcpServers":[],"deniedMcpServers":[{"serverName":"other"}]}`, []string{"byname", "bycmd", "byurl", "denied"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			config.SetManagedDir(t, dir)
			if tt.settings != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "managed-settings.json"), []byte(tt.settings), 0o644))
			}
			p, err := config.LoadPolicy()
			require.NoError(t, err)
			var got []string
			for _, sc := range all {
				if ok, why := p.Allows(sc); ok {
					got = append(got, sc.Name)
				} else {
					assert.NotEmpty(t, why)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("why a server is refused carries no argument or query", func(t *testing.T) {
		dir := t.TempDir()
		config.SetManagedDir(t, dir)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "managed-settings.json"), []byte(`{"allowedMcpServers":[{"serverCommand":["x"]},{"serverUrl":"https://ok.example/*"}]}`), 0o644))
		p, err := config.LoadPolicy()
		require.NoError(t, err)
		_, why := p.Allows(&config.Server{Name: "s", Type: config.TypeStdio, Command: "node", Args: []string{"--token", "s3cret"}})
		assert.Contains(t, why, "node")
		assert.NotContains(t, why, "s3cret")
		_, why = p.Allows(&config.Server{Name: "r", Type: config.TypeHTTP, URL: "https://evil.example/mcp?key=s3cret"})
		assert.Contains(t, why, "evil.example")
		assert.NotContains(t, why, "s3cret")
	})
	t.Run("a policy entry with two kinds is an error", func(t *testing.T) {
		dir := t.TempDir()
		config.SetManagedDir(t, dir)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "managed-settings.json"), []byte(`{"deniedMcpServers":[{"serverName":"a","serverUrl":"b"}]}`), 0o644))
		_, err := config.LoadPolicy()
		assert.ErrorContains(t, err, "exactly one of")
	})
}

func TestLoadEnforcesThePolicy(t *testing.T) {
	homeDir, project := home(t)
	managed := t.TempDir()
	config.SetManagedDir(t, managed)
	ctx := context.Background()
	for _, name := range []string{"ok", "bad"} {
		_, err := config.Add(ctx, project, config.ScopeUser, name, json.RawMessage(`{"command":"true"}`))
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(managed, "managed-settings.json"), []byte(`{"deniedMcpServers":[{"serverName":"bad"}]}`), 0o644))
	cfg, err := config.Load(project)
	require.Error(t, err)
	assert.NoError(t, cfg.Servers["ok"].Err)
	assert.ErrorIs(t, cfg.Servers["bad"].Err, config.ErrPolicy)
	assert.ErrorContains(t, cfg.Servers["bad"].Err, `deniedMcpServers has {"serverName":"bad"}`)
	_, err = config.Add(ctx, project, config.ScopeUser, "bad", json.RawMessage(`{"command":"x"}`))
	assert.ErrorIs(t, err, config.ErrPolicy, "a denied server cannot be added")

	t.Run("a broken policy allows nothing", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(managed, "managed-settings.json"), []byte(`{"deniedMcpServers":`), 0o644))
		defer os.Remove(filepath.Join(managed, "managed-settings.json"))
		cfg, _ := config.Load(project)
		assert.ErrorIs(t, cfg.Servers["ok"].Err, config.ErrPolicy)
	})
	t.Run("managed-mcp.json has exclusive control", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(managed, "managed-mcp.json"), []byte(`{"mcpServers":{"corp":{"command":"true"}}}`), 0o644))
		cfg, _ := config.Load(project)
		assert.Equal(t, []string{"corp"}, cfg.Names())
		assert.Equal(t, config.ScopeManaged, cfg.Servers["corp"].Scope)
		_, err := config.Remove(ctx, project, "", "corp")
		assert.ErrorIs(t, err, config.ErrManaged)
		_, err = config.Add(ctx, project, config.ScopeUser, "more", json.RawMessage(`{"command":"x"}`))
		assert.ErrorIs(t, err, config.ErrPolicy)
		_, err = config.Remove(ctx, project, "", "ok")
		assert.NoError(t, err, "the user's own can still be removed")
	})
	_ = homeDir
}

func TestTrustingTheWorkspaceKeepsThePolicy(t *testing.T) {
	_, project := home(t)
	managed := t.TempDir()
	config.SetManagedDir(t, managed)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"proj": {"command": "proj"}, "ok": {"command": "ok"}}}`)
	testdir.Write(t, filepath.Join(project, ".claude", "settings.local.json"), `{"enabledMcpjsonServers": ["proj", "ok"]}`)
	require.NoError(t, os.WriteFile(filepath.Join(managed, "managed-settings.json"), []byte(`{"deniedMcpServers":[{"serverName":"proj"}]}`), 0o644))
	cfg, _ := config.Load(project)
	require.False(t, cfg.Workspace.Trusted)
	require.ErrorIs(t, cfg.Servers["proj"].Err, config.ErrPolicy)

	trusted := cfg.Trusted()
	require.NotSame(t, cfg, trusted)
	assert.Equal(t, config.Approved, trusted.Servers["ok"].Approval, "trust counts the workspace's approvals")
	assert.NoError(t, trusted.Servers["ok"].Err)
	assert.ErrorIs(t, trusted.Servers["proj"].Err, config.ErrPolicy, "trust never lifts the organisation's deny")

	t.Run("nor its exclusive list", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(managed, "managed-mcp.json"), []byte(`{"mcpServers":{"corp":{"command":"true"}}}`), 0o644))
		cfg, _ := config.Load(project)
		require.Equal(t, []string{"corp"}, cfg.Names())
		assert.Equal(t, []string{"corp"}, cfg.Trusted().Names())
	})
}
