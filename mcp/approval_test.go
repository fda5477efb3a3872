package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectWithServer makes a home and a project whose .mcp.json has the
// server "proj", which would create the file ran if it were started.
func projectWithServer(t *testing.T) (home, project, ran string) {
	t.Helper()
	home, project = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	ran = filepath.Join(t.TempDir(), "ran")
	writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"proj": {"command": "touch", "args": ["`+ran+`"]}}}`)
	return home, project, ran
}

func TestProjectServersNeedApproval(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // path (home/…, project/…) → content
		want  mcp.Approval
	}{
		{"nothing decided", nil, mcp.ApprovalPending},
		{"the project's own shared settings cannot approve it", map[string]string{
			"project/.claude/settings.json": `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["proj"]}`}, mcp.ApprovalPending},
		{"enabledMcpjsonServers in the user's settings", map[string]string{
			"home/.claude/settings.json": `{"enabledMcpjsonServers": ["proj"]}`}, mcp.Approved},
		{"enableAllProjectMcpServers in the user's settings", map[string]string{
			"home/.claude/settings.json": `{"enableAllProjectMcpServers": true}`}, mcp.Approved},
		{"the project's local settings approve nothing in a workspace not trusted", map[string]string{
			"project/.claude/settings.local.json": `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["proj"]}`}, mcp.ApprovalPending},
		{"the project's local settings in a trusted workspace", map[string]string{
			"home/.claude.json":                   `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true}}}`,
			"project/.claude/settings.local.json": `{"enabledMcpjsonServers": ["proj"]}`}, mcp.Approved},
		{"the project's entry in ~/.claude.json approves nothing in a workspace not trusted", map[string]string{
			"home/.claude.json": `{"projects": {"PROJECT": {"enabledMcpjsonServers": ["proj"]}}}`}, mcp.ApprovalPending},
		{"the project's entry in ~/.claude.json in a trusted workspace", map[string]string{
			"home/.claude.json": `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["proj"]}}}`}, mcp.Approved},
		{"a trust flag the project ships counts for nothing", map[string]string{
			"project/.claude/settings.local.json": `{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["proj"]}`,
			"project/.claude/settings.json":       `{"hasTrustDialogAccepted": true}`,
			"project/.claude.json":                `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["proj"]}}}`}, mcp.ApprovalPending},
		{"a rejection wins", map[string]string{
			"home/.claude/settings.json":          `{"enableAllProjectMcpServers": true}`,
			"home/.claude.json":                   `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true}}}`,
			"project/.claude/settings.local.json": `{"disabledMcpjsonServers": ["proj"]}`}, mcp.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, project, _ := projectWithServer(t)
			abs, _ := filepath.EvalSymlinks(project)
			for path, content := range tt.files {
				dir, rel, _ := strings.Cut(path, "/")
				base := home
				if dir == "project" {
					base = project
				}
				writeFile(t, filepath.Join(base, rel), strings.ReplaceAll(content, "PROJECT", abs))
			}
			cfg, err := mcp.LoadConfig(project)
			require.NoError(t, err)
			sc := cfg.Servers["proj"]
			require.NotNil(t, sc)
			assert.Equal(t, mcp.ScopeProject, sc.Scope)
			assert.Equal(t, tt.want, sc.Approval)
		})
	}
}

func TestManagerStartsNoUnapprovedProjectServer(t *testing.T) {
	t.Run("an unapproved server waits, runs nothing, and says why", func(t *testing.T) {
		noLeaks(t)
		_, project, ran := projectWithServer(t)
		cfg, _ := mcp.LoadConfig(project)
		m := newManager(t, cfg, nil)
		require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
		st := statusOf(m)["proj"]
		assert.Equal(t, mcp.StateNeedsApproval, st.State)
		assert.ErrorContains(t, st.Err, "approval")
		assert.Equal(t, mcp.ScopeProject, st.Scope)
		assert.NoFileExists(t, ran)
	})
	t.Run("a rejected server is disabled", func(t *testing.T) {
		noLeaks(t)
		home, project, ran := projectWithServer(t)
		writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["proj"]}`)
		cfg, _ := mcp.LoadConfig(project)
		m := newManager(t, cfg, nil)
		require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
		assert.Equal(t, mcp.StateDisabled, statusOf(m)["proj"].State)
		assert.NoFileExists(t, ran)
	})
	t.Run("ApproveServer decides once, for the servers the settings leave open", func(t *testing.T) {
		noLeaks(t)
		_, project, ran := projectWithServer(t)
		cfg, _ := mcp.LoadConfig(project)
		var asked atomic.Int32
		m := newManager(t, cfg, &mcp.ManagerOptions{ApproveServer: func(_ context.Context, sc *mcp.ServerConfig) bool {
			asked.Add(1)
			return sc.Name == "proj"
		}})
		m.Connect(ctxTimeout(t, 5*time.Second)) // touch is no MCP server: it fails, after it ran
		m.Connect(ctxTimeout(t, 5*time.Second))
		assert.Equal(t, int32(1), asked.Load())
		assert.FileExists(t, ran, "approved, so it was started")
	})
	t.Run("ApproveServer saying no leaves it waiting", func(t *testing.T) {
		noLeaks(t)
		_, project, ran := projectWithServer(t)
		cfg, _ := mcp.LoadConfig(project)
		m := newManager(t, cfg, &mcp.ManagerOptions{ApproveServer: func(context.Context, *mcp.ServerConfig) bool { return false }})
		require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
		assert.Equal(t, mcp.StateNeedsApproval, statusOf(m)["proj"].State)
		assert.NoFileExists(t, ran)
	})
	t.Run("Manager.Approve lets the next Connect start it", func(t *testing.T) {
		noLeaks(t)
		_, project, ran := projectWithServer(t)
		cfg, _ := mcp.LoadConfig(project)
		m := newManager(t, cfg, nil)
		require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
		assert.NoFileExists(t, ran)
		require.NoError(t, m.Approve("proj"))
		m.Connect(ctxTimeout(t, 5*time.Second))
		assert.FileExists(t, ran)
	})
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
