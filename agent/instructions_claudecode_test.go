package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/internal/claudecode"
	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstructionsAsClaudeCodeSendsThem gives Claude Code (claude -p,
// against the Messages API mock) and an Agent the same three servers, one
// of them with instructions past the bound, and checks that Claude Code's
// request holds the Agent's section word for word.
func TestInstructionsAsClaudeCodeSendsThem(t *testing.T) {
	claude := claudecode.Binary(t)
	home, project := testdir.Scratch(t)
	instructions := map[string]string{
		"gh":     "Search issues before you open one.",
		"long":   "Read this: " + strings.Repeat("x", 5000),
		"my.srv": "Two lines\nof instructions.",
	}
	servers := map[string]any{}
	for name, text := range instructions {
		servers[name] = map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{
			testproc.EnvScenario: "named", testproc.EnvTools: "t", testproc.EnvInstructions: text}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	testdir.Write(t, filepath.Join(home, ".claude.json"), string(b))

	requests := claudecode.Print(t, claude, project)
	var theirs struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		System json.RawMessage `json:"system"`
	}
	require.NoError(t, json.Unmarshal(requests[len(requests)-1], &theirs))
	var texts []string
	collect := func(raw json.RawMessage) {
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &blocks) == nil {
			for _, b := range blocks {
				texts = append(texts, b.Text)
			}
		}
	}
	collect(theirs.System)
	for _, m := range theirs.Messages {
		collect(m.Content)
	}
	all := strings.Join(texts, "\n\n")

	cfg, _ := mcp.LoadConfig(project)
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: quietLog, ConnectTimeout: 30 * time.Second})
	defer m.Close()
	s := &script{replies: []*agent.Response{answer("ok")}}
	_, err = (&agent.Agent{Model: s, Tools: []agent.ToolProvider{m}}).Chat(context.Background(), "hello")
	require.NoError(t, err)
	ours, ok := sectionOf(s.requests[0], agent.InstructionsTitle)
	require.True(t, ok)
	assert.Contains(t, all, ours.String(), "Claude Code %s sends the instructions as the Agent does", claudecode.Version)
	assert.Contains(t, ours.Text, "## long\nRead this: "+strings.Repeat("x", 4096-len("Read this: "))+"… [truncated]\n\n## my.srv\n")
}
