package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

func configOf(t *testing.T, servers map[string]any) *config.Config {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	cfg, _ := config.Parse(strings.NewReader(string(b)), "test.mcp.json")
	return cfg
}

func TestStdioServersRunInTheProject(t *testing.T) {
	noLeaks(t)
	home, project := testdir.Scratch(t)
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
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"plain": `+entry("")+`, "relative": `+entry("tools")+`, "absolute": `+entry(home)+`}}`)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
	cfg, err := config.Load(project)
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

func whereEntry() string {
	return `{"command": "` + os.Args[0] + `", "args": ["-test.run=^$"], "env": {"MCPTEST_SCENARIO": "where"}}`
}

func TestUnapprovedProjectEntryHidesNoUserServer(t *testing.T) {
	for _, decision := range []string{"pending", "rejected"} {
		t.Run("a "+decision+" project entry leaves the user's server running", func(t *testing.T) {
			noLeaks(t)
			home, project := testdir.Scratch(t)
			ran := filepath.Join(t.TempDir(), "ran")
			testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"gh": `+whereEntry()+`}}`)
			testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"gh": {"command": "touch", "args": ["`+ran+`"]}}}`)
			if decision == "rejected" {
				testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["gh"]}`)
			}
			cfg, err := config.Load(project)
			require.NoError(t, err)
			require.Equal(t, config.ScopeUser, cfg.Servers["gh"].Scope)
			m := newManager(t, cfg, nil)
			require.NoError(t, m.Connect(ctxTimeout(t, 30*time.Second)))
			st := statusOf(m)["gh"]
			assert.Equal(t, mcp.StateConnected, st.State)
			require.Len(t, st.Warnings, 1)
			assert.Contains(t, st.Warnings[0], "passed over")
			assert.Contains(t, st.Warnings[0], filepath.Join(project, ".mcp.json"))
			assert.NoFileExists(t, ran)
		})
	}
	t.Run("an approved project entry replaces the user's, and says so", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"gh": {"command": "user"}}}`)
		testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"gh": {"command": "project"}}}`)
		testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["gh"]}`)
		cfg, err := config.Load(project)
		require.NoError(t, err)
		assert.Equal(t, "project", cfg.Servers["gh"].Command)
		assert.Contains(t, strings.Join(cfg.Servers["gh"].Warnings, "\n"), "replaces the user server")
	})
}

func TestUserServersRunOutsideAnUntrustedWorkspace(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		name := "not trusted: in the home directory"
		if trusted {
			name = "trusted: in the project"
		}
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			home, project := testdir.Scratch(t)
			claudeJSON := `{"mcpServers": {"mine": ` + whereEntry() + `}`
			if trusted {
				claudeJSON += `, "projects": {"` + project + `": {"hasTrustDialogAccepted": true}}`
			}
			testdir.Write(t, filepath.Join(home, ".claude.json"), claudeJSON+`}`)
			cfg, err := config.Load(project)
			require.NoError(t, err)
			m := newManager(t, cfg, nil)
			res, err := m.CallTool(ctxTimeout(t, 30*time.Second), "mcp__mine__where", nil)
			require.NoError(t, err)
			dir, projectEnv, _ := strings.Cut(res.Text(), "|")
			want := home
			if trusted {
				want = project
			}
			got, _ := filepath.EvalSymlinks(dir)
			assert.Equal(t, want, got)
			assert.Equal(t, project, projectEnv, "CLAUDE_PROJECT_DIR is set either way")
		})
	}
	t.Run("a relative command of the user's is not the one the workspace ships", func(t *testing.T) {
		noLeaks(t)
		home, project := testdir.Scratch(t)
		ran := filepath.Join(t.TempDir(), "ran")
		testdir.Write(t, filepath.Join(project, "bin", "server"), "#!/bin/sh\ntouch "+ran+"\n")
		require.NoError(t, os.Chmod(filepath.Join(project, "bin", "server"), 0o755))
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"mine": {"command": "./bin/server"}}}`)
		cfg, err := config.Load(project)
		require.ErrorContains(t, err, "outside a workspace that is not trusted", "the error says why")
		assert.Equal(t, home, cfg.Servers["mine"].WorkDir)
		m := newManager(t, cfg, nil)
		m.Connect(ctxTimeout(t, 10*time.Second))
		assert.Equal(t, mcp.StateFailed, statusOf(m)["mine"].State)
		assert.NoFileExists(t, ran)
	})
	t.Run("a home inside the workspace is not used", func(t *testing.T) {
		_, project := testdir.Scratch(t)
		home := filepath.Join(project, "home")
		require.NoError(t, os.Mkdir(home, 0o755))
		t.Setenv("HOME", home)
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"mine": {"command": "x"}}}`)
		cfg, err := config.Load(project)
		require.NoError(t, err)
		assert.Equal(t, "/", cfg.Servers["mine"].WorkDir)
	})
}

// signer is an Authorizer that offers SignIn, and fails loudly if used.
type signer struct{}

func (signer) Authorize(context.Context, *http.Request) error { return nil }

func (signer) Challenged(context.Context, *http.Request, *http.Response) (bool, error) {
	return false, nil
}

func (signer) SignIn(ctx context.Context, browser func(context.Context, string) (*url.URL, error)) error {
	_, err := browser(ctx, "http://127.0.0.1:1/authorize")
	return err
}

func TestManagerCloseDoesNotWaitForAHangingHeadersHelper(t *testing.T) {
	noLeaks(t)
	marker := filepath.Join(t.TempDir(), "running")
	b, err := json.Marshal(map[string]any{"r": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": "touch " + marker + "; sleep 30"}})
	require.NoError(t, err)
	cfg, err := config.Parse(strings.NewReader(string(b)), "cfg.json")
	require.NoError(t, err)
	m := newManager(t, cfg, nil)
	started := make(chan error, 1)
	go func() { started <- m.Connect(context.Background()) }()
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, 10*time.Second, time.Millisecond, "the helper runs")
	begin := time.Now()
	require.NoError(t, m.Close())
	assert.Less(t, time.Since(begin), 5*time.Second, "Close kills the helper rather than wait out its 10 s")
	<-started
}

func TestStatusShowsAnEntrysWarnings(t *testing.T) {
	home, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["shared"], "mcpServers": {"shared": {"command": "user-version"}}}`)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"shared": {"command": "project-version"}}}`)
	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	m := newManager(t, cfg, nil)
	st := statusOf(m)["shared"]
	assert.Equal(t, config.ScopeProject, st.Scope)
	require.Len(t, st.Warnings, 1)
	assert.Contains(t, st.Warnings[0], "replaces the user server", "a project entry that replaces the user's server says so")
}
