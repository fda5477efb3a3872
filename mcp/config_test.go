package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func TestLoadConfigPrecedence(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{
		"permissions": {"allow": ["Bash"]},
		"mcpServers": {
			"everywhere": {"command": "from-home"},
			"home-only": {"command": "home-cmd"}
		}}`)
	writeFile(t, filepath.Join(project, ".claude", "settings.json"), `{
		"mcpServers": {
			"everywhere": {"command": "from-project-settings"},
			"settings-only": {"command": "settings-cmd"}
		}}`)
	writeFile(t, filepath.Join(project, ".mcp.json"), `{
		"mcpServers": {"everywhere": {"command": "from-mcp-json", "args": ["-v"]}}}`)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{
		"permissions": {"allow": ["Bash"]},
		"enableAllProjectMcpServers": true,
		"mcpServers": {
			"everywhere": {"command": "from-home"},
			"home-only": {"command": "home-cmd"}
		}}`)
	project, _ = filepath.EvalSymlinks(project)

	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	assert.Equal(t, []string{"everywhere", "home-only", "settings-only"}, cfg.Names())
	assert.Equal(t, "from-mcp-json", cfg.Servers["everywhere"].Command, ".mcp.json wins")
	assert.Equal(t, []string{"-v"}, cfg.Servers["everywhere"].Args)
	assert.Equal(t, filepath.Join(project, ".mcp.json"), cfg.Servers["everywhere"].Source)
	assert.Equal(t, "home-cmd", cfg.Servers["home-only"].Command)
	assert.Equal(t, "settings-cmd", cfg.Servers["settings-only"].Command)
}

func TestLoadConfigBrokenFileHidesNothing(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"mcpServers": {"good": {"command": "ok"}}}`)
	writeFile(t, filepath.Join(project, ".claude", "settings.json"), `{not json`)
	writeFile(t, filepath.Join(project, ".mcp.json"), `{"bad": 42, "fine": {"command": "x"}}`)
	cfg, err := mcp.LoadConfig(project)
	require.Error(t, err)
	assert.Equal(t, []string{"bad", "fine", "good"}, cfg.Names())
	require.Len(t, cfg.Errors, 1)
	assert.Equal(t, filepath.Join(project, ".claude", "settings.json"), cfg.Errors[0].File)
	var ce *mcp.ConfigError
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
			cfg, err := mcp.ParseConfig(strings.NewReader(tt.input), "test.json")
			require.NoError(t, err)
			require.Contains(t, cfg.Servers, "s")
			s := cfg.Servers["s"]
			assert.Equal(t, mcp.TypeStdio, s.Type)
			assert.Equal(t, "run", s.Command)
			assert.Equal(t, []string{"a"}, s.Args)
			assert.Equal(t, "test.json", s.Source)
		})
	}
}

func TestParseConfigEntries(t *testing.T) {
	cfg, err := mcp.ParseConfig(strings.NewReader(`{"mcpServers": {
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
	assert.Equal(t, mcp.TypeHTTP, cfg.Servers["remote"].Type)
	assert.Equal(t, map[string]string{"X": "1"}, cfg.Servers["remote"].Headers)
	assert.Equal(t, mcp.TypeSSE, cfg.Servers["legacy"].Type)
	assert.Equal(t, mcp.TypeHTTP, cfg.Servers["inferred"].Type)
	assert.NoError(t, cfg.Servers["extra"].Err, "unknown fields are never fatal")
	assert.JSONEq(t, `30`, string(cfg.Servers["extra"].Extra["timeout"]))
	assert.True(t, cfg.Servers["off"].Disabled)
	for name, reason := range map[string]string{
		"no-url":     `http server needs a "url"`,
		"no-command": `stdio server needs a "command"`,
		"weird":      `unknown type "carrier-pigeon"`,
		"not-object": "not a JSON object",
	} {
		var ce *mcp.ConfigError
		require.ErrorAs(t, cfg.Servers[name].Err, &ce, name)
		assert.Equal(t, "cfg.json", ce.File)
		assert.Equal(t, name, ce.Server)
		assert.Contains(t, ce.Error(), reason)
		assert.Contains(t, err.Error(), reason, "Config.Err joins every entry's problem")
	}
}

func TestConfigExpansion(t *testing.T) {
	t.Setenv("MCPLUG_TEST_SET", "value")
	t.Setenv("MCPLUG_TEST_EMPTY", "")
	os.Unsetenv("MCPLUG_TEST_UNSET")
	cfg, err := mcp.ParseConfig(strings.NewReader(`{"mcpServers": {
		"ok": {
			"command": "${MCPLUG_TEST_SET}/bin",
			"args": ["--a=${MCPLUG_TEST_SET}", "--b=${MCPLUG_TEST_UNSET:-fallback}", "--c=${MCPLUG_TEST_EMPTY:-not used}", "--d=[${MCPLUG_TEST_EMPTY}]", "plain $HOME"],
			"env": {"TOKEN": "${MCPLUG_TEST_SET}-${MCPLUG_TEST_SET}"},
			"cwd": "${MCPLUG_TEST_UNSET:-/tmp}"
		},
		"remote": {"type": "http", "url": "https://${MCPLUG_TEST_UNSET:-example.com}/mcp", "headers": {"Authorization": "Bearer ${MCPLUG_TEST_SET}"}},
		"missing": {"command": "x", "args": ["${MCPLUG_TEST_UNSET}"]},
		"unclosed": {"command": "x", "env": {"A": "${MCPLUG_TEST_SET"}}
	}}`), "cfg.json")
	require.Error(t, err)

	ok := cfg.Servers["ok"]
	require.NoError(t, ok.Err)
	assert.Equal(t, "value/bin", ok.Command)
	assert.Equal(t, []string{"--a=value", "--b=fallback", "--c=", "--d=[]", "plain $HOME"}, ok.Args, "a default is for an unset variable, not an empty one")
	assert.Equal(t, map[string]string{"TOKEN": "value-value"}, ok.Env)
	assert.Equal(t, "/tmp", ok.Cwd)

	remote := cfg.Servers["remote"]
	require.NoError(t, remote.Err)
	assert.Equal(t, "https://example.com/mcp", remote.URL)
	assert.Equal(t, "Bearer value", remote.Headers["Authorization"])

	var ce *mcp.ConfigError
	require.ErrorAs(t, cfg.Servers["missing"].Err, &ce)
	assert.Contains(t, ce.Error(), "MCPLUG_TEST_UNSET is not set")
	_, terr := cfg.Servers["missing"].Transport()
	assert.Error(t, terr, "a server with a config error is never started")
	require.ErrorAs(t, cfg.Servers["unclosed"].Err, &ce)
	assert.Contains(t, ce.Error(), "not closed")
	assert.NotContains(t, ce.Error(), "MCPLUG_TEST_SET", "a config error never quotes the value")
}

func TestConfigExpansionNestedDefaults(t *testing.T) {
	t.Setenv("MCPLUG_TEST_SET", "value")
	os.Unsetenv("MCPLUG_TEST_UNSET")
	deep := "${MCPLUG_TEST_UNSET:-" + strings.Repeat("${MCPLUG_TEST_UNSET:-", 9) + "x" + strings.Repeat("}", 10)
	tests := []struct {
		name, value, want, err string
	}{
		{"a default that names a set variable", "${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_SET}}", "value", ""},
		{"a default nested twice", "a${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_SET}/b}}c", "avalue/bc", ""},
		{"a set variable ignores its nested default", "${MCPLUG_TEST_SET:-${MCPLUG_TEST_UNSET}}", "value", ""},
		{"a nested default that is unset", "${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_UNSET}}", "", "MCPLUG_TEST_UNSET is not set"},
		{"a nested default not closed", "${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_SET}", "", "not closed"},
		{"defaults nested too deep", deep, "", "nested more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(map[string]any{"s": map[string]any{"command": "run", "args": []string{tt.value}}})
			require.NoError(t, err)
			cfg, _ := mcp.ParseConfig(strings.NewReader(string(b)), "cfg.json")
			sc := cfg.Servers["s"]
			if tt.err != "" {
				require.Error(t, sc.Err)
				assert.Contains(t, sc.Err.Error(), tt.err)
				return
			}
			require.NoError(t, sc.Err)
			assert.Equal(t, []string{tt.want}, sc.Args)
			assert.NotContains(t, sc.Args[0], "${", "never a literal ${")
		})
	}
}

// scenarioEntry is a config entry that runs an mcptest scenario as a child
// process (this test binary).
func scenarioEntry(scenario string, env ...string) map[string]any {
	e := map[string]any{"MCPTEST_SCENARIO": scenario}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": e}
}

func configOf(t *testing.T, servers map[string]any) *mcp.Config {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	cfg, _ := mcp.ParseConfig(strings.NewReader(string(b)), "test.mcp.json")
	return cfg
}

func TestOAuthIssuerIsRead(t *testing.T) {
	t.Setenv("MCPLUG_TEST_ISSUER", "https://login.example.com")
	cfg, err := mcp.ParseConfig(strings.NewReader(`{"mcpServers": {"r": {"type": "http", "url": "https://mcp.example/mcp",
		"oauth": {"grant": "client_credentials", "clientId": "m", "clientSecret": "s", "issuer": "${MCPLUG_TEST_ISSUER}"}}}}`), "cfg.json")
	require.NoError(t, err)
	require.NotNil(t, cfg.Servers["r"].OAuth)
	assert.Equal(t, "https://login.example.com", cfg.Servers["r"].OAuth.Issuer, "the credentials' issuer, expanded")
	assert.NotContains(t, cfg.Servers["r"].Extra, "oauth")
}

func TestSaveApproval(t *testing.T) {
	_, project, _ := projectWithServer(t)
	require.NoError(t, mcp.SaveTrust(project))
	local := filepath.Join(project, ".claude", "settings.local.json")
	writeFile(t, local, `{"permissions": {"allow": ["Bash"]}, "disabledMcpjsonServers": ["proj", "other"]}`)
	require.NoError(t, mcp.SaveApproval(project, "proj", true))
	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	assert.Equal(t, mcp.Approved, cfg.Servers["proj"].Approval)
	b, err := os.ReadFile(local)
	require.NoError(t, err)
	assert.JSONEq(t, `{"permissions": {"allow": ["Bash"]}, "enabledMcpjsonServers": ["proj"], "disabledMcpjsonServers": ["other"]}`, string(b), "other settings are kept")

	require.NoError(t, mcp.SaveApproval(project, "proj", false))
	cfg, _ = mcp.LoadConfig(project)
	assert.Equal(t, mcp.Rejected, cfg.Servers["proj"].Approval)

	fresh := t.TempDir()
	require.NoError(t, mcp.SaveApproval(fresh, "x", true))
	info, err := os.Stat(filepath.Join(fresh, ".claude", "settings.local.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestConfigScopes(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	abs, _ := filepath.EvalSymlinks(project)
	writeFile(t, filepath.Join(home, ".claude.json"), `{
		"mcpServers": {"everywhere": {"command": "user-claude-json"}, "mine": {"command": "mine"}},
		"projects": {"`+abs+`": {"mcpServers": {"everywhere": {"command": "local"}, "private": {"command": "p"}}}}}`)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["shared"], "mcpServers": {"settings": {"command": "s"}, "shared": {"command": "user-version"}}}`)
	writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"everywhere": {"command": "project"}, "shared": {"command": "project-version"}}}`)
	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	tests := []struct {
		server, command string
		scope           mcp.Scope
	}{
		{"everywhere", "local", mcp.ScopeLocal},
		{"private", "p", mcp.ScopeLocal},
		{"mine", "mine", mcp.ScopeUser},
		{"settings", "s", mcp.ScopeUser},
		{"shared", "project-version", mcp.ScopeProject},
	}
	for _, tt := range tests {
		sc := cfg.Servers[tt.server]
		require.NotNil(t, sc, tt.server)
		assert.Equal(t, tt.command, sc.Command, tt.server)
		assert.Equal(t, tt.scope, sc.Scope, tt.server)
	}
	require.Len(t, cfg.Servers["shared"].Warnings, 1, "a project entry that replaces the user's server says so")
	assert.Contains(t, cfg.Servers["shared"].Warnings[0], "replaces the user server")

	m := newManager(t, cfg, nil)
	assert.Contains(t, statusOf(m)["shared"].Warnings[0], "replaces the user server", "and Status shows it")
}

func TestStdioServersRunInTheProject(t *testing.T) {
	noLeaks(t)
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	sub := filepath.Join(project, "tools")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	project, _ = filepath.EvalSymlinks(project)
	entry := func(cwd string) string {
		e := `{"command": "` + os.Args[0] + `", "args": ["-test.run=^$"], "env": {"MCPTEST_SCENARIO": "where"}`
		if cwd != "" {
			e += `, "cwd": "` + cwd + `"`
		}
		return e + `}`
	}
	writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"plain": `+entry("")+`, "relative": `+entry("tools")+`, "absolute": `+entry(home)+`}}`)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	m := newManager(t, cfg, nil)
	ctx := ctxTimeout(t, 30*time.Second)
	for name, wantDir := range map[string]string{"plain": project, "relative": filepath.Join(project, "tools"), "absolute": home} {
		res, err := m.CallTool(ctx, "mcp__"+name+"__where", nil)
		require.NoError(t, err, name)
		dir, projectEnv, _ := strings.Cut(res.Text(), "|")
		got, _ := filepath.EvalSymlinks(dir)
		want, _ := filepath.EvalSymlinks(wantDir)
		assert.Equal(t, want, got, name)
		assert.Equal(t, project, projectEnv, "%s: CLAUDE_PROJECT_DIR", name)
	}
}
