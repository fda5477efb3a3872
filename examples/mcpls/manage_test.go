package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/internal/managedpath"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workspace is a home directory, a project (a git work tree) and a
// managed folder of the organisation's, for one test.
type workspace struct{ home, project, managed string }

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	w := &workspace{home: t.TempDir(), project: t.TempDir(), managed: t.TempDir()}
	for _, p := range []*string{&w.home, &w.project} {
		*p, _ = filepath.EvalSymlinks(*p)
	}
	t.Setenv("HOME", w.home)
	require.NoError(t, os.Mkdir(filepath.Join(w.project, ".git"), 0o755))
	old := managedpath.Dir
	managedpath.Dir = w.managed
	t.Cleanup(func() { managedpath.Dir = old })
	return w
}

// mcpls runs mcpls in the project with args and input on stdin.
func (w *workspace) mcpls(t *testing.T, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	old := stdin
	stdin = strings.NewReader(input)
	defer func() { stdin = old }()
	if len(args) > 0 && commands[args[0]] != nil {
		args = append([]string{args[0], "-C", w.project}, args[1:]...)
	} else {
		args = append([]string{"-C", w.project}, args...)
	}
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestTheCommandsOfClaudeCode(t *testing.T) {
	w := newWorkspace(t)
	steps := []struct {
		args []string
		code int
		out  string // in stdout, or stderr when the code is not 0
	}{
		{[]string{"add", "a", "--", "node", "s.js", "--x"}, 0, "Added stdio MCP server a with command: node s.js --x to local config\nFile modified: " + filepath.Join(w.home, ".claude.json") + " [project: " + w.project + "]"},
		{[]string{"add", "-s", "project", "b", "-e", "K=v", "--", "npx", "-y", "pkg"}, 0, "to project config\nFile modified: " + filepath.Join(w.project, ".mcp.json")},
		{[]string{"add", "-s", "user", "-t", "http", "c", "https://e.example/mcp", "-H", "Authorization: Bearer t", "-H", "X-A: b"}, 0, `"Authorization": "[REDACTED]"`},
		{[]string{"add", "a", "--", "other"}, 1, "MCP server a already exists in local config"},
		{[]string{"add", "bad name", "x"}, 1, "Invalid name bad name. Names can only contain letters, numbers, hyphens, and underscores."},
		{[]string{"add", "-s", "nowhere", "x", "y"}, 2, "invalid scope nowhere"},
		{[]string{"add-json", "-s", "project", "e", `{"command":"x","args":["1"],"zzz":1}`}, 0, "Added stdio MCP server e to project config"},
		{[]string{"add-json", "g", "nope"}, 1, "Invalid configuration: not a JSON object"},
		{[]string{"get", "a"}, 0, "a:\n  Scope: Local config (private to you in this project)\n"},
		{[]string{"get", "nope"}, 1, `No MCP server named "nope"`},
		{[]string{"add", "-s", "user", "a", "--", "u"}, 0, "to user config"},
		{[]string{"remove", "a"}, 1, "MCP server \"a\" exists in multiple scopes:\n  - Local config (private to you in this project)\n  - User config (available in all your projects)"},
		{[]string{"remove", "a", "-s", "user"}, 0, `Removed MCP server "a" from user config`},
		{[]string{"remove", "a", "-s", "user"}, 1, `No MCP server named "a" in user scope`},
		{[]string{"remove", "a"}, 0, `Removed MCP server "a" from local config`},
		{[]string{"remove", "nope"}, 1, `No MCP server named "nope". Configured servers: b, c, e`},
		{[]string{"reset-project-choices"}, 0, "approvals and rejections stored for this project have been reset"},
	}
	for _, s := range steps {
		code, out, errs := w.mcpls(t, "", s.args...)
		where := out
		if s.code != 0 {
			where = errs
		}
		assert.Equal(t, s.code, code, "%v: %s%s", s.args, out, errs)
		assert.Contains(t, where, s.out, "%v", s.args)
	}
	b, err := os.ReadFile(filepath.Join(w.project, ".mcp.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"mcpServers":{"b":{"type":"stdio","command":"npx","args":["-y","pkg"],"env":{"K":"v"}},"e":{"command":"x","args":["1"]}}}`, string(b))
}

// remove names, when it finds no such server, the servers it could have
// removed: those of the local and user scopes and of the .mcp.json of the
// directory it runs in, never a parent's (which it cannot remove), so
// that it never names the very server it says is not there.
func TestRemoveNamesOnlyTheServersItCanRemove(t *testing.T) {
	w := newWorkspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.project, ".mcp.json"), []byte(`{"mcpServers":{"parent":{"command":"x"}}}`), 0o644))
	sub := filepath.Join(w.project, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for _, args := range [][]string{
		{"add", "-C", sub, "-s", "project", "here", "--", "x"},
		{"add", "-C", sub, "-s", "user", "mine", "--", "x"},
		{"add", "-C", sub, "local", "--", "x"},
	} {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errb), errb.String())
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a server of a parent's .mcp.json is not named", []string{"remove", "-C", sub, "parent"}, `No MCP server named "parent". Configured servers: here, local, mine` + "\n"},
		{"a name no file has", []string{"remove", "-C", sub, "nope"}, `No MCP server named "nope". Configured servers: here, local, mine` + "\n"},
		{"in the project's own folder, its .mcp.json counts", []string{"remove", "-C", w.project, "nope"}, `No MCP server named "nope". Configured servers: local, mine, parent` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			assert.Equal(t, 1, run(tt.args, &out, &errb))
			assert.Equal(t, tt.want, errb.String())
			assert.Empty(t, out.String())
		})
	}
}

func TestThePolicyIsShownAndObeyed(t *testing.T) {
	w := newWorkspace(t)
	entry := func(scenario string) string {
		b, _ := json.Marshal(map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: scenario}})
		return string(b)
	}
	for _, name := range []string{"ok", "denied", "stranger"} {
		code, _, errs := w.mcpls(t, "", "add-json", "-s", "user", name, entry("basic"))
		require.Equal(t, 0, code, errs)
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.managed, "managed-settings.json"),
		[]byte(`{"allowedMcpServers":[{"serverName":"ok"},{"serverName":"denied"}],"deniedMcpServers":[{"serverName":"denied"}]}`), 0o644))
	code, out, _ := w.mcpls(t, "")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `ok\s+connected`, out)
	assert.Regexp(t, `denied\s+failed.*not allowed by the organisation's policy`, out)
	assert.Regexp(t, `stranger\s+failed.*not allowed by the organisation's policy`, out)
	_, out, _ = w.mcpls(t, "", "get", "denied")
	assert.Contains(t, out, `Status: ✘ Blocked by the organisation's policy: `)
	assert.Contains(t, out, `deniedMcpServers has {"serverName":"denied"}`)
	_, out, _ = w.mcpls(t, "", "get", "stranger")
	assert.Contains(t, out, `allowedMcpServers does not name "stranger"`)
	code, _, errs := w.mcpls(t, "", "add", "-s", "user", "newone", "--", "x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `Cannot add MCP server "newone": not allowed by enterprise policy`)
	assert.Empty(t, testproc.LiveChildren(), "no denied server started")

	t.Run("managed servers cannot be removed", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(w.managed, "managed-mcp.json"), []byte(`{"mcpServers":{"corp":`+entry("basic")+`}}`), 0o644))
		defer os.Remove(filepath.Join(w.managed, "managed-mcp.json"))
		code, out, _ := w.mcpls(t, "")
		assert.Equal(t, 0, code, out)
		assert.Regexp(t, `corp\s+connected\s+stdio\s+managed`, out)
		assert.NotContains(t, out, "stranger")
		code, _, errs := w.mcpls(t, "", "remove", "corp")
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, `MCP server "corp" is provided by your organization and cannot be removed locally`)
	})
}

// runners puts fake npx, uvx and docker first in PATH: each records its
// arguments and runs the test binary as an MCP server.
func runners(t *testing.T) (record string) {
	t.Helper()
	bin := t.TempDir()
	record = filepath.Join(t.TempDir(), "ran")
	for _, name := range []string{"npx", "uvx", "docker"} {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + record + "\nexec env " + testproc.EnvScenario + "=basic " + os.Args[0] + " -test.run='^$'\n"
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755))
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return record
}

// fakeRegistry serves the registry repository's server.json examples,
// and the extra ones given; the remote's URL is a local MCP server's
// instead.
func fakeRegistry(t *testing.T, extra ...string) string {
	t.Helper()
	remote := httptest.NewServer(&mcptest.Server{Name: "remote"})
	t.Cleanup(remote.Close)
	docs := extra
	for _, f := range []string{"npm", "pypi", "oci", "remote", "cargo"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "mcp", "registry", "testdata", f+".json"))
		require.NoError(t, err)
		docs = append(docs, strings.ReplaceAll(string(b), "https://mcp-fs.anonymous.modelcontextprotocol.io/http", remote.URL))
	}
	type named struct{ Name, Version string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v0.1/servers" {
			q := r.URL.Query().Get("search")
			list := []json.RawMessage{}
			for _, d := range docs {
				var doc named
				require.NoError(t, json.Unmarshal([]byte(d), &doc))
				if strings.Contains(doc.Name, q) {
					list = append(list, json.RawMessage(`{"server":`+d+`,"_meta":{}}`))
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"servers": list, "metadata": map[string]int{"count": len(list)}})
			return
		}
		rest, _ := strings.CutPrefix(r.URL.EscapedPath(), "/v0.1/servers/")
		name, version, _ := strings.Cut(rest, "/versions/")
		name, _ = url.PathUnescape(name)
		for _, d := range docs {
			var doc named
			require.NoError(t, json.Unmarshal([]byte(d), &doc))
			if doc.Name == name && (version == "latest" || version == doc.Version) {
				w.Write([]byte(`{"server":` + d + `,"_meta":{}}`))
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestInstallFromARegistry(t *testing.T) {
	w := newWorkspace(t)
	record := runners(t)
	reg := fakeRegistry(t)
	t.Setenv(registryEnv, reg)
	tests := []struct {
		server, input, name, ran string
		scope                    string
		vars                     []string
	}{
		{"io.modelcontextprotocol.anonymous/brave-search@1.0.2", "y\n", "modelcontextprotocol-brave-search", "npx -y @modelcontextprotocol/server-brave-search@1.0.2", "user", []string{"MODELCONTEXTPROTOCOL_BRAVE_SEARCH_BRAVE_API_KEY"}},
		{"io.github.example/weather-mcp", "y\n", "example-weather-mcp", "uvx weather-mcp-server@0.5.0", "local", []string{"EXAMPLE_WEATHER_MCP_WEATHER_API_KEY"}},
		{"io.github.example/database-manager", "postgres\n\nshop\nu\ny\n", "example-database-manager", "docker run -i --rm --network host -e DB_TYPE=postgres -e DB_PASSWORD -e DB_USERNAME -e SSL_MODE docker.io/example/database-manager-mcp:3.1.0 --host localhost shop", "user", []string{"EXAMPLE_DATABASE_MANAGER_DB_PASSWORD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := w.mcpls(t, tt.input, "install", "-s", tt.scope, tt.server)
			require.Equal(t, 0, code, "%s\n%s", out, errs)
			assert.Contains(t, out, "Added stdio MCP server "+tt.name)
			for _, v := range tt.vars {
				assert.Contains(t, out, v+" is not set yet")
				t.Setenv(v, "s3cret")
			}
			os.Remove(record)
			_, out, errs = w.mcpls(t, "")
			assert.Regexp(t, tt.name+`\s+connected`, out, errs)
			ran, err := os.ReadFile(record)
			require.NoError(t, err)
			assert.Contains(t, string(ran), tt.ran+"\n")
		})
	}
	t.Run("a remote", func(t *testing.T) {
		code, out, errs := w.mcpls(t, "", "install", "-y", "io.modelcontextprotocol.anonymous/mcp-fs")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "It connects to: http://127.0.0.1:")
		_, out, errs = w.mcpls(t, "")
		assert.Regexp(t, `modelcontextprotocol-mcp-fs\s+connected\s+http`, out, errs)
	})
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			why  string
		}{
			{[]string{"install", "io.github.example/widget-mcp"}, "installing crates is not supported"},
			{[]string{"install", "io.github.example/nothing"}, "no such server"},
			{[]string{"install", "weather"}, "no server named weather; the registry has:\n  io.github.example/weather-mcp 0.5.0  Python MCP server for weather data access"},
			{[]string{"install", "io.github.example/weather-mcp@9"}, "no such server"},
		} {
			code, _, errs := w.mcpls(t, "", c.args...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, c.why)
		}
		// In another scope than its entry's: in the same, it is refused
		// as installed before anything is asked.
		code, _, errs := w.mcpls(t, "n\n", "install", "-s", "project", "io.github.example/weather-mcp")
		assert.Equal(t, 1, code)
		assert.Contains(t, errs, "nothing written")
	})
	assert.Empty(t, testproc.LiveChildren())
}
