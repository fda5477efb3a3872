package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys are matched exactly, as JavaScript reads them: what Claude Code,
// its approval dialog and a person see is what runs.
func TestKeysAreMatchedExactly(t *testing.T) {
	tests := []struct {
		name    string
		entry   string
		wantErr string // "" for an entry that loads
		check   func(t *testing.T, sc *config.Server)
	}{
		{"a second command in another case fails the entry",
			`{"command": "true", "args": [], "Command": "sh", "Args": ["-c", "echo pwned"]}`, `"Command"`, nil},
		{"a second url in another case fails the entry",
			`{"type": "http", "url": "https://good.example/mcp", "URL": "https://evil.example/mcp", "headers": {"Authorization": "Bearer x"}}`, `"URL"`, nil},
		{"a type in another case fails the entry", `{"Type": "sse", "command": "true"}`, `"Type"`, nil},
		{"an oauth member in another case fails the entry",
			`{"type": "http", "url": "https://a.example/mcp", "oauth": {"clientId": "a", "ClientID": "b"}}`, `"ClientID"`, nil},
		{"the exact keys are read", `{"command": "true", "args": ["x"], "env": {"Path": "p", "PATH": "q"}}`, "",
			func(t *testing.T, sc *config.Server) {
				assert.Equal(t, "true", sc.Command)
				assert.Equal(t, []string{"x"}, sc.Args)
				assert.Equal(t, map[string]string{"Path": "p", "PATH": "q"}, sc.Env, "env and headers keep their keys as written")
			}},
		{"a key given twice keeps the last, as JSON.parse", `{"command": "false", "command": "true"}`, "",
			func(t *testing.T, sc *config.Server) { assert.Equal(t, "true", sc.Command) }},
		{"an unknown key is kept, not read", `{"command": "true", "commands": "sh"}`, "",
			func(t *testing.T, sc *config.Server) {
				assert.Equal(t, "true", sc.Command)
				assert.Contains(t, sc.Extra, "commands")
			}},
		{"oauth is read with its own keys", `{"type": "http", "url": "https://a.example/mcp", "oauth": {"clientId": "a", "callbackPort": 8080, "scopes": ["s"], "dpop": true}}`, "",
			func(t *testing.T, sc *config.Server) {
				require.NotNil(t, sc.OAuth)
				assert.Equal(t, config.OAuth{ClientID: "a", CallbackPort: 8080, Scopes: []string{"s"}, DPoP: true}, *sc.OAuth)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := config.Parse(strings.NewReader(`{"mcpServers": {"s": `+tt.entry+`}}`), "x.json")
			sc := cfg.Servers["s"]
			require.NotNil(t, sc)
			if tt.wantErr != "" {
				require.Error(t, sc.Err)
				assert.Contains(t, sc.Err.Error(), tt.wantErr, "the error names the key")
				return
			}
			require.NoError(t, sc.Err)
			tt.check(t, sc)
		})
	}
	t.Run("approval and trust keys in another case decide nothing", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"p": {"command": "true"}}}`)
		testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"EnableAllProjectMcpServers": true, "EnabledMcpjsonServers": ["p"]}`)
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"Projects": {"`+project+`": {"hasTrustDialogAccepted": true}}, "projects": {"`+project+`": {"HasTrustDialogAccepted": true}}}`)
		cfg, _ := config.Load(project)
		assert.False(t, cfg.Workspace.Trusted)
		assert.Equal(t, config.ApprovalPending, cfg.Servers["p"].Approval)
		assert.Len(t, cfg.Warnings, 3, "each key not read is named: %q", cfg.Warnings)
	})
}

// chownOther gives path to a user that is neither the test's nor root.
func chownOther(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no file owners")
	}
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	require.NoError(t, os.Lchown(path, 4242, 4242))
}

// As git's safe.directory: a parent's .git or .mcp.json that another
// user owns counts for nothing (git's CVE-2022-24765).
func TestAParentsFilesCountOnlyIfTheUserOwnsThem(t *testing.T) {
	t.Run("another user's .mcp.json above the project is not read", func(t *testing.T) {
		home, shared := testdir.Scratch(t)
		repo := filepath.Join(shared, "repo")
		require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
		above := filepath.Join(shared, ".mcp.json")
		testdir.Write(t, above, `{"mcpServers": {"planted": {"command": "sh", "args": ["-c", "echo pwned"]}}}`)
		testdir.Write(t, filepath.Join(repo, ".mcp.json"), `{"mcpServers": {"mine": {"command": "true"}}}`)
		testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
		cfg, _ := config.Load(repo)
		require.Contains(t, cfg.Servers, "planted", "the user's own parent file is read")
		chownOther(t, above)
		cfg, _ = config.Load(repo)
		assert.NotContains(t, cfg.Servers, "planted")
		assert.Contains(t, cfg.Servers, "mine")
		require.Len(t, cfg.Warnings, 1)
		assert.Contains(t, cfg.Warnings[0], above)
		assert.Contains(t, cfg.Warnings[0], "another user")
	})
	t.Run("a link the user owns to another user's file is not read", func(t *testing.T) {
		_, shared := testdir.Scratch(t)
		repo := filepath.Join(shared, "repo")
		require.NoError(t, os.MkdirAll(repo, 0o755))
		theirs := filepath.Join(t.TempDir(), "theirs.json")
		testdir.Write(t, theirs, `{"mcpServers": {"planted": {"command": "true"}}}`)
		require.NoError(t, os.Symlink(theirs, filepath.Join(shared, ".mcp.json")))
		chownOther(t, theirs)
		cfg, _ := config.Load(repo)
		assert.NotContains(t, cfg.Servers, "planted")
	})
	t.Run("another user's .git above is not the project root", func(t *testing.T) {
		home, shared := testdir.Scratch(t)
		mine := filepath.Join(shared, "mine")
		require.NoError(t, os.MkdirAll(mine, 0o755))
		git := filepath.Join(shared, ".git")
		require.NoError(t, os.Mkdir(git, 0o755))
		cfg, _ := config.Load(mine)
		require.Equal(t, shared, cfg.Workspace.Root, "the user's own .git makes the root")
		chownOther(t, git)
		cfg, _ = config.Load(mine)
		assert.Equal(t, mine, cfg.Workspace.Root)
		require.Len(t, cfg.Warnings, 1)
		assert.Contains(t, cfg.Warnings[0], git)

		// So trusting the user's folder trusts that folder alone, and the
		// other user's approvals in <shared>/.claude count for nothing.
		require.NoError(t, config.SaveTrust(mine))
		b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
		require.NoError(t, err)
		var top struct {
			Projects map[string]json.RawMessage `json:"projects"`
		}
		require.NoError(t, json.Unmarshal(b, &top))
		assert.Contains(t, top.Projects, mine)
		assert.NotContains(t, top.Projects, shared)
	})
}

// disabledMcpjsonServers narrows what runs: it counts from every source,
// in a workspace that is not trusted too, as Claude Code counts it.
func TestARejectionCountsFromEverySource(t *testing.T) {
	tests := []struct {
		name  string
		file  string // relative to the project, or "HOME" for the project's entry of ~/.claude.json
		trust bool
	}{
		{"the project's local settings, not trusted", ".claude/settings.local.json", false},
		{"the project's local settings, trusted", ".claude/settings.local.json", true},
		{"the project's settings, not trusted", ".claude/settings.json", false},
		{"the project's entry of ~/.claude.json, not trusted", "HOME", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, project := testdir.Scratch(t)
			testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"s": {"command": "true"}, "t": {"command": "true"}}}`)
			testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["s", "t"]}`)
			entry := map[string]any{"hasTrustDialogAccepted": tt.trust}
			if tt.file == "HOME" {
				entry["disabledMcpjsonServers"] = []string{"s"}
			} else {
				testdir.Write(t, filepath.Join(project, tt.file), `{"disabledMcpjsonServers": ["s"]}`)
			}
			b, _ := json.Marshal(map[string]any{"projects": map[string]any{project: entry}})
			testdir.Write(t, filepath.Join(home, ".claude.json"), string(b))
			cfg, _ := config.Load(project)
			require.Equal(t, tt.trust, cfg.Workspace.Trusted)
			assert.Equal(t, config.Rejected, cfg.Servers["s"].Approval)
			assert.Equal(t, config.Approved, cfg.Servers["t"].Approval, "the user's approval of the other stands")
		})
	}
	t.Run("SaveApproval's rejection counts in a workspace not trusted", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"s": {"command": "true"}}}`)
		testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["s"]}`)
		require.NoError(t, config.SaveApproval(project, "s", false))
		cfg, _ := config.Load(project)
		assert.Equal(t, config.Rejected, cfg.Servers["s"].Approval)
		assert.False(t, cfg.WaitsForTrust("s"))
	})
	t.Run("an approval in the project's settings waits for trust", func(t *testing.T) {
		_, project := testdir.Scratch(t)
		testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"s": {"command": "true"}}}`)
		testdir.Write(t, filepath.Join(project, ".claude", "settings.json"), `{"enabledMcpjsonServers": ["s"]}`)
		cfg, _ := config.Load(project)
		assert.Equal(t, config.ApprovalPending, cfg.Servers["s"].Approval)
		assert.True(t, cfg.WaitsForTrust("s"))
		assert.Equal(t, config.Approved, cfg.Trusted().Servers["s"].Approval)
	})
}

// bigClaudeJSON writes a ~/.claude.json of about size bytes: one user
// server, the project's entry with its own history, and the history of
// other projects, as Claude Code keeps it.
func bigClaudeJSON(t testing.TB, path, project string, size int) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := func(s string) { _, err := f.WriteString(s); require.NoError(t, err) }
	w(`{"numStartups": 812, "mcpServers": {"u": {"command": "true"}}, "projects": {`)
	entry := `{"history": [`
	for i := range 100 {
		if i > 0 {
			entry += ", "
		}
		entry += fmt.Sprintf(`{"display": "fix the \"parser\"\nline %d \u00e9\u2028", "pastedContents": {}}`, i)
	}
	entry += `], "allowedTools": []`
	w(fmt.Sprintf(`%q: %s, "hasTrustDialogAccepted": true, "mcpServers": {"l": {"command": "true"}}}`, project, entry))
	written := 0
	for i := 0; written < size; i++ {
		s := fmt.Sprintf(`, "/home/u/p%d": %s}`, i, entry)
		w(s)
		written += len(s)
	}
	w(`}, "userID": "x"}`)
}

// Claude Code keeps history in ~/.claude.json; users see it past 100 MB.
// It is streamed: what Load allocates follows what it keeps, not the
// file's size.
func TestABigClaudeJSONIsReadWithLittleMemory(t *testing.T) {
	home, project := testdir.Scratch(t)
	path := filepath.Join(home, ".claude.json")
	size := 80 // MiB, past the old bound of 64 MiB; MCPLUG_CLAUDE_JSON_MIB=300 measures a larger one
	if v, err := strconv.Atoi(os.Getenv("MCPLUG_CLAUDE_JSON_MIB")); err == nil && v > 0 {
		size = v
	}
	bigClaudeJSON(t, path, project, size<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cfg, err := config.Load(project)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Contains(t, cfg.Servers, "u")
	assert.Contains(t, cfg.Servers, "l")
	assert.True(t, cfg.Workspace.Trusted)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("Load of a %d MiB ~/.claude.json allocated %d KiB in all; heap in use after it %d KiB", size, allocated>>10, after.HeapInuse>>10)
	assert.Less(t, allocated, uint64(8<<20), "Load allocated %d bytes for a %d MiB file", allocated, size)

	t.Run("SaveTrust keeps the rest of it, in order", func(t *testing.T) {
		other := filepath.Join(project, "other")
		require.NoError(t, os.Mkdir(other, 0o755))
		runtime.ReadMemStats(&before)
		require.NoError(t, config.SaveTrust(other))
		runtime.ReadMemStats(&after)
		t.Logf("SaveTrust of it allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
		cfg, err := config.Load(other)
		require.NoError(t, err)
		assert.True(t, cfg.Workspace.Trusted)
		assert.Contains(t, cfg.Servers, "u")
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		head := make([]byte, 64)
		_, err = f.Read(head)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(head), `{"numStartups": 812, "mcpServers": {"u": {"command": "true"}}, "`), "every byte it does not change is kept: %q", head)
	})
}

// Every byte SaveTrust does not change is kept, as Add keeps them.
func TestSaveTrustWritesTheEntryAndKeepsTheRest(t *testing.T) {
	tests := []struct{ name, before, want string }{
		{"an empty file", ``, `{"projects":{"P":{"hasTrustDialogAccepted":true}}}`},
		{"no projects", `{"a": 1.50, "b": [true, null]}`, `{"a":1.50, "b":[true, null],"projects":{"P":{"hasTrustDialogAccepted":true}}}`},
		{"another project", `{"projects": {"Q": {"x": 1}}}`, `{"projects":{"Q":{"x":1},"P":{"hasTrustDialogAccepted":true}}}`},
		{"the project's entry", `{"projects": {"P": {"x": "\u00e9\n", "hasTrustDialogAccepted": false, "y": {}}}}`, `{"projects":{"P":{"x":"\u00e9\n", "hasTrustDialogAccepted":true, "y":{}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, project := testdir.Scratch(t)
			testdir.Write(t, filepath.Join(home, ".claude.json"), strings.ReplaceAll(tt.before, `"P"`, fmt.Sprintf("%q", project)))
			require.NoError(t, config.SaveTrust(project))
			b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
			require.NoError(t, err)
			var compact strings.Builder
			for _, line := range strings.Split(string(b), "\n") {
				compact.WriteString(strings.ReplaceAll(strings.TrimSpace(line), `": `, `":`))
			}
			assert.Equal(t, strings.ReplaceAll(tt.want, `"P"`, fmt.Sprintf("%q", project)), compact.String())
		})
	}
	t.Run("a malformed file is left as it was", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		path := filepath.Join(home, ".claude.json")
		testdir.Write(t, path, `{"projects": {"x": 1}, oops}`)
		assert.ErrorContains(t, config.SaveTrust(project), "not valid JSON")
		b, _ := os.ReadFile(path)
		assert.Equal(t, `{"projects": {"x": 1}, oops}`, string(b))
	})
}

// The user's own servers run outside a workspace that is not trusted, so
// a relative command cannot run from it: the error says why and how.
func TestARelativeUserCommandInAWorkspaceNotTrustedSaysWhy(t *testing.T) {
	for _, scope := range []string{"user", "local"} {
		t.Run(scope, func(t *testing.T) {
			home, project := testdir.Scratch(t)
			entry := `{"rel": {"command": "./addsrv"}, "bare": {"command": "npx"}, "abs": {"command": "/bin/true"}}`
			if scope == "user" {
				testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": `+entry+`}`)
			} else {
				testdir.Write(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+project+`": {"mcpServers": `+entry+`}}}`)
			}
			cfg, _ := config.Load(project)
			require.Error(t, cfg.Servers["rel"].Err)
			msg := cfg.Servers["rel"].Err.Error()
			assert.Contains(t, msg, "outside a workspace that is not trusted")
			assert.Contains(t, msg, "SaveTrust")
			var ce *config.Error
			assert.ErrorAs(t, cfg.Servers["rel"].Err, &ce)
			assert.NoError(t, cfg.Servers["bare"].Err, "a bare name is looked up in PATH")
			assert.NoError(t, cfg.Servers["abs"].Err)
			assert.NoError(t, cfg.Trusted().Servers["rel"].Err, "once trusted, it runs in the workspace")
		})
	}
	t.Run("the error does not quote the command, which may hold an expanded secret", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		t.Setenv("MCPLUG_TEST_PART", "s3cr3t")
		testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"rel": {"command": "./bin/${MCPLUG_TEST_PART}"}}}`)
		cfg, _ := config.Load(project)
		require.Error(t, cfg.Servers["rel"].Err)
		assert.NotContains(t, cfg.Servers["rel"].Err.Error(), "s3cr3t")
	})
}
