package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/agenttest"
	"github.com/mcplug/mcplug/mcp"
)

// keeper is a Model that keeps every request it is sent, as it was
// passed (no copy), and what each said then.
type keeper struct {
	*agenttest.Model
	kept []*agent.Request
	then []string
}

func (k *keeper) Generate(ctx context.Context, req *agent.Request, onText func(string)) (*agent.Response, error) {
	k.kept = append(k.kept, req)
	b, _ := json.Marshal(req)
	k.then = append(k.then, string(b))
	return k.Model.Generate(ctx, req, onText)
}

// A Model may keep a request after Generate returns: the Agent never
// changes it, not even when it later drops old tool results from its
// history to keep requests small.
func TestAModelMayKeepItsRequests(t *testing.T) {
	big := agent.Funcs{{Tool: mcp.Tool{Name: "big"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return agent.Text(strings.Repeat("x", 600)), nil
	}}}
	k := &keeper{Model: agenttest.New(agenttest.Call("big", nil), agenttest.Call("big", nil), agenttest.Call("big", nil), agenttest.Text("done"))}
	a := &agent.Agent{Model: k, Tools: []agent.ToolProvider{big}, MaxRequestBytes: 1000}
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, k.kept, 4)
	last := k.kept[3].Messages
	assert.Contains(t, agenttest.ResultText(last[2].Content[0]), "dropped from the conversation", "the oldest result was dropped from the history")
	for i, req := range k.kept {
		now, _ := json.Marshal(req)
		assert.Equal(t, k.then[i], string(now), "request %d changed after Generate returned", i)
	}
}

func TestTheStopReasonSteersTheLoop(t *testing.T) {
	cut := func(reason string) agenttest.Reply {
		return agenttest.Respond(&agent.Response{StopReason: reason, Content: []agent.Block{
			{Type: agent.BlockText, Text: "Deleting the"},
			{Type: agent.BlockToolUse, ID: "t1", Name: "delete", Input: json.RawMessage(`{"path": "/tmp/a`)},
		}})
	}
	tests := []struct {
		name    string
		replies []agenttest.Reply
		answer  string
		err     error
		ran     int32
	}{
		{"a reply cut at the output limit: its tool call is not run", []agenttest.Reply{cut(agent.StopMaxTokens)}, "Deleting the", agent.ErrTruncated, 0},
		{"a reply cut at the context window", []agenttest.Reply{cut(agent.StopContextWindow)}, "Deleting the", agent.ErrTruncated, 0},
		{"a refusal", []agenttest.Reply{agenttest.Respond(&agent.Response{StopReason: agent.StopRefusal, Content: []agent.Block{{Type: agent.BlockText, Text: "I can't help with that."}}})},
			"I can't help with that.", agent.ErrRefused, 0},
		{"a paused turn goes on", []agenttest.Reply{
			agenttest.Respond(&agent.Response{StopReason: agent.StopPauseTurn, Content: []agent.Block{{Type: agent.BlockText, Text: "Searching"}}}),
			agenttest.Text(" done."),
		}, " done.", nil, 0},
		{"a tool call, then the end of the turn", []agenttest.Reply{agenttest.Call("delete", map[string]string{"path": "/tmp/a"}), agenttest.Text("Deleted.")}, "Deleted.", nil, 1},
		{"a model that gives no stop reason", []agenttest.Reply{agenttest.Respond(&agent.Response{Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}})}, "hi", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Int32
			tools := agent.Funcs{{Tool: mcp.Tool{Name: "delete"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				ran.Add(1)
				return agent.Text("deleted"), nil
			}}}
			m := agenttest.New(tt.replies...)
			var out strings.Builder
			a := &agent.Agent{Model: m, Tools: []agent.ToolProvider{tools}, Output: &out}
			answer, err := a.Chat(context.Background(), "clean up")
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.answer, answer)
			assert.Equal(t, tt.ran, ran.Load(), "tool runs")
			assert.Len(t, m.Requests(), len(tt.replies), "model requests")
			// Every tool call in the history has its result.
			h := a.History()
			calls, results := 0, 0
			for _, msg := range h {
				for _, b := range msg.Content {
					switch b.Type {
					case agent.BlockToolUse:
						calls++
					case agent.BlockToolResult:
						results++
						if tt.err != nil {
							assert.True(t, b.IsError)
							assert.Contains(t, agenttest.ResultText(b), "not run")
						}
					}
				}
			}
			assert.Equal(t, calls, results)
		})
	}
	t.Run("the paused reply goes back as it is", func(t *testing.T) {
		m := agenttest.New(
			agenttest.Respond(&agent.Response{StopReason: agent.StopPauseTurn, Content: []agent.Block{{Type: agent.BlockServerToolUse, ID: "s1", Name: "tool_search_tool_bm25", Input: json.RawMessage(`{"query":"x"}`)}}}),
			agenttest.Text("ok"),
		)
		a := &agent.Agent{Model: m}
		_, err := a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		second := m.Request(1).Messages
		require.Len(t, second, 2, "the user's message and the paused reply, nothing after it")
		assert.Equal(t, agent.RoleAssistant, second[1].Role)
		assert.Equal(t, agent.BlockServerToolUse, second[1].Content[0].Type)
	})
}
