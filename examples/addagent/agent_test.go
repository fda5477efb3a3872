package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/agenttest"
	"github.com/mcplug/mcplug/internal/testproc"
)

// The demo's agent, with a scripted model in place of the mock API: the
// test reads what the model was sent at each turn.
func TestTheDemoAgentWithAScriptedModel(t *testing.T) {
	t.Run("the add tool is offered, called in the server process, and its result sent back", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("ENABLE_TOOL_SEARCH", "false")
		m := agenttest.New(
			agenttest.Call("mcp__demo__add", map[string]int{"a": 17, "b": 25}),
			agenttest.Text("17 + 25 = 42."),
		)
		var stdout, stderr bytes.Buffer
		d := &demo{stdout: &stdout, stderr: &stderr, model: m}
		require.Equal(t, 0, d.run(context.Background(), nil), stderr.String())
		assert.Equal(t, []string{"mcp__demo__add"}, agenttest.ToolNames(m.Request(0)))
		results := agenttest.ToolResults(m.Request(1))
		require.Len(t, results, 1)
		assert.Equal(t, "42", agenttest.ResultText(results[0]), "the sum was computed by the add server process")
		assert.False(t, results[0].IsError)
		assert.Contains(t, stdout.String(), "  → mcp__demo__add({\"a\":17,\"b\":25})\n17 + 25 = 42.\n")
		assert.Empty(t, testproc.LiveChildren())
	})
	t.Run("with tool search, the model is told what it can search for", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("ENABLE_TOOL_SEARCH", "true")
		m := agenttest.New(
			agenttest.Call(agent.SearchToolName, map[string]string{"query": "select:mcp__demo__add"}),
			agenttest.Call("mcp__demo__add", map[string]int{"a": 17, "b": 25}),
			agenttest.Text("17 + 25 = 42."),
		)
		var stdout, stderr bytes.Buffer
		d := &demo{stdout: &stdout, stderr: &stderr, model: m}
		require.Equal(t, 0, d.run(context.Background(), nil), stderr.String())
		first := m.Request(0)
		assert.Equal(t, []string{agent.SearchToolName}, agenttest.ToolNames(first), "the first request carries the search tool alone")
		text, ok := agenttest.SectionText(first, agent.DeferredSectionTitle)
		require.True(t, ok, "and a section that names the deferred tools")
		assert.Contains(t, text, "\nmcp__demo__add")
		assert.Equal(t, []string{"mcp__demo__add"}, agenttest.ToolNames(m.Request(1)), "the tool found is loaded (and nothing is left to search)")
		assert.Equal(t, "42", agenttest.ResultText(agenttest.ToolResults(m.Request(2))[0]))
	})
}
