package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPermissionsShowsTheRulesAndWhatTheyHide(t *testing.T) {
	home, project := testdir.Scratch(t)
	servers, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"gh": map[string]any{
		"command": os.Args[0], "args": []string{"-test.run=^$"},
		"env": map[string]string{testproc.EnvScenario: "named", testproc.EnvTools: "get_issue,list_repos,delete_repo"}}}})
	require.NoError(t, err)
	testdir.Write(t, filepath.Join(home, ".claude.json"), string(servers))
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions": {"deny": ["mcp__gh__delete_*", "Bash(rm *)"], "ask": ["mcp__gh__list_repos"], "allow": ["mcp__gh", 3]}}`)
	testdir.Write(t, filepath.Join(project, ".claude", "settings.json"), `{"permissions": {"allow": ["mcp__gh__delete_repo"]}}`)

	var stdout, stderr bytes.Buffer
	code := run([]string{"-C", project, "-permissions"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	out := stdout.String()
	user := filepath.Join(home, ".claude", "settings.json")
	assert.Regexp(t, `allow\s+mcp__gh\s+user\s+`+user, out)
	assert.Regexp(t, `deny\s+mcp__gh__delete_\*\s+user\s+`+user+`\s*\n`, out)
	assert.Regexp(t, `deny\s+Bash\(rm \*\)\s+user\s+\S+\s+not an MCP tool's rule: it decides nothing here`, out)
	assert.Regexp(t, `ask\s+mcp__gh__list_repos\s+user`, out)
	assert.Regexp(t, `allow\s+mcp__gh__delete_repo\s+project\s+\S+\s+not in force: an allow rule of the workspace's own settings counts only once the workspace is trusted`, out)
	assert.Regexp(t, `mcp__gh__delete_repo\s+hidden\s+deny mcp__gh__delete_\* \(user\)`, out)
	assert.Regexp(t, `mcp__gh__list_repos\s+asks each call\s+ask mcp__gh__list_repos \(user\)`, out)
	assert.NotContains(t, out, "mcp__gh__get_issue", "a tool only an allow rule matches changes nothing")
	assert.Contains(t, stderr.String(), "a value that is not a string was left out")
	assert.Empty(t, testproc.LiveChildren())

	t.Run("without rules it says so", func(t *testing.T) {
		_, project := testdir.Scratch(t)
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"-C", project, "-permissions"}, &stdout, &stderr), stderr.String())
		assert.Contains(t, stdout.String(), "no permission rules")
	})
}
