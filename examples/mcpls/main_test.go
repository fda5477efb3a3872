package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplug/mcplug/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	mcptest.Main()
	os.Exit(m.Run())
}

func config(t *testing.T) string {
	t.Helper()
	entry := func(scenario string) map[string]any {
		return map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{mcptest.EnvScenario: scenario}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo":   entry("basic"),
		"broken": entry("exit-before-init"),
		"off":    map[string]any{"command": "x", "disabled": true},
	}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-config", config(t), "-v"}, &stdout, &stderr)
	assert.Equal(t, 1, code, "a failed server makes the exit status 1")
	out := stdout.String()
	assert.Regexp(t, `broken\s+failed\s+stdio\s+0 tools\s+.*exit status 3.*API_TOKEN is not set`, out)
	assert.Regexp(t, `demo\s+connected\s+stdio\s+2 tools\s+fake 1.0.0`, out)
	assert.Regexp(t, `off\s+disabled\s+stdio\s+0 tools`, out)
	assert.Contains(t, out, "mcp__demo__add\n    Add two numbers.")
	assert.Empty(t, mcptest.LiveChildren())
}

func TestCall(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-config", config(t), "-call", "mcp__demo__add", `{"a":2,"b":40}`}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	var res struct {
		Content []struct{ Text string }
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	assert.Equal(t, "42", res.Content[0].Text)

	stdout.Reset()
	assert.Equal(t, 2, run([]string{"-config", config(t), "-call", "mcp__demo__nope"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "unknown tool")
}
