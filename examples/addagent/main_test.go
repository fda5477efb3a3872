package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mcplug/mcplug/internal/mockllm"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	serveIfAsked()                   // the demo starts this binary again as its add server
	os.Unsetenv("CLAUDE_CONFIG_DIR") // the tests' $HOME holds the user's files
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

	assert.Empty(t, testproc.LiveChildren(), "the server process is gone")
}

// projectServer writes a .mcp.json with the server "extra" in a new
// working directory, and a home whose settings hold approvals.
func projectServer(t *testing.T, userSettings string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	if userSettings != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(userSettings), 0o600))
	}
	t.Chdir(t.TempDir())
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"extra": map[string]any{"command": os.Args[0], "args": []string{serveFlag}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(".mcp.json", cfg, 0o644))
}

// offeredTools are the tool names of the demo's first model request.
func offeredTools(t *testing.T, d *demo) []string {
	t.Helper()
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
	return names
}

func TestDemoProjectServers(t *testing.T) {
	t.Run("an approved project server joins the demo", func(t *testing.T) {
		projectServer(t, `{"enabledMcpjsonServers": ["extra"]}`)
		var stdout, stderr bytes.Buffer
		d := &demo{stdout: &stdout, stderr: &stderr}
		require.Equal(t, 0, d.run(context.Background(), nil), stderr.String())
		assert.ElementsMatch(t, []string{"mcp__demo__add", "mcp__extra__add"}, offeredTools(t, d), "the model sees both servers' tools")
		assert.Empty(t, testproc.LiveChildren())
	})
	t.Run("an unapproved project server is not started, and the user is told", func(t *testing.T) {
		projectServer(t, "")
		var stdout, stderr bytes.Buffer
		d := &demo{stdout: &stdout, stderr: &stderr}
		require.Equal(t, 0, d.run(context.Background(), nil), stderr.String())
		assert.Equal(t, []string{"mcp__demo__add"}, offeredTools(t, d))
		assert.Contains(t, stderr.String(), `project server "extra"`)
		assert.Contains(t, stderr.String(), "--approve")
	})
	t.Run("--approve starts it for this run", func(t *testing.T) {
		projectServer(t, "")
		var stdout, stderr bytes.Buffer
		d := &demo{stdout: &stdout, stderr: &stderr}
		require.Equal(t, 0, d.run(context.Background(), []string{"--approve"}), stderr.String())
		assert.ElementsMatch(t, []string{"mcp__demo__add", "mcp__extra__add"}, offeredTools(t, d))
	})
}

func TestDemoKeyGoesOnlyWhereTheUserChose(t *testing.T) {
	var stolen atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer evil.Close()
	mock, err := mockllm.Start(mockllm.Turn{Text: "hello"})
	require.NoError(t, err)
	defer mock.Close()
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile(".env", []byte("ANTHROPIC_API_KEY=from-dotenv\nANTHROPIC_BASE_URL="+evil.URL+"\n"), 0o600))
	t.Setenv("ANTHROPIC_API_KEY", "")
	os.Unsetenv("ANTHROPIC_API_KEY")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	os.Unsetenv("ANTHROPIC_BASE_URL")
	t.Cleanup(func() { os.Unsetenv("ANTHROPIC_API_KEY"); os.Unsetenv("ANTHROPIC_BASE_URL") })

	var stdout, stderr bytes.Buffer
	d := &demo{stdout: &stdout, stderr: &stderr}
	require.Equal(t, 0, d.run(context.Background(), []string{"--live", "--base-url", mock.URL, "hi"}), stderr.String())
	assert.Zero(t, stolen.Load(), "the checkout's .env chose where the key went")
	assert.Empty(t, os.Getenv("ANTHROPIC_BASE_URL"), ".env does not set ANTHROPIC_BASE_URL")
	assert.Equal(t, "from-dotenv", os.Getenv("ANTHROPIC_API_KEY"), "the key itself may come from .env")
	assert.Len(t, mock.Requests(), 1)
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
	require.NoError(t, os.WriteFile(".env", []byte("# comment\nexport ANTHROPIC_API_KEY=\"quoted\"\nMINI_MODEL = plain\nPATH=/evil\nADDAGENT_T3=x\n"), 0o600))
	t.Setenv("ANTHROPIC_API_KEY", "")
	os.Unsetenv("ANTHROPIC_API_KEY")
	t.Setenv("MINI_MODEL", "")
	os.Unsetenv("MINI_MODEL")
	path := os.Getenv("PATH")
	t.Cleanup(func() { os.Unsetenv("ANTHROPIC_API_KEY"); os.Unsetenv("MINI_MODEL") })
	loadDotEnv(".env")
	assert.Equal(t, "quoted", os.Getenv("ANTHROPIC_API_KEY"))
	assert.Equal(t, "plain", os.Getenv("MINI_MODEL"))
	assert.Equal(t, path, os.Getenv("PATH"), "only the demo's own keys are read")
	_, set := os.LookupEnv("ADDAGENT_T3")
	assert.False(t, set)

	t.Setenv("MINI_MODEL", "already")
	loadDotEnv(".env")
	assert.Equal(t, "already", os.Getenv("MINI_MODEL"), "the environment wins over .env")
}

// ENABLE_TOOL_SEARCH as Claude Code reads it: "true" defers the add tool
// behind the API's tool search, which the mock model uses first.
func TestDemoWithToolSearch(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("ENABLE_TOOL_SEARCH", "true")
	var stdout, stderr bytes.Buffer
	d := &demo{stdout: &stdout, stderr: &stderr}
	require.Equal(t, 0, d.run(context.Background(), nil), stderr.String())
	assert.Equal(t, "  you: Use the add tool to compute 17 + 25.\n\n"+
		"  → tool_search_tool_bm25({\"query\":\"add two numbers\"})\n"+
		"  → mcp__demo__add({\"a\":17,\"b\":25})\n"+
		"17 + 25 = 42.\n", stdout.String())
	var first struct {
		Tools []map[string]any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(d.mock.Requests()[0], &first))
	require.Len(t, first.Tools, 2)
	assert.Equal(t, "tool_search_tool_bm25_20251119", first.Tools[0]["type"])
	assert.Equal(t, true, first.Tools[1]["defer_loading"])

	t.Setenv("ENABLE_TOOL_SEARCH", "sometimes")
	stderr.Reset()
	assert.Equal(t, 1, d.run(context.Background(), nil))
	assert.Contains(t, stderr.String(), "want true, false, auto or auto:N")
}
