package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSampling(t *testing.T) {
	t.Run("a request reaches the handler and its answer the server", func(t *testing.T) {
		noLeaks(t)
		var got *mcp.CreateMessageRequest
		handler := func(_ context.Context, _ *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			got = req
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "hi there"}}, Model: "test-model", StopReason: "endTurn"}, nil
		}
		out := askClient(t, mcp.Options{Sampling: handler}, "sampling/createMessage", json.RawMessage(`{
			"messages":[{"role":"user","content":{"type":"text","text":"hello"}}],
			"systemPrompt":"be kind","maxTokens":100,"modelPreferences":{"hints":[{"name":"claude"}],"speedPriority":0.5}}`))
		assert.JSONEq(t, `{"role":"assistant","content":{"type":"text","text":"hi there"},"model":"test-model","stopReason":"endTurn"}`, out)
		require.NotNil(t, got)
		assert.Equal(t, "hello", got.Messages[0].Content[0].Text)
		assert.Equal(t, "be kind", got.SystemPrompt)
		assert.Equal(t, 100, got.MaxTokens)
		assert.Equal(t, "claude", got.ModelPreferences.Hints[0].Name)
	})
	t.Run("tool use in sampling", func(t *testing.T) {
		noLeaks(t)
		var got *mcp.CreateMessageRequest
		handler := func(_ context.Context, _ *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			got = req
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "tool_use", ID: "t2", Name: "weather", Input: json.RawMessage(`{"city":"Oslo"}`)}},
				Model: "m", StopReason: "toolUse"}, nil
		}
		out := askClient(t, mcp.Options{Sampling: handler, SamplingTools: true}, "sampling/createMessage", json.RawMessage(`{
			"messages":[
				{"role":"user","content":{"type":"text","text":"weather?"}},
				{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"weather","input":{"city":"Bergen"}}]},
				{"role":"user","content":[{"type":"tool_result","toolUseId":"t1","content":[{"type":"text","text":"rain"}]}]}],
			"maxTokens":50,
			"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"}}`))
		assert.JSONEq(t, `{"role":"assistant","content":{"type":"tool_use","id":"t2","name":"weather","input":{"city":"Oslo"}},"model":"m","stopReason":"toolUse"}`, out)
		require.Len(t, got.Messages, 3)
		assert.Equal(t, "t1", got.Messages[1].Content[0].ID)
		assert.JSONEq(t, `{"city":"Bergen"}`, string(got.Messages[1].Content[0].Input))
		assert.Equal(t, "t1", got.Messages[2].Content[0].ToolUseID)
		assert.Equal(t, "rain", got.Messages[2].Content[0].Content[0].Text)
		assert.Equal(t, "weather", got.Tools[0].Name)
	})
	t.Run("tools are refused when tool use was not offered", func(t *testing.T) {
		noLeaks(t)
		handler := func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("must not be called")
		}
		out := askClient(t, mcp.Options{Sampling: handler}, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":1,"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`))
		assert.Contains(t, out, `"code":-32602`)
	})
	t.Run("a handler error becomes a JSON-RPC error", func(t *testing.T) {
		noLeaks(t)
		handler := func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, &mcp.Error{Code: -1, Message: "user rejected"}
		}
		out := askClient(t, mcp.Options{Sampling: handler}, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":1}`))
		assert.Contains(t, out, `"message":"user rejected"`)
	})
}
