package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/claudecode"
	"github.com/mcplug/mcplug/internal/managedpath"
	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tools of the two servers the permission cases run, as Claude Code
// would expose them; "my.srv" is exposed as my_srv.
var permissionServers = map[string][]string{
	"gh":     {"get_issue", "list_repos", "delete_issue", "delete_repo", "Get_Thing"},
	"my.srv": {"get_issue", "list_repos"},
}

// TestPermissionRulesAgreeWithClaudeCode puts the same settings files
// before Claude Code (claude -p, against the Messages API mock, which
// records the tools each request offers) and before a Manager of
// config.Load, and compares the MCP tools each offers the model. The
// organisation's managed settings are not among them: Claude Code reads
// them from /etc/claude-code alone, which a test does not write.
func TestPermissionRulesAgreeWithClaudeCode(t *testing.T) {
	claude := claudeBinary(t)
	cases := []struct {
		name  string
		files map[string]string // "home/…", "root/…", "sub/…"
		from  string            // "root" (default) or "sub"
	}{
		{name: "a wildcard in the tool's part", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__gh__delete_*"]}}`}},
		{name: "an exact tool, and one in another case", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__gh__list_repos", "mcp__gh__get_thing"]}}`}},
		{name: "a whole server by its exposed name", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__my_srv"]}}`}},
		{name: "a server by its config name", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__my.srv", "mcp__my.srv__get_issue"]}}`}},
		{name: "a whole server with __*", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__gh__*"]}}`}},
		{name: "a wildcard in the server's part", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__*__get_issue"]}}`}},
		{name: "every MCP tool", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__*"]}}`}},
		{name: "a server's prefix with nothing after", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__gh__", "mcp__g"]}}`}},
		{name: "an invalid rule is skipped", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__gh__get_issue(x)", 7, ""]}}`}},
		{name: "ask and allow rules hide nothing", files: map[string]string{"home/.claude/settings.json": `{"permissions": {"ask": ["mcp__gh__delete_repo"], "allow": ["mcp__gh"]}}`}},
		{name: "the project's and local settings, from a sub-directory", from: "sub", files: map[string]string{
			"root/.claude/settings.json":       `{"permissions": {"deny": ["mcp__gh__get_issue"]}}`,
			"root/.claude/settings.local.json": `{"permissions": {"deny": ["mcp__gh__list_repos"]}}`,
			"sub/.claude/settings.json":        `{"permissions": {"deny": ["mcp__gh__delete_issue"]}}`,
			"sub/.claude/settings.local.json":  `{"permissions": {"deny": ["mcp__gh__delete_repo"]}}`}},
	}
	agree := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := layPermissions(t, tc.files, tc.from)
			theirs := claudeTools(t, claude, dir)
			ours := mcplugTools(t, dir)
			assert.Equal(t, theirs, ours, "Claude Code offers %v, mcplug %v", theirs, ours)
			if slices.Equal(theirs, ours) {
				agree++
			}
			t.Logf("%-55s %v", tc.name, ours)
		})
	}
	t.Logf("Claude Code %s and mcplug offer the same MCP tools in %d of %d permission cases", claudeCodeVersion, agree, len(cases))
}

// layPermissions writes the files into a new home and a git repository
// (root) and its sub-directory; the servers of permissionServers are the
// user's. mcplug reads no managed settings (an empty folder stands for
// /etc/claude-code). It returns the directory to run from.
func layPermissions(t *testing.T, files map[string]string, from string) string {
	t.Helper()
	home, base := testdir.Scratch(t)
	root := filepath.Join(base, "repo")
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	out, err := exec.Command("git", "init", "-q", root).CombinedOutput()
	require.NoError(t, err, "git init: %s", out)
	old := managedpath.Dir
	managedpath.Dir = filepath.Join(base, "managed")
	t.Cleanup(func() { managedpath.Dir = old })
	servers := map[string]any{}
	for name, tools := range permissionServers {
		servers[name] = map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{
			testproc.EnvScenario: "named", testproc.EnvTools: strings.Join(tools, ","), testproc.EnvInstructions: "Instructions of " + name + "."}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	testdir.Write(t, filepath.Join(home, ".claude.json"), string(b))
	for path, content := range files {
		where, rel, _ := strings.Cut(path, "/")
		d := map[string]string{"home": home, "root": root, "sub": sub}[where]
		testdir.Write(t, filepath.Join(d, rel), content)
	}
	if from == "sub" {
		return sub
	}
	return root
}

// claudeTools runs claude -p in dir against the Messages API mock and
// returns the MCP tools of its last request, sorted. It fails the test
// unless every server's instructions reached the model, in Claude Code's
// section of them: then every server was connected when it asked.
func claudeTools(t *testing.T, claude, dir string) []string {
	t.Helper()
	requests := claudecode.Print(t, claude, dir, "ENABLE_TOOL_SEARCH=false")
	last := requests[len(requests)-1]
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(last, &req))
	names := []string{}
	for _, tl := range req.Tools {
		if strings.HasPrefix(tl.Name, "mcp__") {
			names = append(names, tl.Name)
		}
	}
	for name := range permissionServers {
		assert.Contains(t, string(last), fmt.Sprintf(`## %s\nInstructions of %s.`, name, name), "the server %s was connected", name)
	}
	slices.Sort(names)
	return names
}

// mcplugTools is the MCP tools a Manager of config.Load(dir) offers,
// sorted.
func mcplugTools(t *testing.T, dir string) []string {
	t.Helper()
	cfg, _ := mcp.LoadConfig(dir)
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: quiet, ConnectTimeout: 30 * time.Second, ShutdownTimeout: time.Second})
	defer m.Close()
	tools, err := m.Tools(context.Background())
	require.NoError(t, err)
	names := toolNames(tools)
	if names == nil {
		names = []string{}
	}
	slices.Sort(names)
	return names
}
