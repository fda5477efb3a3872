package agent_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/anthropic"
	"github.com/mcplug/mcplug/internal/mockllm"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The Manager's permission rules, seen from the model: a tool a deny rule
// matches is not in the request the Messages API gets, a call the model
// makes to it anyway is refused, and so is a call an ask rule matches when
// the host has no AskPermission; neither reaches the server, and the turn
// goes on.
func TestADeniedToolNeverReachesTheModelNorTheServer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var calls atomic.Int32
	srv := &mcptest.Server{}
	for _, name := range []string{"get_issue", "list_repos", "delete_repo"} {
		srv.AddTool(mcp.Tool{Name: name, Description: name}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcptest.TextResult("ran " + name), nil
		})
	}
	perms := &config.Permissions{}
	for _, r := range []struct {
		text string
		b    config.Behavior
	}{{"mcp__gh__delete_*", config.Deny}, {"mcp__gh__list_repos", config.Ask}} {
		rule, err := config.ParseRule(r.text, r.b)
		require.NoError(t, err)
		rule.Scope, rule.Source = config.ScopeUser, "settings.json"
		perms.Rules = append(perms.Rules, rule)
	}
	m := mcp.NewManager(&mcp.Config{Permissions: perms}, &mcp.ManagerOptions{Logger: quietLog})
	defer m.Close()
	require.NoError(t, m.Add("gh", srv.Transport()))

	mock, err := mockllm.Start(
		mockllm.Turn{ToolCalls: []mockllm.ToolCall{{Name: "mcp__gh__delete_repo"}, {Name: "mcp__gh__list_repos"}, {Name: "mcp__gh__get_issue"}}},
		mockllm.Turn{Text: "done"},
	)
	require.NoError(t, err)
	defer mock.Close()
	a := &agent.Agent{Model: anthropic.New(option.WithBaseURL(mock.URL), option.WithAPIKey("k")), Tools: []agent.ToolProvider{m}}
	got, err := a.Chat(context.Background(), "clean up")
	require.NoError(t, err)
	assert.Equal(t, "done", got, "the turn went on")
	assert.Equal(t, int32(1), calls.Load(), "only get_issue reached the server")

	requests := mock.Requests()
	require.Len(t, requests, 2)
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Content []struct {
				Type    string `json:"type"`
				ID      string `json:"tool_use_id"`
				IsError bool   `json:"is_error"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	for i, raw := range requests {
		require.NoError(t, json.Unmarshal(raw, &req))
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		assert.ElementsMatch(t, []string{"mcp__gh__get_issue", "mcp__gh__list_repos"}, names, "request %d: the denied tool is not offered, the asked one is", i)
	}
	results := req.Messages[len(req.Messages)-1].Content
	require.Len(t, results, 3)
	text := func(i int) string {
		require.NotEmpty(t, results[i].Content)
		return results[i].Content[0].Text
	}
	assert.True(t, results[0].IsError)
	assert.Contains(t, text(0), `unknown tool "mcp__gh__delete_repo"`, "a denied tool is, to the model, no tool at all")
	assert.True(t, results[1].IsError)
	assert.Contains(t, text(1), `tool "mcp__gh__list_repos": the permission rule "mcp__gh__list_repos" of settings.json asks the user for each call, and there is no one to ask`)
	assert.False(t, results[2].IsError)
	assert.Equal(t, "ran get_issue", text(2))
}
