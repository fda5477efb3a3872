package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadConfigPrecedence(t *testing.T) {
	home, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{
		"permissions": {"allow": ["Bash"]},
		"mcpServers": {
			"everywhere": {"command": "from-home"},
			"home-only": {"command": "home-cmd"}
		}}`)
	testdir.Write(t, filepath.Join(project, ".claude", "settings.json"), `{
		"mcpServers": {
			"everywhere": {"command": "from-project-settings"},
			"settings-only": {"command": "settings-cmd"}
		}}`)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{
		"mcpServers": {"everywhere": {"command": "from-mcp-json", "args": ["-v"]}}}`)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{
		"permissions": {"allow": ["Bash"]},
		"enableAllProjectMcpServers": true,
		"mcpServers": {
			"everywhere": {"command": "from-home"},
			"home-only": {"command": "home-cmd"}
		}}`)
	project, _ = filepath.EvalSymlinks(project)

	cfg, err := config.Load(project)
	require.NoError(t, err)
	assert.Equal(t, []string{"everywhere", "home-only", "settings-only"}, cfg.Names())
	assert.Equal(t, "from-mcp-json", cfg.Servers["everywhere"].Command, ".mcp.json wins")
	assert.Equal(t, []string{"-v"}, cfg.Servers["everywhere"].Args)
	assert.Equal(t, filepath.Join(project, ".mcp.json"), cfg.Servers["everywhere"].Source)
	assert.Equal(t, "home-cmd", cfg.Servers["home-only"].Command)
	assert.Equal(t, "settings-cmd", cfg.Servers["settings-only"].Command)
}

func TestLoadConfigBrokenFileHidesNothing(t *testing.T) {
	home, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"mcpServers": {"good": {"command": "ok"}}}`)
	testdir.Write(t, filepath.Join(project, ".claude", "settings.json"), `{not json`)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"bad": 42, "fine": {"command": "x"}}`)
	cfg, err := config.Load(project)
	require.Error(t, err)
	assert.Equal(t, []string{"bad", "fine", "good"}, cfg.Names())
	require.Len(t, cfg.Errors, 1)
	assert.Equal(t, filepath.Join(project, ".claude", "settings.json"), cfg.Errors[0].File)
	var ce *config.Error
	require.ErrorAs(t, cfg.Servers["bad"].Err, &ce)
	assert.Equal(t, "bad", ce.Server)
	assert.NoError(t, cfg.Servers["fine"].Err)
	assert.Contains(t, err.Error(), "settings.json")
	assert.Contains(t, err.Error(), `server "bad"`)
}

func TestParseConfigForms(t *testing.T) {
	tests := []struct {
		name, input string
	}{
		{"nested under mcpServers", `{"mcpServers": {"s": {"command": "run", "args": ["a"]}}}`},
		{"the flat map", `{"s": {"command": "run", "args": ["a"]}}`},
		{"explicit stdio type", `{"mcpServers": {"s": {"type": "stdio", "command": "run", "args": ["a"]}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse(strings.NewReader(tt.input), "test.json")
			require.NoError(t, err)
			require.Contains(t, cfg.Servers, "s")
			s := cfg.Servers["s"]
			assert.Equal(t, config.TypeStdio, s.Type)
			assert.Equal(t, "run", s.Command)
			assert.Equal(t, []string{"a"}, s.Args)
			assert.Equal(t, "test.json", s.Source)
		})
	}
}

func TestParseConfigEntries(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": {
		"remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X": "1"}},
		"legacy": {"type": "sse", "url": "https://example.com/sse"},
		"inferred": {"url": "https://example.com/mcp"},
		"extra": {"command": "x", "timeout": 30, "alwaysAllow": ["a"]},
		"off": {"command": "x", "disabled": true},
		"no-url": {"type": "http"},
		"no-command": {"args": ["x"]},
		"weird": {"type": "carrier-pigeon", "command": "x"},
		"not-object": "run me"
	}}`), "cfg.json")
	require.Error(t, err)
	assert.Equal(t, config.TypeHTTP, cfg.Servers["remote"].Type)
	assert.Equal(t, map[string]string{"X": "1"}, cfg.Servers["remote"].Headers)
	assert.Equal(t, config.TypeSSE, cfg.Servers["legacy"].Type)
	assert.Equal(t, config.TypeHTTP, cfg.Servers["inferred"].Type)
	assert.NoError(t, cfg.Servers["extra"].Err, "unknown fields are never fatal")
	assert.JSONEq(t, `30`, string(cfg.Servers["extra"].Extra["timeout"]))
	assert.True(t, cfg.Servers["off"].Disabled)
	for name, reason := range map[string]string{
		"no-url":     `http server needs a "url"`,
		"no-command": `stdio server needs a "command"`,
		"weird":      `unknown type "carrier-pigeon"`,
		"not-object": "not a JSON object",
	} {
		var ce *config.Error
		require.ErrorAs(t, cfg.Servers[name].Err, &ce, name)
		assert.Equal(t, "cfg.json", ce.File)
		assert.Equal(t, name, ce.Server)
		assert.Contains(t, ce.Error(), reason)
		assert.Contains(t, err.Error(), reason, "Config.Err joins every entry's problem")
	}
}

func TestConfigScopes(t *testing.T) {
	home, project := testdir.Scratch(t)
	abs, _ := filepath.EvalSymlinks(project)
	testdir.Write(t, filepath.Join(home, ".claude.json"), `{
		"mcpServers": {"everywhere": {"command": "user-claude-json"}, "mine": {"command": "mine"}},
		"projects": {"`+abs+`": {"mcpServers": {"everywhere": {"command": "local"}, "private": {"command": "p"}}}}}`)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["shared"], "mcpServers": {"settings": {"command": "s"}, "shared": {"command": "user-version"}}}`)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"everywhere": {"command": "project"}, "shared": {"command": "project-version"}}}`)
	cfg, err := config.Load(project)
	require.NoError(t, err)
	tests := []struct {
		server, command string
		scope           config.Scope
	}{
		{"everywhere", "local", config.ScopeLocal},
		{"private", "p", config.ScopeLocal},
		{"mine", "mine", config.ScopeUser},
		{"settings", "s", config.ScopeUser},
		{"shared", "project-version", config.ScopeProject},
	}
	for _, tt := range tests {
		sc := cfg.Servers[tt.server]
		require.NotNil(t, sc, tt.server)
		assert.Equal(t, tt.command, sc.Command, tt.server)
		assert.Equal(t, tt.scope, sc.Scope, tt.server)
	}
	require.Len(t, cfg.Servers["shared"].Warnings, 1, "a project entry that replaces the user's server says so")
	assert.Contains(t, cfg.Servers["shared"].Warnings[0], "replaces the user server")
}

func TestTrustedCountsTheWorkspacesOwnApprovals(t *testing.T) {
	_, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"proj": {"command": "proj"}, "other": {"command": "other"}}}`)
	testdir.Write(t, filepath.Join(project, ".claude", "settings.local.json"), `{"enabledMcpjsonServers": ["proj"]}`)
	cfg, err := config.Load(project)
	require.NoError(t, err)
	require.False(t, cfg.Workspace.Trusted)
	assert.Equal(t, config.ApprovalPending, cfg.Servers["proj"].Approval, "the repository's own approval does not count")
	assert.True(t, cfg.WaitsForTrust("proj"), "it would, once the workspace is trusted")
	assert.False(t, cfg.WaitsForTrust("other"))

	trusted := cfg.Trusted()
	require.NotSame(t, cfg, trusted)
	assert.True(t, trusted.Workspace.Trusted)
	assert.Equal(t, config.Approved, trusted.Servers["proj"].Approval)
	assert.False(t, trusted.WaitsForTrust("proj"))
	assert.Same(t, trusted, trusted.Trusted(), "trusted already")
	assert.False(t, cfg.Workspace.Trusted, "the config it came from is unchanged")
	assert.Equal(t, config.ApprovalPending, cfg.Servers["proj"].Approval)

	own, err := config.Parse(strings.NewReader(`{"s": {"command": "s"}}`), "own.json")
	require.NoError(t, err)
	assert.Same(t, own, own.Trusted(), "a program's own config is trusted as it is")
	assert.False(t, own.WaitsForTrust("s"))
}
