package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

func TestConfigFilesMustBeRegularAndBounded(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		match error
	}{
		{"a symlink to /dev/zero", func(t *testing.T, path string) { require.NoError(t, os.Symlink("/dev/zero", path)) }, mcp.ErrNotRegularFile},
		{"a named pipe nobody writes", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o644)) }, mcp.ErrNotRegularFile},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) }, mcp.ErrNotRegularFile},
		{"a file over the bound", func(t *testing.T, path string) {
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(5<<20))
			require.NoError(t, f.Close())
		}, mcp.ErrFileTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an error of that file, and hides nothing else", func(t *testing.T) {
			home, project := scratch(t)
			writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"mine": {"command": "x"}}}`)
			tt.make(t, filepath.Join(project, ".mcp.json"))
			cfg, err := mcp.LoadConfig(project)
			require.ErrorIs(t, err, tt.match)
			require.Len(t, cfg.Errors, 1)
			assert.Equal(t, filepath.Join(project, ".mcp.json"), cfg.Errors[0].File)
			assert.Equal(t, []string{"mine"}, cfg.Names())
		})
	}
	t.Run("a symlink to a regular file is read", func(t *testing.T) {
		_, project := scratch(t)
		target := filepath.Join(t.TempDir(), "servers.json")
		writeFile(t, target, `{"mcpServers": {"linked": {"command": "x"}}}`)
		require.NoError(t, os.Symlink(target, filepath.Join(project, ".mcp.json")))
		cfg, err := mcp.LoadConfig(project)
		require.NoError(t, err)
		assert.Equal(t, []string{"linked"}, cfg.Names())
	})
	t.Run("LoadConfigFile has the same rules", func(t *testing.T) {
		_, err := mcp.LoadConfigFile("/dev/zero")
		assert.ErrorIs(t, err, mcp.ErrNotRegularFile)
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

func TestTrustWorkspaceHook(t *testing.T) {
	approvedLocally := func(t *testing.T) (project, ran string) {
		_, project, ran = projectWithServer(t)
		writeFile(t, filepath.Join(project, ".claude", "settings.local.json"), `{"enabledMcpjsonServers": ["proj"]}`)
		return project, ran
	}
	t.Run("untrusted, the workspace's own approval says why it does not count", func(t *testing.T) {
		noLeaks(t)
		project, ran := approvedLocally(t)
		cfg, _ := mcp.LoadConfig(project)
		m := newManager(t, cfg, nil)
		require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
		st := statusOf(m)["proj"]
		assert.Equal(t, mcp.StateNeedsApproval, st.State)
		assert.ErrorContains(t, st.Err, "once the workspace is trusted")
		assert.NoFileExists(t, ran)
	})
	for _, answer := range []bool{true, false} {
		t.Run("asked once; its answer decides: "+map[bool]string{true: "trusted", false: "not trusted"}[answer], func(t *testing.T) {
			noLeaks(t)
			project, ran := approvedLocally(t)
			cfg, _ := mcp.LoadConfig(project)
			var asked atomic.Int32
			var gotRoot string
			m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(_ context.Context, ws *mcp.Workspace) bool {
				asked.Add(1)
				gotRoot = ws.Root
				return answer
			}})
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() { defer wg.Done(); m.Connect(ctxTimeout(t, 10*time.Second)) }()
			}
			wg.Wait()
			assert.Equal(t, int32(1), asked.Load())
			assert.Equal(t, cfg.Workspace.Root, gotRoot)
			if answer {
				assert.FileExists(t, ran, "approved in the trusted workspace's settings, so started")
			} else {
				assert.NoFileExists(t, ran)
				assert.Equal(t, mcp.StateNeedsApproval, statusOf(m)["proj"].State)
			}
		})
	}
	t.Run("an approval given before the workspace was trusted stands", func(t *testing.T) {
		noLeaks(t)
		_, project, ran := projectWithServer(t) // approved nowhere
		cfg, _ := mcp.LoadConfig(project)
		m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(context.Context, *mcp.Workspace) bool { return true }})
		require.NoError(t, m.Approve("proj"))
		m.Connect(ctxTimeout(t, 10*time.Second)) // touch is no MCP server: it fails, after it ran
		assert.FileExists(t, ran, "the server the program approved was started")
	})
	t.Run("a caller whose ctx ends while it is asked gets ctx's error, and it is asked again", func(t *testing.T) {
		noLeaks(t)
		project, _ := approvedLocally(t)
		cfg, _ := mcp.LoadConfig(project)
		var asked atomic.Int32
		m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(ctx context.Context, _ *mcp.Workspace) bool {
			if asked.Add(1) == 1 {
				<-ctx.Done()
			}
			return false
		}})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, m.Connect(ctx), context.Canceled)
		require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
		assert.Equal(t, int32(2), asked.Load())
	})
}

func TestHeadersHelperBounds(t *testing.T) {
	remote := func(t *testing.T, helper string) *mcp.Config {
		b, err := json.Marshal(map[string]any{"r": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": helper}})
		require.NoError(t, err)
		cfg, err := mcp.ParseConfig(strings.NewReader(string(b)), "cfg.json")
		require.NoError(t, err)
		return cfg
	}
	t.Run("output past 64 KiB fails the server, and the helper is killed", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		_, err := remote(t, `echo $$ > `+pidFile+`; exec yes '"padding"'`).Servers["r"].Transport()
		require.ErrorIs(t, err, mcp.ErrHeadersHelper)
		assert.Contains(t, err.Error(), "more than 65536 bytes")
		b, rerr := os.ReadFile(pidFile)
		require.NoError(t, rerr)
		var pid int
		_, _ = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
		assert.True(t, gone(pid), "the helper's process is gone")
	})
	t.Run("Manager.Close does not wait for a helper that hangs", func(t *testing.T) {
		noLeaks(t)
		marker := filepath.Join(t.TempDir(), "running")
		m := newManager(t, remote(t, `touch `+marker+`; sleep 30`), nil)
		started := make(chan error, 1)
		go func() { started <- m.Connect(context.Background()) }()
		require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, 10*time.Second, time.Millisecond, "the helper runs")
		begin := time.Now()
		require.NoError(t, m.Close())
		assert.Less(t, time.Since(begin), 5*time.Second, "Close kills the helper rather than wait out its 10 s")
		<-started
	})
	t.Run("a project server's helper runs only in a trusted workspace", func(t *testing.T) {
		home, project := scratch(t)
		ran := filepath.Join(t.TempDir(), "ran")
		writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"r": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": "touch `+ran+`; echo {}"}}}`)
		writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
		cfg, err := mcp.LoadConfig(project)
		require.NoError(t, err)
		require.Equal(t, mcp.Approved, cfg.Servers["r"].Approval, "approved by the user, yet the workspace is not trusted")
		_, err = cfg.Servers["r"].Transport()
		require.ErrorIs(t, err, mcp.ErrHeadersHelper)
		assert.ErrorContains(t, err, "not trusted")
		assert.NoFileExists(t, ran)

		require.NoError(t, mcp.SaveTrust(project))
		cfg, err = mcp.LoadConfig(project)
		require.NoError(t, err)
		_, err = cfg.Servers["r"].Transport()
		require.NoError(t, err)
		assert.FileExists(t, ran)
	})
}

func TestNothingReachesAnUnapprovedServer(t *testing.T) {
	noLeaks(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	home, project := scratch(t)
	writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"pending": {"type": "http", "url": "`+srv.URL+`/mcp"}, "rejected": {"type": "http", "url": "`+srv.URL+`/mcp"}}}`)
	writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["rejected"]}`)
	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	var built atomic.Int32
	m := newManager(t, cfg, &mcp.ManagerOptions{Authorizer: func(string, *mcp.ServerConfig) mcp.Authorizer {
		built.Add(1)
		return signer{}
	}})
	require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
	m.Status()
	for _, name := range []string{"pending", "rejected"} {
		err := m.SignIn(ctxTimeout(t, 5*time.Second), name, func(context.Context, string) (*url.URL, error) {
			return nil, errors.New("the browser must not be opened")
		})
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), "browser must not", name)
	}
	assert.Zero(t, hits.Load(), "no request reached the server")
	assert.Zero(t, built.Load(), "no Authorizer was made for it")
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
