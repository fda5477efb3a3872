package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// githubLike is a server with tools to read and tools to delete; calls
// counts the calls that reached it.
func githubLike(calls *atomic.Int32) *mcptest.Server {
	srv := &mcptest.Server{Name: "gh"}
	for _, name := range []string{"get_issue", "list_repos", "delete_issue", "delete_repo"} {
		srv.AddTool(mcp.Tool{Name: name, Description: name}, func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcptest.TextResult("ran " + name), nil
		})
	}
	return srv
}

func rules(t *testing.T, texts map[config.Behavior][]string) *config.Permissions {
	t.Helper()
	p := &config.Permissions{}
	for _, b := range []config.Behavior{config.Allow, config.Deny, config.Ask} {
		for _, text := range texts[b] {
			r, err := config.ParseRule(text, b)
			require.NoError(t, err)
			r.Scope, r.Source = config.ScopeUser, "settings.json"
			p.Rules = append(p.Rules, r)
		}
	}
	return p
}

func TestManagerDeniedToolIsNotOfferedAndItsCallIsRefused(t *testing.T) {
	noLeaks(t)
	var calls atomic.Int32
	cfg := &mcp.Config{Permissions: rules(t, map[config.Behavior][]string{config.Deny: {"mcp__gh__delete_*"}})}
	m := newManager(t, cfg, nil)
	require.NoError(t, m.Add("gh", githubLike(&calls).Transport()))
	ctx := context.Background()

	tools, err := m.Tools(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp__gh__get_issue", "mcp__gh__list_repos"}, toolNames(tools))

	_, err = m.CallTool(ctx, "mcp__gh__delete_repo", map[string]any{})
	require.ErrorIs(t, err, mcp.ErrPermissionDenied)
	var pe *mcp.PermissionError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "mcp__gh__delete_*", pe.Rule.Text)
	assert.Equal(t, config.Deny, pe.Rule.Behavior)
	assert.Equal(t, "gh", pe.Server)
	assert.False(t, errors.Is(err, mcp.ErrUnknownTool), "a denied tool is not an unknown one")
	assert.Contains(t, err.Error(), `"mcp__gh__delete_repo" is denied by the permission rule "mcp__gh__delete_*"`)

	_, err = m.StartToolTask(ctx, "mcp__gh__delete_issue", nil)
	require.ErrorIs(t, err, mcp.ErrPermissionDenied)
	_, err = m.CallAppTool(ctx, "gh", "delete_issue", nil)
	require.ErrorIs(t, err, mcp.ErrPermissionDenied, "a view cannot call it either")
	assert.Equal(t, int32(0), calls.Load(), "nothing reached the server")

	res, err := m.CallTool(ctx, "mcp__gh__get_issue", nil)
	require.NoError(t, err)
	assert.Equal(t, "ran get_issue", res.Content[0].Text)

	ruled := m.ToolPermissions()
	require.Len(t, ruled, 2)
	assert.Equal(t, mcp.ToolPermission{Name: "mcp__gh__delete_issue", Server: "gh", Tool: "delete_issue", Behavior: config.Deny, Rule: cfg.Permissions.Rules[0]}, ruled[0])
	assert.Equal(t, "mcp__gh__delete_repo", ruled[1].Name)
	assert.Same(t, cfg.Permissions, m.Permissions())
}

func TestManagerAskRule(t *testing.T) {
	cfg := &mcp.Config{Permissions: rules(t, map[config.Behavior][]string{
		config.Ask:   {"mcp__gh__list_repos"},
		config.Allow: {"mcp__gh"}, // ask wins over allow
	})}
	tests := []struct {
		name   string
		answer *bool // nil: no AskPermission
		ran    bool
		asked  bool
	}{
		{"without AskPermission the call is refused", nil, false, false},
		{"the host says yes", ptrTo(true), true, false},
		{"the host says no", ptrTo(false), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			var calls atomic.Int32
			var got []*mcp.PermissionRequest
			opts := &mcp.ManagerOptions{}
			if tt.answer != nil {
				opts.AskPermission = func(ctx context.Context, req *mcp.PermissionRequest) bool {
					got = append(got, req)
					return *tt.answer
				}
			}
			m := newManager(t, cfg, opts)
			require.NoError(t, m.Add("gh", githubLike(&calls).Transport()))
			ctx := context.Background()
			tools, err := m.Tools(ctx)
			require.NoError(t, err)
			assert.Contains(t, toolNames(tools), "mcp__gh__list_repos", "an ask rule hides nothing")
			ruled := m.ToolPermissions()
			require.Len(t, ruled, 4, "the allow rule matches the server's other tools")
			assert.Equal(t, mcp.ToolPermission{Name: "mcp__gh__list_repos", Server: "gh", Tool: "list_repos", Behavior: config.Ask, Rule: cfg.Permissions.Rules[1]}, ruled[3])
			assert.Equal(t, config.Allow, ruled[0].Behavior)

			args := json.RawMessage(`{"org":"x"}`)
			res, err := m.CallTool(ctx, "mcp__gh__list_repos", args)
			if tt.ran {
				require.NoError(t, err)
				assert.Equal(t, "ran list_repos", res.Content[0].Text)
				assert.Equal(t, int32(1), calls.Load())
			} else {
				require.ErrorIs(t, err, mcp.ErrPermissionDenied)
				var pe *mcp.PermissionError
				require.True(t, errors.As(err, &pe))
				assert.Equal(t, tt.asked, pe.Asked)
				assert.Equal(t, config.Ask, pe.Rule.Behavior)
				assert.Equal(t, int32(0), calls.Load())
				if tt.answer == nil {
					assert.Contains(t, err.Error(), "set ManagerOptions.AskPermission")
				}
			}
			if tt.answer != nil {
				require.Len(t, got, 1)
				assert.Equal(t, &mcp.PermissionRequest{Tool: "mcp__gh__list_repos", Server: "gh", ServerTool: "list_repos", Args: args, Rule: cfg.Permissions.Rules[1]}, got[0])
			}
			_, err = m.CallTool(ctx, "mcp__gh__get_issue", nil)
			require.NoError(t, err)
			if tt.answer != nil {
				assert.Len(t, got, 1, "a tool no ask rule matches is not asked about")
			}
		})
	}
	t.Run("a call whose ctx has ended is not asked about", func(t *testing.T) {
		noLeaks(t)
		var calls atomic.Int32
		asked := false
		m := newManager(t, cfg, &mcp.ManagerOptions{AskPermission: func(context.Context, *mcp.PermissionRequest) bool { asked = true; return true }})
		require.NoError(t, m.Add("gh", githubLike(&calls).Transport()))
		_, err := m.Tools(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = m.CallTool(ctx, "mcp__gh__list_repos", nil)
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, asked)
	})
}

func ptrTo[T any](v T) *T { return &v }

func TestManagerPermissionRulesFollowTheWorkspaceTrust(t *testing.T) {
	noLeaks(t)
	// A project's allow rule counts once trusted; its deny rule always.
	dir := permissionWorkspace(t, `{"permissions": {"deny": ["mcp__u__delete_*"], "allow": ["mcp__u"]}}`)
	cfg, err := config.Load(dir)
	require.NoError(t, err)
	require.False(t, cfg.Workspace.Trusted)
	m := newManager(t, cfg, &mcp.ManagerOptions{TrustWorkspace: func(context.Context, *config.Workspace) bool { return true }})
	_, err = m.Tools(context.Background())
	require.NoError(t, err)
	b, _ := m.Permissions().Decide("u", "get")
	assert.Equal(t, config.Allow, b, "trusted now: the project's allow rule is in force")
	b, _ = m.Permissions().Decide("u", "delete_x")
	assert.Equal(t, config.Deny, b)
}

// permissionWorkspace is a project, not trusted, whose .claude/settings.json
// is settings, in a home of its own.
func permissionWorkspace(t *testing.T, settings string) string {
	t.Helper()
	_, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(project, ".claude", "settings.json"), settings)
	return project
}

// A rule names a tool by its exposed name's parts: config.SanitizeName
// writes them as ExposedName does.
func TestRulesNameToolsAsTheyAreExposed(t *testing.T) {
	for _, tc := range [][2]string{{"gh", "get_issue"}, {"my.srv", "list"}, {"a b", "t/x"}, {"", ""}, {"é", "日本"}, {"a__b", "c"}} {
		assert.Equal(t, mcp.ExposedName(tc[0], tc[1]), "mcp__"+config.SanitizeName(tc[0])+"__"+config.SanitizeName(tc[1]), "%q %q", tc[0], tc[1])
	}
}
