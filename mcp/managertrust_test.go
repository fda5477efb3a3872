package mcp_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTrustWorkspaceHook(t *testing.T) {
	approvedLocally := func(t *testing.T) (project, ran string) {
		_, project, ran = projectWithServer(t)
		testdir.Write(t, filepath.Join(project, ".claude", "settings.local.json"), `{"enabledMcpjsonServers": ["proj"]}`)
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
	t.Run("a config the program built is not asked about, whatever its Workspace says", func(t *testing.T) {
		noLeaks(t)
		cfg := configOf(t, map[string]any{"mine": scenarioEntry("basic")})
		cfg.Workspace = &config.Workspace{Dir: t.TempDir(), Root: t.TempDir()}
		var asked atomic.Int32
		m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(context.Context, *config.Workspace) bool {
			asked.Add(1)
			return true
		}})
		require.NoError(t, m.Connect(ctxTimeout(t, 10*time.Second)))
		assert.Equal(t, int32(0), asked.Load(), "trust would change nothing in it")
		assert.Equal(t, mcp.StateConnected, statusOf(m)["mine"].State)
	})
	for _, answer := range []bool{true, false} {
		t.Run("asked once; its answer decides: "+map[bool]string{true: "trusted", false: "not trusted"}[answer], func(t *testing.T) {
			noLeaks(t)
			project, ran := approvedLocally(t)
			cfg, _ := mcp.LoadConfig(project)
			var asked atomic.Int32
			var gotRoot string
			m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(_ context.Context, ws *config.Workspace) bool {
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
		m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(context.Context, *config.Workspace) bool { return true }})
		require.NoError(t, m.Approve("proj"))
		m.Connect(ctxTimeout(t, 10*time.Second)) // touch is no MCP server: it fails, after it ran
		assert.FileExists(t, ran, "the server the program approved was started")
	})
	t.Run("a caller whose ctx ends while it is asked gets ctx's error, and it is asked again", func(t *testing.T) {
		noLeaks(t)
		project, _ := approvedLocally(t)
		cfg, _ := mcp.LoadConfig(project)
		var asked atomic.Int32
		m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(ctx context.Context, _ *config.Workspace) bool {
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

func TestProjectServersNeedApproval(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // path (home/…, project/…) → content
		want  config.Approval
	}{
		{"nothing decided", nil, config.ApprovalPending},
		{"the project's own shared settings cannot approve it", map[string]string{
			"project/.claude/settings.json": `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["proj"]}`}, config.ApprovalPending},
		{"enabledMcpjsonServers in the user's settings", map[string]string{
			"home/.claude/settings.json": `{"enabledMcpjsonServers": ["proj"]}`}, config.Approved},
		{"enableAllProjectMcpServers in the user's settings", map[string]string{
			"home/.claude/settings.json": `{"enableAllProjectMcpServers": true}`}, config.Approved},
		{"the project's local settings approve nothing in a workspace not trusted", map[string]string{
			"project/.claude/settings.local.json": `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["proj"]}`}, config.ApprovalPending},
		{"the project's local settings in a trusted workspace", map[string]string{
			"home/.claude.json":                   `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true}}}`,
			"project/.claude/settings.local.json": `{"enabledMcpjsonServers": ["proj"]}`}, config.Approved},
		{"the project's entry in ~/.claude.json approves nothing in a workspace not trusted", map[string]string{
			"home/.claude.json": `{"projects": {"PROJECT": {"enabledMcpjsonServers": ["proj"]}}}`}, config.ApprovalPending},
		{"the project's entry in ~/.claude.json in a trusted workspace", map[string]string{
			"home/.claude.json": `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["proj"]}}}`}, config.Approved},
		{"a trust flag the project ships counts for nothing", map[string]string{
			"project/.claude/settings.local.json": `{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["proj"]}`,
			"project/.claude/settings.json":       `{"hasTrustDialogAccepted": true}`,
			"project/.claude.json":                `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["proj"]}}}`}, config.ApprovalPending},
		{"a rejection wins", map[string]string{
			"home/.claude/settings.json":          `{"enableAllProjectMcpServers": true}`,
			"home/.claude.json":                   `{"projects": {"PROJECT": {"hasTrustDialogAccepted": true}}}`,
			"project/.claude/settings.local.json": `{"disabledMcpjsonServers": ["proj"]}`}, config.Rejected},
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
				testdir.Write(t, filepath.Join(base, rel), strings.ReplaceAll(content, "PROJECT", abs))
			}
			cfg, err := mcp.LoadConfig(project)
			require.NoError(t, err)
			sc := cfg.Servers["proj"]
			require.NotNil(t, sc)
			assert.Equal(t, config.ScopeProject, sc.Scope)
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
		assert.Equal(t, config.ScopeProject, st.Scope)
		assert.NoFileExists(t, ran)
	})
	t.Run("a rejected server is disabled", func(t *testing.T) {
		noLeaks(t)
		home, project, ran := projectWithServer(t)
		testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["proj"]}`)
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
		m := newManager(t, cfg, &mcp.ManagerOptions{ApproveServer: func(_ context.Context, sc *config.Server) bool {
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
		m := newManager(t, cfg, &mcp.ManagerOptions{ApproveServer: func(context.Context, *config.Server) bool { return false }})
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

// projectWithServer makes a home and a project whose .mcp.json has the
// server "proj", which would create the file ran if it were started.
func projectWithServer(t *testing.T) (home, project, ran string) {
	t.Helper()
	home, project = testdir.Scratch(t)
	ran = filepath.Join(t.TempDir(), "ran")
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"proj": {"command": "touch", "args": ["`+ran+`"]}}}`)
	return home, project, ran
}
