package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/agenttest"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checker is a provider of no tools that refuses the calls of one tool
// and records every call it is asked about.
type checker struct {
	refuse string
	asked  []string
}

func (c *checker) Tools(context.Context) ([]mcp.Tool, error) { return nil, nil }
func (c *checker) CallTool(context.Context, string, any) (*mcp.CallToolResult, error) {
	return nil, errors.New("no tools")
}

func (c *checker) CheckCall(_ context.Context, name string, args json.RawMessage) error {
	c.asked = append(c.asked, name+" "+string(args))
	if name == c.refuse {
		return errors.New("not now")
	}
	return nil
}

var _ agent.CallChecker = (*checker)(nil)

// counted is a provider of the tools names, each counting its calls.
func counted(calls map[string]int, names ...string) agent.Funcs {
	var fs agent.Funcs
	for _, name := range names {
		fs = append(fs, agent.Func{Tool: mcp.Tool{Name: name}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			calls[name]++
			return agent.Text("ran " + name), nil
		}})
	}
	return fs
}

func TestACallCheckerIsAskedBeforeEveryCallAndMayRefuseOne(t *testing.T) {
	calls := map[string]int{}
	c := &checker{refuse: "rm"}
	model := agenttest.New(
		agenttest.Calls(
			agenttest.ToolCall{Name: "rm", Args: map[string]string{"path": "/"}},
			agenttest.ToolCall{Name: "ls", Args: json.RawMessage(" ")},
			agenttest.ToolCall{Name: "nothing"},
		),
		agenttest.Text("done"),
	)
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{counted(calls, "rm", "ls"), c}}
	answer, err := a.Chat(ctx(t), "clean up")
	require.NoError(t, err, "a refusal ends no turn")
	assert.Equal(t, "done", answer)

	assert.Equal(t, []string{`rm {"path":"/"}`, "ls {}"}, c.asked,
		"asked about another provider's tools, with the model's arguments ({} for none); not about a tool no provider has")
	assert.Equal(t, map[string]int{"ls": 1}, calls, "the refused tool is not called")
	results := agenttest.ToolResults(model.Request(1))
	require.Len(t, results, 3)
	assert.True(t, results[0].IsError)
	assert.Equal(t, "Error: not now", agenttest.ResultText(results[0]), "the model sees why")
	assert.False(t, results[1].IsError)
	assert.Equal(t, "ran ls", agenttest.ResultText(results[1]))
	assert.Contains(t, agenttest.ResultText(results[2]), "unknown tool")
}

func TestTheAgentsOwnToolsAreChecked(t *testing.T) {
	calls := map[string]int{}
	c := &checker{refuse: agent.SearchToolName}
	model := agenttest.New(agenttest.Call(agent.SearchToolName, map[string]string{"query": "select:ls"}), agenttest.Text("done"))
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{counted(calls, "ls"), c}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
	_, err := a.Chat(ctx(t), "find ls")
	require.NoError(t, err)
	assert.Equal(t, []string{agent.SearchToolName + ` {"query":"select:ls"}`}, c.asked)
	results := agenttest.ToolResults(model.Request(1))
	require.Len(t, results, 1)
	assert.Equal(t, "Error: not now", agenttest.ResultText(results[0]))
}
