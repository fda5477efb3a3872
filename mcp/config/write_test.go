package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEditsChangeOnlyWhatTheyChange(t *testing.T) {
	servers := []string{"mcpServers"}
	tests := []struct {
		name        string
		doc         string
		path        []string
		member, val string
		want        string
	}{
		{"into an empty file's object", "{\n}", servers, "a", `{"command":"x"}`, "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"x\"\n    }\n  }\n}"},
		{"after the last member, in its indentation", "{\n    \"zeta\": 1.50,\n    \"mcpServers\": {\n        \"old\": {\"command\": \"o\"}\n    }\n}", servers, "new", `{"command":"n"}`,
			"{\n    \"zeta\": 1.50,\n    \"mcpServers\": {\n        \"old\": {\"command\": \"o\"},\n        \"new\": {\n            \"command\": \"n\"\n        }\n    }\n}"},
		{"into an empty servers object", "{\n  \"mcpServers\": {}\n}", servers, "a", `{"c":1}`, "{\n  \"mcpServers\": {\n    \"a\": {\n      \"c\": 1\n    }\n  }\n}"},
		{"a one-line file stays on one line", `{"x":[1,2],"mcpServers":{"a":{}}}`, servers, "b", `{"c":1}`, `{"x":[1,2],"mcpServers":{"a":{},"b":{"c":1}}}`},
		{"a replacement in place", "{\"mcpServers\": {\"a\": {\"c\": 1}, \"b\": {\"c\": 2}}}", servers, "a", `{"c":3}`, "{\"mcpServers\": {\"a\": {\"c\":3}, \"b\": {\"c\": 2}}}"},
		{"the first of two removed", "{\"mcpServers\": {\"a\": 1, \"b\": 2}, \"z\": 0}", servers, "a", "", "{\"mcpServers\": {\"b\": 2}, \"z\": 0}"},
		{"the last of two removed", "{\"mcpServers\": {\"a\": 1, \"b\": 2}}", servers, "b", "", "{\"mcpServers\": {\"a\": 1}}"},
		{"the middle one removed", "{\"mcpServers\": {\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}}", servers, "b", "", "{\"mcpServers\": {\n  \"a\": 1,\n  \"c\": 3\n}}"},
		{"the only one removed", "{\"mcpServers\": {\n  \"a\": 1\n}}", servers, "a", "", "{\"mcpServers\": {}}"},
		{"every one of a name given twice removed", "{\"mcpServers\": {\"a\": 1, \"b\": 2, \"a\": 3}}", servers, "a", "", "{\"mcpServers\": {\"b\": 2}}"},
		{"the last of a name given twice replaced, the other removed", "{\"mcpServers\": {\"a\": 1, \"b\": 2, \"a\": 3}}", servers, "a", "4", "{\"mcpServers\": {\"b\": 2, \"a\": 4}}"},
		{"nothing to remove", "{\"x\": 1}", servers, "a", "", "{\"x\": 1}"},
		{"a nested path created", "{\n  \"projects\": {\n    \"/other\": {\"k\": true}\n  }\n}", []string{"projects", "/p", "mcpServers"}, "a", `{"c":1}`,
			"{\n  \"projects\": {\n    \"/other\": {\"k\": true},\n    \"/p\": {\n      \"mcpServers\": {\n        \"a\": {\n          \"c\": 1\n        }\n      }\n    }\n  }\n}"},
		{"an object on its own lines in a file that is not", "{\"mcpServers\": {\n    \"a\": 1\n  }}", servers, "b", `{"c":1}`, "{\"mcpServers\": {\n    \"a\": 1,\n    \"b\": {\n        \"c\": 1\n    }\n  }}"},
		{"CRLF lines stay CRLF", "{\r\n  \"mcpServers\": {\r\n    \"a\": 1\r\n  }\r\n}", servers, "b", `{"c":1}`, "{\r\n  \"mcpServers\": {\r\n    \"a\": 1,\r\n    \"b\": {\r\n      \"c\": 1\r\n    }\r\n  }\r\n}"},
		{"tabs stay tabs", "{\n\t\"mcpServers\": {\n\t\t\"a\": 1\n\t}\n}", servers, "b", `{"c":1}`, "{\n\t\"mcpServers\": {\n\t\t\"a\": 1,\n\t\t\"b\": {\n\t\t\t\"c\": 1\n\t\t}\n\t}\n}"},
		{"names with escapes are matched", `{"mcpServers":{"\u0061":1}}`, servers, "a", "", `{"mcpServers":{}}`},
		{"strings with braces are not objects", `{"s":"{\"mcpServers\":{}}","mcpServers":{}}`, servers, "a", "1", `{"s":"{\"mcpServers\":{}}","mcpServers":{"a":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.EditJSON(tt.doc, tt.path, tt.member, tt.val)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.True(t, json.Valid([]byte(got)))
		})
	}
}

func TestAFileThatIsNotJSONIsNeverWritten(t *testing.T) {
	tests := []struct{ name, doc, where string }{
		{"a missing comma", "{\n  \"mcpServers\": {\n    \"a\": 1\n    \"b\": 2\n  }\n}", "line 4, column 5"},
		{"not an object", "[1, 2]", "not a JSON object"},
		{"cut short", "{\"mcpServers\": {\"a\": ", "line 1, column 22: unexpected EOF"},
		{"two values", "{} {}", "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".mcp.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o644))
			_, err := config.Add(context.Background(), dir, config.ScopeProject, "new", json.RawMessage(`{"command":"x"}`))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.where)
			assert.Contains(t, err.Error(), path)
			b, _ := os.ReadFile(path)
			assert.Equal(t, tt.doc, string(b), "untouched")
		})
	}
}

// home makes a home directory and a project (a git work tree) for a test.
func home(t *testing.T) (homeDir, project string) {
	t.Helper()
	homeDir, project = t.TempDir(), t.TempDir()
	homeDir, _ = filepath.EvalSymlinks(homeDir)
	project, _ = filepath.EvalSymlinks(project)
	testdir.Home(t, homeDir)
	require.NoError(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	config.SetManagedDir(t, t.TempDir())
	return homeDir, project
}

func TestWritesInEachScope(t *testing.T) {
	homeDir, project := home(t)
	ctx := context.Background()
	stdio := config.Entry(&config.Server{Command: "node", Args: []string{"s.js"}, Env: map[string]string{"K": "v"}})
	assert.JSONEq(t, `{"type":"stdio","command":"node","args":["s.js"],"env":{"K":"v"}}`, string(stdio))
	remote := config.Entry(&config.Server{Type: config.TypeHTTP, URL: "https://h.example/mcp", Headers: map[string]string{"A": "b"}})
	assert.JSONEq(t, `{"type":"http","url":"https://h.example/mcp","headers":{"A":"b"}}`, string(remote))

	for _, scope := range []config.Scope{config.ScopeLocal, config.ScopeProject, config.ScopeUser} {
		c, err := config.Add(ctx, project, scope, "s-"+string(scope), stdio)
		require.NoError(t, err, scope)
		assert.Equal(t, scope, c.Scope)
	}
	_, err := config.Add(ctx, project, config.ScopeUser, "s-user", stdio)
	assert.ErrorIs(t, err, config.ErrExists)
	_, err = config.Add(ctx, project, config.ScopeUser, "bad name", stdio)
	assert.ErrorIs(t, err, config.ErrBadName)

	cfg, err := config.Load(project)
	require.NoError(t, err)
	for _, scope := range []config.Scope{config.ScopeLocal, config.ScopeProject, config.ScopeUser} {
		sc := cfg.Servers["s-"+string(scope)]
		require.NotNil(t, sc, scope)
		assert.Equal(t, scope, sc.Scope)
		assert.Equal(t, "node", sc.Command)
	}
	var cj map[string]any
	b, err := os.ReadFile(filepath.Join(homeDir, ".claude.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cj))
	entry := cj["projects"].(map[string]any)[project].(map[string]any)
	assert.Contains(t, entry["mcpServers"], "s-local")
	assert.Equal(t, false, entry["hasTrustDialogAccepted"], "a new project entry has Claude Code's keys")
	info, err := os.Stat(filepath.Join(homeDir, ".claude.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	info, err = os.Stat(filepath.Join(project, ".mcp.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), ".mcp.json holds a secret: an env value (K)")

	t.Run("get reads a scope's entry", func(t *testing.T) {
		sc, err := config.Get(project, config.ScopeLocal, "s-local")
		require.NoError(t, err)
		assert.Equal(t, "node", sc.Command)
		assert.Equal(t, map[string]string{"K": "v"}, sc.Env)
		assert.Equal(t, config.ScopeLocal, sc.Scope)
		_, err = config.Get(project, config.ScopeUser, "s-local")
		assert.ErrorIs(t, err, config.ErrNotFound)
	})
	t.Run("replace keeps the entry's place", func(t *testing.T) {
		_, err := config.Add(ctx, project, config.ScopeUser, "s-after", stdio)
		require.NoError(t, err)
		_, err = config.Replace(ctx, project, config.ScopeUser, "s-user", remote)
		require.NoError(t, err)
		sc, err := config.Get(project, config.ScopeUser, "s-user")
		require.NoError(t, err)
		assert.Equal(t, "https://h.example/mcp", sc.URL)
		b, err := os.ReadFile(filepath.Join(homeDir, ".claude.json"))
		require.NoError(t, err)
		assert.Less(t, strings.Index(string(b), `"s-user"`), strings.Index(string(b), `"s-after"`))
	})
	t.Run("remove finds the one scope", func(t *testing.T) {
		c, err := config.Remove(ctx, project, "", "s-project")
		require.NoError(t, err)
		assert.Equal(t, config.ScopeProject, c.Scope)
		_, err = config.Remove(ctx, project, "", "s-project")
		assert.ErrorIs(t, err, config.ErrNotFound)
	})
	t.Run("a name in two scopes must be given one", func(t *testing.T) {
		_, err := config.Add(ctx, project, config.ScopeLocal, "s-user", stdio)
		require.NoError(t, err)
		_, err = config.Remove(ctx, project, "", "s-user")
		var se *config.ScopesError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, []config.Scope{config.ScopeLocal, config.ScopeUser}, se.Scopes)
		_, err = config.Remove(ctx, project, config.ScopeUser, "s-user")
		require.NoError(t, err)
		_, err = config.Remove(ctx, project, config.ScopeUser, "s-after")
		require.NoError(t, err)
		in, err := config.ScopesOf(project, "s-user")
		require.NoError(t, err)
		assert.Equal(t, []config.Scope{config.ScopeLocal}, in)
	})
	t.Run("reset project choices", func(t *testing.T) {
		require.NoError(t, config.SaveApproval(project, "x", true))
		_, err := config.ResetProjectChoices(ctx, project)
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(homeDir, ".claude.json"))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "enabledMcpjsonServers")
		assert.Contains(t, string(b), "s-local", "the rest stays")
		b, err = os.ReadFile(filepath.Join(project, ".claude", "settings.local.json"))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "enabledMcpjsonServers", "nor in the project's own settings, where SaveApproval wrote it")
	})
}

func TestAWriteNeverGoesThroughALink(t *testing.T) {
	_, project := home(t)
	elsewhere := filepath.Join(t.TempDir(), "theirs.json")
	require.NoError(t, os.WriteFile(elsewhere, []byte(`{"mcpServers":{}}`), 0o644))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(project, ".mcp.json")))
	_, err := config.Add(context.Background(), project, config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`))
	require.Error(t, err)
	b, _ := os.ReadFile(elsewhere)
	assert.Equal(t, `{"mcpServers":{}}`, string(b))
	fi, err := os.Lstat(filepath.Join(project, ".mcp.json"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is left as it was")
}

func TestConcurrentWritersLoseNothing(t *testing.T) {
	homeDir, project := home(t)
	for _, scope := range []config.Scope{config.ScopeUser, config.ScopeProject, config.ScopeLocal} {
		t.Run(string(scope), func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Go(func() {
					_, err := config.Add(context.Background(), project, scope, fmt.Sprintf("w%d", i), json.RawMessage(`{"command":"x"}`))
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			for i := range 16 {
				in, err := config.ScopesOf(project, fmt.Sprintf("w%d", i))
				require.NoError(t, err)
				assert.Contains(t, in, scope)
			}
		})
	}
	_, err := os.Stat(filepath.Join(homeDir, ".claude.json.lock"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the lock is let go")
}

func TestTheLockOfAnotherWriter(t *testing.T) {
	homeDir, project := home(t)
	lock := filepath.Join(homeDir, ".claude.json.lock")
	t.Run("held, is waited for within the bound", func(t *testing.T) {
		require.NoError(t, os.Mkdir(lock, 0o755))
		defer os.Remove(lock)
		config.SetLockWait(t, 20*time.Millisecond)
		_, err := config.Add(context.Background(), project, config.ScopeUser, "a", json.RawMessage(`{"command":"x"}`))
		assert.ErrorIs(t, err, config.ErrLocked)
		assert.Contains(t, err.Error(), lock)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		config.SetLockWait(t, time.Hour)
		_, err = config.Add(ctx, project, config.ScopeUser, "a", json.RawMessage(`{"command":"x"}`))
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	})
	t.Run("stale but not empty (no writer leaves one), is an error, not a wait", func(t *testing.T) {
		require.NoError(t, os.MkdirAll(filepath.Join(lock, "inside"), 0o755))
		defer os.RemoveAll(lock)
		old := time.Now().Add(-time.Minute)
		require.NoError(t, os.Chtimes(lock, old, old))
		config.SetLockWait(t, time.Hour)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := config.Add(ctx, project, config.ScopeUser, "a", json.RawMessage(`{"command":"x"}`))
		assert.ErrorIs(t, err, config.ErrLocked)
		assert.ErrorContains(t, err, "cannot be removed")
	})
	t.Run("left by a writer that died, is taken", func(t *testing.T) {
		require.NoError(t, os.Mkdir(lock, 0o755))
		old := time.Now().Add(-time.Minute)
		require.NoError(t, os.Chtimes(lock, old, old))
		_, err := config.Add(context.Background(), project, config.ScopeUser, "a", json.RawMessage(`{"command":"x"}`))
		require.NoError(t, err)
		_, err = os.Stat(lock)
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestAddJSONKeepsWhatClaudeCodeKeeps(t *testing.T) {
	got, err := config.EntryFromJSON("j", json.RawMessage(`{"command":"x","args":["1"],"cwd":"/w","alwaysLoad":true,"timeout":5,"disabled":true,"foo":1,"env":{"A":"1"}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"command":"x","args":["1"],"env":{"A":"1"},"timeout":5,"alwaysLoad":true}`, string(got))
	for in, want := range map[string]string{
		`{"command":"x"}`:                   `{"command":"x","args":[]}`,
		`{"type":"stdio","command":"x"}`:    `{"type":"stdio","command":"x","args":[]}`,
		`{"type":"http","url":"https://h"}`: `{"type":"http","url":"https://h"}`,
	} {
		got, err := config.EntryFromJSON("j", json.RawMessage(in))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), "a stdio entry without args gets them, empty, as Claude Code writes it")
	}
	_, err = config.EntryFromJSON("j", json.RawMessage(`nope`))
	assert.ErrorContains(t, err, "not a JSON object")
	_, err = config.EntryFromJSON("j", json.RawMessage(`{"type":"http"}`))
	assert.Error(t, err, "an http entry without a url")
}

// A .mcp.json is written within the bound it is read with: Load would
// refuse a larger one, so a write to it is refused too, and it is left.
func TestAProjectFileIsWrittenWithinItsBound(t *testing.T) {
	_, project := home(t)
	path := filepath.Join(project, ".mcp.json")
	big := `{"mcpServers": {}, "pad": "` + strings.Repeat("x", 4<<20) + `"}`
	require.NoError(t, os.WriteFile(path, []byte(big), 0o644))
	_, err := config.Add(context.Background(), project, config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`))
	assert.ErrorIs(t, err, config.ErrFileTooLarge)
	b, _ := os.ReadFile(path)
	assert.Equal(t, len(big), len(b), "untouched")
}
