package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mcplug/mcplug/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	serveIfAsked() // the demo starts this binary again as its add server
	os.Exit(m.Run())
}

func TestDemoEndToEnd(t *testing.T) {
	t.Chdir(t.TempDir()) // no .mcp.json here
	var stdout, stderr bytes.Buffer
	d := &demo{stdout: &stdout, stderr: &stderr}
	code := d.run(context.Background(), nil)
	require.Equal(t, 0, code, stderr.String())

	assert.Equal(t, "  you: Use the add tool to compute 17 + 25.\n\n"+
		"  → mcp__demo__add({\"a\":17,\"b\":25})\n"+
		"17 + 25 = 42.\n", stdout.String())
	assert.Empty(t, stderr.String())

	reqs := d.mock.Requests()
	require.Len(t, reqs, 2, "the mock model was asked exactly twice")
	var second struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(reqs[1], &second))
	last := second.Messages[len(second.Messages)-1]
	require.Equal(t, "user", last.Role)
	require.Len(t, last.Content, 1)
	result := last.Content[0]
	assert.Equal(t, "tool_result", result.Type)
	assert.False(t, result.IsError)
	require.Len(t, result.Content, 1)
	assert.Equal(t, "42", result.Content[0].Text, "the sum was computed by the add server process")

	assert.Empty(t, mcptest.LiveChildren(), "the server process is gone")
}

func TestDemoAddsTheServersOfMcpJSON(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"extra": map[string]any{"command": os.Args[0], "args": []string{serveFlag}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(".mcp.json", cfg, 0o644))
	var stdout, stderr bytes.Buffer
	d := &demo{stdout: &stdout, stderr: &stderr}
	require.Equal(t, 0, d.run(context.Background(), nil), stderr.String())
	var first struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(d.mock.Requests()[0], &first))
	var names []string
	for _, tool := range first.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"mcp__demo__add", "mcp__extra__add"}, names, "the model sees both servers' tools")
	assert.Empty(t, mcptest.LiveChildren())
}

func TestDemoLiveNeedsAKey(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("ANTHROPIC_API_KEY", "")
	var stdout, stderr bytes.Buffer
	d := &demo{stdout: &stdout, stderr: &stderr}
	assert.Equal(t, 1, d.run(context.Background(), []string{"--live", "hi"}))
	assert.Contains(t, stderr.String(), "ANTHROPIC_API_KEY")
}

func TestLoadDotEnv(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile(".env", []byte("# comment\nexport ADDAGENT_T1=\"quoted\"\nADDAGENT_T2 = plain\nADDAGENT_T3=kept\n"), 0o600))
	t.Setenv("ADDAGENT_T1", "")
	os.Unsetenv("ADDAGENT_T1")
	t.Setenv("ADDAGENT_T3", "already")
	loadDotEnv(".env")
	t.Cleanup(func() { os.Unsetenv("ADDAGENT_T2") })
	assert.Equal(t, "quoted", os.Getenv("ADDAGENT_T1"))
	assert.Equal(t, "plain", os.Getenv("ADDAGENT_T2"))
	assert.Equal(t, "already", os.Getenv("ADDAGENT_T3"), "the environment wins over .env")
}
