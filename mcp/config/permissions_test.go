package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRuleAsClaudeCodeChecksIt(t *testing.T) {
	tests := []struct {
		rule     string
		behavior config.Behavior
		err      string // "" when Claude Code takes the rule
	}{
		{"mcp__github", config.Allow, ""},
		{"mcp__github__*", config.Allow, ""},
		{"mcp__github__get_issue", config.Deny, ""},
		{"mcp__github__get_*", config.Allow, ""},
		{"mcp__*", config.Deny, ""},
		{"mcp__g*__get_issue", config.Ask, ""},
		{"*", config.Deny, ""},
		{"Bash(git status)", config.Allow, ""},
		{"Read", config.Allow, ""},
		{"Bash(*)", config.Allow, ""},
		{"", config.Deny, "cannot be empty"},
		{"   ", config.Deny, "cannot be empty"},
		{"mcp__github__get_issue(x)", config.Deny, "MCP rules do not support patterns in parentheses"},
		{"mcp__*", config.Allow, "wildcard is not supported in an allow rule's server"},
		{"mcp__git*__get_issue", config.Allow, "wildcard is not supported in an allow rule's server"},
		{"*", config.Allow, "wildcard tool name is not supported in allow rules"},
		{"Bash(git", config.Deny, "malformed"},
		{"Bash()", config.Deny, "empty parentheses"},
		{"()", config.Deny, "empty parentheses with no tool name"},
		{"bash", config.Deny, "uppercase"},
		{strings.Repeat("A", 5000), config.Deny, "at most 4096 bytes"},
		{"mcp__x", "maybe", "is not allow, deny or ask"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %q", tt.behavior, tt.rule[:min(len(tt.rule), 40)]), func(t *testing.T) {
			r, err := config.ParseRule(tt.rule, tt.behavior)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.rule, r.Text)
				assert.Equal(t, tt.behavior, r.Behavior)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.True(t, strings.HasPrefix(err.Error(), "config: "), err.Error())
		})
	}
}

func TestRuleMatches(t *testing.T) {
	tests := []struct {
		rule, server, tool string
		want               bool
	}{
		{"mcp__gh", "gh", "get_issue", true},
		{"mcp__gh__*", "gh", "get_issue", true},
		{"mcp__gh__get_issue", "gh", "get_issue", true},
		{"mcp__gh__get_issue", "gh", "get_issues", false},
		{"mcp__gh__delete_*", "gh", "delete_repo", true},
		{"mcp__gh__delete_*", "gh", "get_issue", false},
		{"mcp__gh__*_issue", "gh", "delete_issue", true},
		{"mcp__g*__get_issue", "gh", "get_issue", true},
		{"mcp__g*__get_issue", "other", "get_issue", false},
		{"mcp__*", "anything", "at_all", true},
		{"*", "anything", "at_all", true},
		{"mcp__gh*", "gh", "x", true},
		{"mcp__gh*", "ghost", "x", true},
		{"mcp__gh*", "git", "x", false},
		{"mcp__gh", "ghost", "x", false},
		{"mcp__gh__", "gh", "x", false},
		{"mcp__Gh", "gh", "x", false},
		{"mcp__gh__Get_thing", "gh", "Get_Thing", false},
		{"mcp__my_srv__list", "my.srv", "list", true},
		{"mcp__my.srv__list", "my.srv", "list", false},
		{"mcp__a__b", "a__b", "t", true},
		{"mcp__a__b__*", "a__b", "t", true},
		{"mcp__a__b", "a", "b", true},
		{"mcp__srv__t_x", "srv", "t.x", true},
		{"Bash(git *)", "gh", "x", false},
		{"Read", "gh", "x", false},
		{"mcp__*__delete_*", "gh", "delete_repo", true},
		{"mcp__*__delete_*", "gh", "undelete_repo", false},
		{"mcp__**", "gh", "x", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s on %s's %s", tt.rule, tt.server, tt.tool), func(t *testing.T) {
			r := config.Rule{Text: tt.rule, Behavior: config.Deny}
			assert.Equal(t, tt.want, r.Matches(tt.server, tt.tool))
			p := &config.Permissions{Rules: []config.Rule{r}}
			b, by := p.Decide(tt.server, tt.tool)
			if tt.want {
				assert.Equal(t, config.Deny, b)
				require.NotNil(t, by)
				assert.Equal(t, tt.rule, by.Text)
			} else {
				assert.Equal(t, config.Behavior(""), b)
				assert.Nil(t, by)
			}
		})
	}
}

func TestDecideDenyOverAskOverAllow(t *testing.T) {
	rule := func(text string, b config.Behavior) config.Rule { return config.Rule{Text: text, Behavior: b} }
	tests := []struct {
		name  string
		rules []config.Rule
		want  config.Behavior
		by    string
	}{
		{"no rule", nil, "", ""},
		{"an allow rule", []config.Rule{rule("mcp__gh", config.Allow)}, config.Allow, "mcp__gh"},
		{"an ask rule over an allow rule of the same tool", []config.Rule{rule("mcp__gh__t", config.Allow), rule("mcp__gh", config.Ask)}, config.Ask, "mcp__gh"},
		{"a deny rule over an ask rule", []config.Rule{rule("mcp__gh__t", config.Ask), rule("mcp__*", config.Deny)}, config.Deny, "mcp__*"},
		{"a rule not in force decides nothing", []config.Rule{{Text: "mcp__gh", Behavior: config.Deny, Ignored: "not trusted"}, rule("mcp__gh", config.Ask)}, config.Ask, "mcp__gh"},
		{"the first of two deny rules", []config.Rule{rule("mcp__gh__*", config.Deny), rule("mcp__gh__t", config.Deny)}, config.Deny, "mcp__gh__t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &config.Permissions{Rules: tt.rules}
			b, by := p.Decide("gh", "t")
			assert.Equal(t, tt.want, b)
			if tt.by == "" {
				assert.Nil(t, by)
			} else {
				require.NotNil(t, by)
				assert.Equal(t, tt.by, by.Text)
			}
		})
	}
	t.Run("a nil Permissions decides nothing", func(t *testing.T) {
		var p *config.Permissions
		b, by := p.Decide("gh", "t")
		assert.Equal(t, config.Behavior(""), b)
		assert.Nil(t, by)
		assert.Nil(t, p.InForce())
	})
}

// permissionFiles lays out a home, a git repository and its sub-directory
// sub, and a managed settings folder; files maps "home/…", "root/…",
// "sub/…", "managed/…" to contents. It returns sub's path.
func permissionFiles(t *testing.T, files map[string]string) (sub string) {
	t.Helper()
	home, base := testdir.Scratch(t)
	root := filepath.Join(base, "repo")
	sub = filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(sub, 0o755))
	managed := filepath.Join(base, "managed")
	config.SetManagedDir(t, managed)
	for path, content := range files {
		where, rel, _ := strings.Cut(path, "/")
		dir := map[string]string{"home": home, "root": root, "sub": sub, "managed": managed}[where]
		testdir.Write(t, filepath.Join(dir, rel), strings.ReplaceAll(content, "ROOT", root))
	}
	return sub
}

func inForce(p *config.Permissions) []string {
	var out []string
	for _, r := range p.InForce() {
		out = append(out, fmt.Sprintf("%s %s %s", r.Scope, r.Behavior, r.Text))
	}
	return out
}

func TestLoadReadsThePermissionRulesOfEverySettingsFile(t *testing.T) {
	every := map[string]string{
		"managed/managed-settings.json":           `{"permissions": {"deny": ["mcp__m__a"]}}`,
		"managed/managed-settings.d/10-more.json": `{"permissions": {"ask": ["mcp__m__b"]}}`,
		"home/.claude/settings.json":              `{"permissions": {"allow": ["mcp__u"], "deny": ["mcp__u__c"]}}`,
		"sub/.claude/settings.json":               `{"permissions": {"allow": ["mcp__p"], "deny": ["mcp__p__d"]}}`,
		"root/.claude/settings.json":              `{"permissions": {"deny": ["mcp__never_read"]}}`,
		"root/.claude/settings.local.json":        `{"permissions": {"allow": ["mcp__l"], "ask": ["mcp__l__e"]}}`,
		"sub/.claude/settings.local.json":         `{"permissions": {"deny": ["mcp__l__f"]}}`,
	}
	trusted := map[string]string{"home/.claude.json": `{"projects": {"ROOT": {"hasTrustDialogAccepted": true}}}`}
	with := func(files ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, f := range files {
			for k, v := range f {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"in a trusted workspace, every file's rules, the organisation's first", with(every, trusted), []string{
			"managed deny mcp__m__a", "managed ask mcp__m__b",
			"user allow mcp__u", "user deny mcp__u__c",
			"project allow mcp__p", "project deny mcp__p__d",
			"local allow mcp__l", "local ask mcp__l__e", "local deny mcp__l__f"}},
		{"in a workspace that is not trusted, its own allow rules do not count", every, []string{
			"managed deny mcp__m__a", "managed ask mcp__m__b",
			"user allow mcp__u", "user deny mcp__u__c",
			"project deny mcp__p__d",
			"local ask mcp__l__e", "local deny mcp__l__f"}},
		{"allowManagedPermissionRulesOnly keeps the organisation's alone", with(every, trusted, map[string]string{
			"managed/managed-settings.json": `{"allowManagedPermissionRulesOnly": true, "permissions": {"deny": ["mcp__m__a"]}}`}), []string{
			"managed deny mcp__m__a", "managed ask mcp__m__b"}},
		{"no rules anywhere", map[string]string{"home/.claude/settings.json": `{"theme": "dark"}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := permissionFiles(t, tt.files)
			cfg, err := config.Load(dir)
			require.NoError(t, err)
			assert.Equal(t, tt.want, inForce(cfg.Permissions))
			if tt.want == nil {
				assert.Nil(t, cfg.Permissions, "no rules, no Permissions")
				return
			}
			for _, r := range cfg.Permissions.Rules {
				assert.NotContains(t, r.Text, "never_read", "the git root's .claude/settings.json is not the project's settings of a sub-directory")
				if r.Ignored != "" {
					assert.NotContains(t, tt.want, fmt.Sprintf("%s %s %s", r.Scope, r.Behavior, r.Text))
				}
			}
		})
	}
	t.Run("trusting the workspace puts its allow rules in force", func(t *testing.T) {
		dir := permissionFiles(t, every)
		cfg, err := config.Load(dir)
		require.NoError(t, err)
		b, _ := cfg.Permissions.Decide("p", "x")
		assert.Equal(t, config.Behavior(""), b)
		b, _ = cfg.Trusted().Permissions.Decide("p", "x")
		assert.Equal(t, config.Allow, b)
	})
}

func TestLoadLeavesOutWhatClaudeCodeLeavesOut(t *testing.T) {
	dir := permissionFiles(t, map[string]string{
		"home/.claude/settings.json": `{"permissions": {"deny": ["mcp__a", 42, "", "mcp__b__c(x)", "mcp__d"], "allow": ["mcp__*"], "ask": "mcp__e"}}`,
		"sub/.claude/settings.json":  `{"Permissions": {"deny": ["mcp__f"]}}`,
	})
	cfg, err := config.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"user deny mcp__a", "user deny mcp__d"}, inForce(cfg.Permissions))
	warnings := strings.Join(cfg.Permissions.Warnings, "\n")
	for _, want := range []string{"not a string", "cannot be empty", "patterns in parentheses", "allow rule's server", "permissions.ask is not an array", `"Permissions" (the key is "permissions"`} {
		assert.Contains(t, warnings, want)
	}
	assert.Subset(t, cfg.Warnings, cfg.Permissions.Warnings, "the config's warnings name them too")
}

func TestLoadBoundsTheRulesOfAFile(t *testing.T) {
	list := func(n int, format string) string {
		rules := make([]string, n)
		for i := range rules {
			rules[i] = fmt.Sprintf("%q", fmt.Sprintf(format, i))
		}
		return strings.Join(rules, ",")
	}
	t.Run("an allow list past the bound is cut: that only narrows", func(t *testing.T) {
		dir := permissionFiles(t, map[string]string{
			"home/.claude/settings.json": `{"permissions": {"allow": [` + list(10_001, "mcp__s__t%d") + `]}}`,
		})
		cfg, err := config.Load(dir)
		require.NoError(t, err)
		assert.Len(t, cfg.Permissions.Rules, 10_000)
		assert.Contains(t, strings.Join(cfg.Permissions.Warnings, "\n"), "only the first 10000 are read")
		b, _ := cfg.Permissions.Decide("s", "t9999")
		assert.Equal(t, config.Allow, b)
		b, _ = cfg.Permissions.Decide("s", "t10000")
		assert.Equal(t, config.Behavior(""), b)
	})
	for _, behavior := range []config.Behavior{config.Deny, config.Ask} {
		t.Run("a "+string(behavior)+" list past the bound covers every MCP tool: its tail is never let through", func(t *testing.T) {
			dir := permissionFiles(t, map[string]string{
				"home/.claude/settings.json": `{"permissions": {"allow": ["mcp__other"], "` + string(behavior) + `": [` + list(10_001, "mcp__s__t%d") + `, "Bash(rm *)"]}}`,
			})
			cfg, err := config.Load(dir)
			require.NoError(t, err)
			assert.Len(t, cfg.Permissions.Rules, 3, "the allow rule, the Bash rule and one rule for every MCP tool")
			assert.Contains(t, strings.Join(cfg.Permissions.Warnings, "\n"), `read as "mcp__*", every MCP tool`)
			for _, tool := range []string{"t0", "t10000"} {
				b, _ := cfg.Permissions.Decide("s", tool)
				assert.Equal(t, behavior, b, tool)
			}
			b, _ := cfg.Permissions.Decide("other", "x")
			if behavior == config.Deny {
				assert.Equal(t, config.Deny, b, "a deny rule wins over an allow rule")
			} else {
				assert.Equal(t, config.Ask, b, "an ask rule wins over an allow rule")
			}
		})
	}
	t.Run("rules that decide nothing for MCP tools are bounded apart", func(t *testing.T) {
		dir := permissionFiles(t, map[string]string{
			"home/.claude/settings.json": `{"permissions": {"deny": [` + list(10_001, "Bash(rm %d)") + `, "mcp__s__x"]}}`,
		})
		cfg, err := config.Load(dir)
		require.NoError(t, err)
		assert.Len(t, cfg.Permissions.Rules, 10_001, "10,000 of Claude Code's own, and the MCP rule")
		b, _ := cfg.Permissions.Decide("s", "x")
		assert.Equal(t, config.Deny, b)
		b, _ = cfg.Permissions.Decide("s", "y")
		assert.Equal(t, config.Behavior(""), b, "Bash rules do not grow into a rule for every MCP tool")
	})
}

func TestRulesOfClaudeCodesOwnToolsDecideNothingForMCP(t *testing.T) {
	for _, text := range []string{"Bash(rm *)", "Read", "Bash(*)", "WebFetch(domain:*)"} {
		t.Run(text, func(t *testing.T) {
			r := config.Rule{Text: text, Behavior: config.Deny}
			assert.False(t, r.MayMatchMCP())
			assert.False(t, r.Matches("gh", "x"))
			b, _ := (&config.Permissions{Rules: []config.Rule{r}}).Decide("gh", "x")
			assert.Equal(t, config.Behavior(""), b)
		})
	}
	assert.True(t, config.Rule{Text: "*", Behavior: config.Deny}.MayMatchMCP())
	assert.True(t, config.Rule{Text: "mcp__gh", Behavior: config.Allow}.MayMatchMCP())
}

func TestAManagedDropInThatCannotBeReadIsAnError(t *testing.T) {
	dir := permissionFiles(t, map[string]string{
		"managed/managed-settings.d/20-ok.json":    `{"permissions": {"deny": ["mcp__m"]}}`,
		"managed/managed-settings.d/10-dir.json/x": `{}`, // 10-dir.json is a folder
	})
	cfg, err := config.Load(dir)
	require.Error(t, err)
	assert.ErrorIs(t, err, config.ErrNotRegularFile)
	assert.Contains(t, err.Error(), "10-dir.json")
	assert.Equal(t, []string{"managed deny mcp__m"}, inForce(cfg.Permissions), "the other drop-ins still count")
}
