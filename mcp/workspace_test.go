package mcp_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scratch makes a home and a project folder (real paths) and points HOME
// at the home.
func scratch(t *testing.T) (home, project string) {
	t.Helper()
	home, _ = filepath.EvalSymlinks(t.TempDir())
	project, _ = filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	return home, project
}

func whereEntry() string {
	return `{"command": "` + os.Args[0] + `", "args": ["-test.run=^$"], "env": {"MCPTEST_SCENARIO": "where"}}`
}

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
			home, base := scratch(t)
			root := filepath.Join(base, "repo")
			sub := filepath.Join(root, "sub")
			require.NoError(t, os.MkdirAll(sub, 0o755))
			if tt.git {
				require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
			}
			key := map[string]string{"root": root, "sub": sub, "parent": base}[tt.key]
			writeFile(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+key+`": {"hasTrustDialogAccepted": true}}}`)
			dir := map[string]string{"root": root, "sub": sub}[tt.from]
			cfg, err := mcp.LoadConfig(dir)
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
		home, project := scratch(t)
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(project, link))
		writeFile(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+project+`": {"hasTrustDialogAccepted": true}}}`)
		cfg, err := mcp.LoadConfig(link)
		require.NoError(t, err)
		assert.Equal(t, project, cfg.Workspace.Dir)
		assert.True(t, cfg.Workspace.Trusted)
	})
}

func TestSaveTrust(t *testing.T) {
	t.Run("it marks the project root trusted and keeps the rest of ~/.claude.json", func(t *testing.T) {
		home, project := scratch(t)
		require.NoError(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
		sub := filepath.Join(project, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		writeFile(t, filepath.Join(home, ".claude.json"), `{"userID": "u", "numStartups": 12345678901234567890, "projects": {"`+project+`": {"allowedTools": ["x"]}}}`)
		cfg, _ := mcp.LoadConfig(sub)
		require.False(t, cfg.Workspace.Trusted)

		require.NoError(t, mcp.SaveTrust(sub))
		cfg, _ = mcp.LoadConfig(sub)
		assert.True(t, cfg.Workspace.Trusted)
		b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
		require.NoError(t, err)
		assert.JSONEq(t, `{"userID": "u", "numStartups": 12345678901234567890, "projects": {"`+project+`": {"allowedTools": ["x"], "hasTrustDialogAccepted": true}}}`, string(b))
		info, err := os.Stat(filepath.Join(home, ".claude.json"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm()&0o600)
	})
	t.Run("it never writes through a symlink", func(t *testing.T) {
		home, project := scratch(t)
		target := filepath.Join(t.TempDir(), "elsewhere.json")
		writeFile(t, target, `{}`)
		require.NoError(t, os.Symlink(target, filepath.Join(home, ".claude.json")))
		err := mcp.SaveTrust(project)
		require.ErrorIs(t, err, mcp.ErrNotRegularFile)
		b, _ := os.ReadFile(target)
		assert.Equal(t, `{}`, string(b))
	})
}

func TestProjectRootAsClaudeCodeFindsIt(t *testing.T) {
	home, base := scratch(t)
	root := filepath.Join(base, "repo")
	sub := filepath.Join(root, "sub", "deeper")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(sub, 0o755))
	writeFile(t, filepath.Join(base, ".mcp.json"), `{"mcpServers": {"above": {"command": "above"}, "shared": {"command": "from-above"}}}`)
	writeFile(t, filepath.Join(root, ".mcp.json"), `{"mcpServers": {"rooted": {"command": "rooted"}, "shared": {"command": "from-root"}}}`)
	writeFile(t, filepath.Join(sub, ".mcp.json"), `{"mcpServers": {"shared": {"command": "from-sub"}}}`)
	writeFile(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+root+`": {"mcpServers": {"mine": {"command": "local"}}}}}`)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)

	cfg, err := mcp.LoadConfig(sub)
	require.NoError(t, err)
	assert.Equal(t, []string{"above", "mine", "rooted", "shared"}, cfg.Names())
	assert.Equal(t, "from-sub", cfg.Servers["shared"].Command, "the nearer .mcp.json wins")
	assert.Equal(t, mcp.ScopeProject, cfg.Servers["above"].Scope, "parents' .mcp.json files are read, as Claude Code reads them")
	assert.Equal(t, mcp.ScopeLocal, cfg.Servers["mine"].Scope, "the local scope is keyed by the git root")
	assert.Equal(t, sub, cfg.Servers["shared"].ProjectDir)
	assert.Contains(t, mcp.ConfigFiles(sub), filepath.Join(base, ".mcp.json"))
}

func TestUnapprovedProjectEntryHidesNoUserServer(t *testing.T) {
	for _, decision := range []string{"pending", "rejected"} {
		t.Run("a "+decision+" project entry leaves the user's server running", func(t *testing.T) {
			noLeaks(t)
			home, project := scratch(t)
			ran := filepath.Join(t.TempDir(), "ran")
			writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"gh": `+whereEntry()+`}}`)
			writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"gh": {"command": "touch", "args": ["`+ran+`"]}}}`)
			if decision == "rejected" {
				writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["gh"]}`)
			}
			cfg, err := mcp.LoadConfig(project)
			require.NoError(t, err)
			require.Equal(t, mcp.ScopeUser, cfg.Servers["gh"].Scope)
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
		home, project := scratch(t)
		writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"gh": {"command": "user"}}}`)
		writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"gh": {"command": "project"}}}`)
		writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["gh"]}`)
		cfg, err := mcp.LoadConfig(project)
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
			home, project := scratch(t)
			claudeJSON := `{"mcpServers": {"mine": ` + whereEntry() + `}`
			if trusted {
				claudeJSON += `, "projects": {"` + project + `": {"hasTrustDialogAccepted": true}}`
			}
			writeFile(t, filepath.Join(home, ".claude.json"), claudeJSON+`}`)
			cfg, err := mcp.LoadConfig(project)
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
		home, project := scratch(t)
		ran := filepath.Join(t.TempDir(), "ran")
		writeFile(t, filepath.Join(project, "bin", "server"), "#!/bin/sh\ntouch "+ran+"\n")
		require.NoError(t, os.Chmod(filepath.Join(project, "bin", "server"), 0o755))
		writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"mine": {"command": "./bin/server"}}}`)
		cfg, err := mcp.LoadConfig(project)
		require.NoError(t, err)
		assert.Equal(t, home, cfg.Servers["mine"].WorkDir)
		m := newManager(t, cfg, nil)
		m.Connect(ctxTimeout(t, 10*time.Second))
		assert.Equal(t, mcp.StateFailed, statusOf(m)["mine"].State)
		assert.NoFileExists(t, ran)
	})
	t.Run("a home inside the workspace is not used", func(t *testing.T) {
		_, project := scratch(t)
		home := filepath.Join(project, "home")
		require.NoError(t, os.Mkdir(home, 0o755))
		t.Setenv("HOME", home)
		writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"mine": {"command": "x"}}}`)
		cfg, err := mcp.LoadConfig(project)
		require.NoError(t, err)
		assert.Equal(t, "/", cfg.Servers["mine"].WorkDir)
	})
}

func TestSaveApprovalNeverWritesThroughASymlink(t *testing.T) {
	t.Run("a settings.local.json that links elsewhere", func(t *testing.T) {
		home, project := scratch(t)
		userSettings := filepath.Join(home, ".claude", "settings.json")
		writeFile(t, userSettings, `{}`)
		require.NoError(t, os.MkdirAll(filepath.Join(project, ".claude"), 0o755))
		require.NoError(t, os.Symlink(userSettings, filepath.Join(project, ".claude", "settings.local.json")))
		err := mcp.SaveApproval(project, "evil", true)
		require.ErrorIs(t, err, mcp.ErrNotRegularFile)
		b, _ := os.ReadFile(userSettings)
		assert.Equal(t, `{}`, string(b), "the user's own settings are untouched")
	})
	t.Run("a .claude folder that links elsewhere", func(t *testing.T) {
		home, project := scratch(t)
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(home, ".claude"), filepath.Join(project, ".claude")))
		err := mcp.SaveApproval(project, "evil", true)
		require.ErrorIs(t, err, mcp.ErrNotRegularFile)
		assert.NoFileExists(t, filepath.Join(home, ".claude", "settings.local.json"))
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
