package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	testproc.Main()
	os.Unsetenv("CLAUDE_CONFIG_DIR") // the tests' $HOME holds the user's files
	os.Exit(m.Run())
}

func demoConfig(t *testing.T) string {
	t.Helper()
	entry := func(scenario string) map[string]any {
		return map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: scenario}}
	}
	return writeConfig(t, map[string]any{
		"demo":   entry("basic"),
		"broken": entry("exit-before-init"),
		"off":    map[string]any{"command": "x", "disabled": true},
	})
}

// writeConfig writes a config file of servers and returns its path.
func writeConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-config", demoConfig(t), "-v"}, &stdout, &stderr)
	assert.Equal(t, 1, code, "a failed server makes the exit status 1")
	out := stdout.String()
	assert.Regexp(t, `broken\s+failed\s+stdio\s+-\s+0 tools\s+.*exit status 3.*API_TOKEN is not set`, out)
	assert.Regexp(t, `demo\s+connected\s+stdio\s+-\s+2 tools\s+fake 1.0.0 \(protocol 2025-11-25, legacy\)`, out)
	assert.Regexp(t, `off\s+disabled\s+stdio\s+-\s+0 tools`, out)
	assert.Contains(t, out, "mcp__demo__add\n    Add two numbers.")
	assert.Empty(t, testproc.LiveChildren())
}

func TestCall(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-config", demoConfig(t), "-call", "mcp__demo__add", `{"a":2,"b":40}`}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	var res struct {
		Content []struct{ Text string }
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	assert.Equal(t, "42", res.Content[0].Text)

	stdout.Reset()
	assert.Equal(t, 2, run([]string{"-config", demoConfig(t), "-call", "mcp__demo__nope"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "unknown tool")
	assert.Contains(t, stderr.String(), "mcpls -v", "it says how to list the tools")
	assert.NotContains(t, stderr.String(), "Tools", "not a Go method")
}

func TestHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"-h"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "-trust", "the usage asked for goes to stdout")
	assert.Equal(t, 2, run([]string{"-nope"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "flag provided but not defined: -nope")
	assert.Contains(t, stderr.String(), "mcpls -h prints the commands")
}

// libraryConfig is a config file with the "library" scenario as server
// "lib", whose name and texts carry terminal escapes.
func libraryConfig(t *testing.T, name string) string {
	t.Helper()
	return writeConfig(t, map[string]any{
		name: map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "library"}},
	})
}

func TestNoTerminalControlFromServersOrConfig(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cfg := libraryConfig(t, "lib\x1b[2Jname")
	for _, args := range [][]string{{"-v"}, {"-resources"}, {"-prompts"}, {"-read", "@lib\x1b[2Jname:file:///notes"}} {
		stdout.Reset()
		stderr.Reset()
		code := run(append([]string{"-config", cfg}, args...), &stdout, &stderr)
		require.Equal(t, 0, code, "%v: %s", args, stderr.String())
		out := stdout.String() + stderr.String()
		assert.NotContains(t, out, "\x1b", "%v", args)
		assert.NotContains(t, out, "\x07", "%v", args)
		assert.NotContains(t, out, "\r", "%v", args)
		assert.NotContains(t, out, "\u009b", "%v: a C1 control (CSI) acts in a UTF-8 terminal", args)
		assert.NotContains(t, out, "\u202e", "%v: a bidi override", args)
	}
	stdout.Reset()
	run([]string{"-config", cfg, "-v"}, &stdout, &stderr)
	assert.Contains(t, stdout.String(), "lib\ufffd[2Jname", "the text is shown, its controls replaced")
}

func TestResourcesAndPrompts(t *testing.T) {
	cfg := libraryConfig(t, "lib")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-config", cfg, "-resources"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "@lib:file:///notes\n")
	assert.Contains(t, stdout.String(), "@lib:file:///{path} (template)")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"-config", cfg, "-read", "@lib:file:///notes"}, &stdout, &stderr), stderr.String())
	var read mcp.ReadResourceResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &read))
	assert.Equal(t, "notes\x1b[31m red \u009b2J \u202eevil", *read.Contents[0].Text, "JSON keeps the text, escaped")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"-config", cfg, "-prompts"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "mcp__lib__review lang\n    review code")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"-config", cfg, "-prompt", "mcp__lib__review", `{"lang":"go"}`}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "review this go")

	stderr.Reset()
	assert.Equal(t, 2, run([]string{"-config", cfg, "-read", "@nope:x"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "mcpls -resources")
}

func TestConfigFileRelativeCommands(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nexec env " + testproc.EnvScenario + "=basic " + os.Args[0] + " -test.run=^$\n"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "server"), []byte(script), 0o755))
	path := filepath.Join(dir, "servers.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"rel": {"command": "./bin/server"}}}`), 0o644))
	t.Chdir(t.TempDir()) // elsewhere
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-config", path}, &stdout, &stderr), stdout.String()+stderr.String())
	assert.Regexp(t, `rel\s+connected`, stdout.String(), "./bin/server is the file's folder's")
}

func TestOAuthShownOnlyWhereConfigured(t *testing.T) {
	path := writeConfig(t, map[string]any{
		"plain": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp"},
		"oauth": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "oauth": map[string]any{"clientId": "c"}},
	})
	var stdout, stderr bytes.Buffer
	run([]string{"-config", path, "-v"}, &stdout, &stderr)
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "plain") {
			assert.NotContains(t, line, "oauth:")
		}
		if strings.HasPrefix(line, "oauth") {
			assert.Contains(t, line, "oauth:")
		}
	}
}

// A rejection counts in a workspace that is not trusted, as in Claude
// Code: it only narrows what runs.
func TestARejectionInAWorkspaceNotTrustedCounts(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"s": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "basic"}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(project, ".mcp.json"), b, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"enabledMcpjsonServers": ["s"]}`), 0o600))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-C", project}, &stdout, &stderr), stderr.String())
	require.Regexp(t, `s\s+connected`, stdout.String())
	stdout.Reset()
	assert.Equal(t, 0, run([]string{"-C", project, "-reject", "s"}, &stdout, &stderr), stderr.String())
	assert.Regexp(t, `s\s+disabled`, stdout.String())
	stdout.Reset()
	assert.Equal(t, 0, run([]string{"-C", project}, &stdout, &stderr), stderr.String())
	assert.Regexp(t, `s\s+disabled`, stdout.String(), "the next run still counts it")
	assert.Empty(t, testproc.LiveChildren())
}

func TestProjectServersAndApproval(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"proj": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "basic"}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(project, ".mcp.json"), b, 0o644))

	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"-C", project}, &stdout, &stderr), stderr.String())
	assert.Regexp(t, `proj\s+needs approval\s+stdio\s+project\s+0 tools\s+from .*\.mcp\.json; approve with: mcpls -C \S+ -trust -approve proj`, stdout.String(), "the hint keeps -C")
	assert.Empty(t, testproc.LiveChildren(), "nothing was started")

	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, 1, run([]string{"-C", project, "-approve", "proj"}, &stdout, &stderr), "an approval in a workspace not trusted would not count")
	assert.Contains(t, stderr.String(), "mcpls -C "+project+" -trust -approve proj")
	assert.NoFileExists(t, filepath.Join(project, ".claude", "settings.local.json"))

	stdout.Reset()
	assert.Equal(t, 0, run([]string{"-C", project, "-trust", "-approve", "proj"}, &stdout, &stderr), stderr.String())
	assert.Regexp(t, `proj\s+connected\s+stdio\s+project\s+2 tools`, stdout.String())
	assert.FileExists(t, filepath.Join(project, ".claude", "settings.local.json"))

	stderr.Reset()
	assert.Equal(t, 2, run([]string{"-C", project, "-approve", "porj"}, &stdout, &stderr), "a typo is refused")
	assert.Contains(t, stderr.String(), `no project server "porj"`)
	b, err = os.ReadFile(filepath.Join(project, ".claude", "settings.local.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "porj", "and not recorded")

	stdout.Reset()
	assert.Equal(t, 0, run([]string{"-C", project, "-reject", "proj"}, &stdout, &stderr), stderr.String())
	assert.Empty(t, testproc.LiveChildren())
	assert.Regexp(t, `proj\s+disabled\s+stdio\s+project`, stdout.String())
}

func TestSecretsAreNotPrinted(t *testing.T) {
	t.Setenv("MCPLS_TEST_TOKEN", "s3cr3t-token")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"type": "http", "url": "http://user:pa55word@127.0.0.1:1/mcp?api_key=${MCPLS_TEST_TOKEN}",
			"headers": map[string]string{"Authorization": "Bearer ${MCPLS_TEST_TOKEN}"}},
		"badheader": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer s3cr3t-token ${UNCLOSED"}},
	}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, run([]string{"-config", path}, &stdout, &stderr))
	out := stdout.String() + stderr.String()
	assert.Contains(t, out, "remote")
	assert.NotContains(t, out, "s3cr3t-token")
	assert.NotContains(t, out, "pa55word")
}

func TestTheSampleConfig(t *testing.T) {
	cfg, err := config.LoadFile("sample.mcp.json")
	require.NoError(t, err)
	require.Contains(t, cfg.Servers, "demo")
	assert.Equal(t, "go", cfg.Servers["demo"].Command)
	assert.Equal(t, []string{"run", "./examples/addserver"}, cfg.Servers["demo"].Args, "the repository's own server, run from its root")
}

func TestNothingConfiguredSaysWhatToTry(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"-C", t.TempDir()}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "sample.mcp.json")
}

func TestTracePrintsTheSpansOfTheRun(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"-config", demoConfig(t), "-trace", "-call", "mcp__demo__add", `{"a":2,"b":40}`}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), "42", "the result, as without -trace")
	var call string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "span tools/call add ") {
			call = line
		}
	}
	require.NotEmpty(t, call, "the call's span: %s", stderr.String())
	assert.Contains(t, call, "mcp.method.name=tools/call")
	assert.Contains(t, call, "gen_ai.tool.name=add")
	assert.Contains(t, call, "mcplug.server.name=demo")
	assert.Contains(t, call, "network.transport=pipe")
	assert.Contains(t, stderr.String(), "span tools/list ")

	stderr.Reset()
	require.Equal(t, 0, run([]string{"-config", demoConfig(t), "-call", "mcp__demo__add", `{"a":2,"b":40}`}, &stdout, &stderr))
	assert.NotContains(t, stderr.String(), "span ", "no spans without -trace")
}

// -search prints what a model's tool search would find, best first, on one
// line; -search - one line per query of standard input.
func TestSearch(t *testing.T) {
	cfg := writeConfig(t, map[string]any{
		"srv": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "basic"}},
	})
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-config", cfg, "-search", "add two numbers", "-n", "1"}, &stdout, &stderr), stderr.String())
	assert.Equal(t, "mcp__srv__add\n", stdout.String())

	stdout.Reset()
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader("echo a message back\nadd numbers\nnothing matches this zzz\n")
	require.Equal(t, 0, run([]string{"-config", cfg, "-search", "-", "-n", "2"}, &stdout, &stderr), stderr.String())
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	require.Len(t, lines, 3, "one line per query: %q", stdout.String())
	assert.True(t, strings.HasPrefix(lines[0], "mcp__srv__echo"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "mcp__srv__add"), lines[1])
	assert.Empty(t, lines[2])

	assert.Equal(t, 2, run([]string{"-config", cfg, "-search", "x", "-n", "0"}, &stdout, &stderr))
}
