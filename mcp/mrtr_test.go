package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retryParams are the MRTR fields of a request's params.
type retryParams struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

func inputRequired(requests map[string]any, state string) map[string]any {
	r := map[string]any{"resultType": "input_required", "inputRequests": requests}
	if state != "" {
		r["requestState"] = state
	}
	return r
}

func TestMultiRoundTripRequests(t *testing.T) {
	elicitation := map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": "name?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}}}
	sampling := map[string]any{"method": "sampling/createMessage", "params": map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "capital of France?"}}}, "maxTokens": 10}}
	roots := map[string]any{"method": "roots/list"}
	opts := func() *mcp.Options {
		return &mcp.Options{Logger: quiet, Roots: []mcp.Root{{URI: "file:///src"}},
			ElicitForm: func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "octocat"}}, nil
			},
			Sampling: func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Content: []mcp.Content{{Type: "text", Text: "Paris"}}, Model: "m"}, nil
			}}
	}

	t.Run("input requests are answered by the Options handlers and the request retried", func(t *testing.T) {
		noLeaks(t)
		var ids []string
		var second retryParams
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			ids = append(ids, string(m.ID))
			var p retryParams
			json.Unmarshal(m.Params, &p)
			if p.InputResponses == nil {
				s.Reply(m.ID, inputRequired(map[string]any{"who": elicitation, "ask": sampling, "where": roots}, "opaque-state"))
				return
			}
			second = p
			s.Reply(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "done"}}})
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), opts())
		require.NoError(t, err)
		defer c.Close()
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "t", map[string]string{"a": "b"})
		require.NoError(t, err)
		assert.Equal(t, "done", res.Text())
		require.Len(t, ids, 2)
		assert.NotEqual(t, ids[0], ids[1], "the retry is a new request")
		require.NotNil(t, second.RequestState)
		assert.Equal(t, "opaque-state", *second.RequestState, "the state is echoed exactly")
		assert.JSONEq(t, `{"action":"accept","content":{"name":"octocat"}}`, string(second.InputResponses["who"]))
		assert.Contains(t, string(second.InputResponses["ask"]), "Paris")
		assert.JSONEq(t, `{"roots":[{"uri":"file:///src"}]}`, string(second.InputResponses["where"]))
	})
	t.Run("several rounds, each with its own state, and no state when the server gave none", func(t *testing.T) {
		noLeaks(t)
		var seen []retryParams
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"prompts/get": func(s *mcptest.Session, m *mcptest.Message) {
			var p retryParams
			json.Unmarshal(m.Params, &p)
			seen = append(seen, p)
			switch len(seen) {
			case 1:
				s.Reply(m.ID, inputRequired(map[string]any{"a": roots}, "one"))
			case 2:
				s.Reply(m.ID, inputRequired(map[string]any{"b": roots}, ""))
			default:
				s.Reply(m.ID, map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}})
			}
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), opts())
		require.NoError(t, err)
		defer c.Close()
		got, err := c.GetPrompt(ctxTimeout(t, 5*time.Second), &mcp.GetPromptParams{Name: "p"})
		require.NoError(t, err)
		require.Len(t, got.Messages, 1)
		require.Len(t, seen, 3)
		assert.Equal(t, "one", *seen[1].RequestState)
		assert.Nil(t, seen[2].RequestState, "no state in a retry when the server gave none")
		assert.Contains(t, seen[2].InputResponses, "b")
		assert.NotContains(t, seen[2].InputResponses, "a", "each round answers its own requests")
	})
	t.Run("a server that never stops asking is bounded", func(t *testing.T) {
		noLeaks(t)
		calls := 0
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			calls++
			s.Reply(m.ID, inputRequired(map[string]any{"again": roots}, fmt.Sprint(calls)))
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), opts())
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
		assert.ErrorIs(t, err, mcp.ErrInputRounds)
		assert.Equal(t, 9, calls, "the first request and 8 rounds")
	})
	t.Run("an input the client cannot give fails the call with an *InputError", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, inputRequired(map[string]any{"ask": sampling}, ""))
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet})
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
		var ie *mcp.InputError
		require.ErrorAs(t, err, &ie)
		assert.Equal(t, "sampling/createMessage", ie.Method)
		assert.Equal(t, "ask", ie.Key)
	})
	t.Run("a declined elicitation is an answer", func(t *testing.T) {
		noLeaks(t)
		var answer json.RawMessage
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p retryParams
			json.Unmarshal(m.Params, &p)
			if p.InputResponses == nil {
				s.Reply(m.ID, inputRequired(map[string]any{"who": elicitation}, ""))
				return
			}
			answer = p.InputResponses["who"]
			s.Reply(m.ID, mcptest.TextResult("fine"))
		}}}
		o := opts()
		o.ElicitForm = func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), o)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
		require.NoError(t, err)
		assert.JSONEq(t, `{"action":"decline"}`, string(answer))
	})
	t.Run("a handler error fails the call with it", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, inputRequired(map[string]any{"ask": sampling}, ""))
		}}}
		o := opts()
		o.Sampling = func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("model unavailable")
		}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), o)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
		assert.ErrorContains(t, err, "model unavailable")
	})
	t.Run("a legacy server's result is never taken for input_required", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, map[string]any{"resultType": "input_required", "content": []any{map[string]any{"type": "text", "text": "legacy"}}})
		}}}
		c := connect(t, srv.Transport())
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
		require.NoError(t, err)
		assert.Equal(t, "legacy", res.Text())
	})
}

func TestAFailedRetryKeepsItsError(t *testing.T) {
	noLeaks(t)
	calls := 0
	srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		calls++
		if calls == 1 {
			s.Reply(m.ID, inputRequired(map[string]any{"r": map[string]any{"method": "roots/list"}}, "st"))
			return
		}
		s.ReplyError(m.ID, -32000, "the retry failed")
	}}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, Roots: []mcp.Root{}})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
	assert.Nil(t, res)
	var rpcErr *mcp.Error
	require.ErrorAs(t, err, &rpcErr, "the retry's own error, not a malformed result")
	assert.Equal(t, "the retry failed", rpcErr.Message)
}

func TestModernURLElicitationNeedsNoElicitationID(t *testing.T) {
	noLeaks(t)
	var answer json.RawMessage
	srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		var p retryParams
		json.Unmarshal(m.Params, &p)
		if p.InputResponses == nil { // 2026-07-28 removed elicitationId
			s.Reply(m.ID, inputRequired(map[string]any{"login": map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "url", "message": "sign in", "url": "https://example.com/login"}}}, ""))
			return
		}
		answer = p.InputResponses["login"]
		s.Reply(m.ID, mcptest.TextResult("in"))
	}}}
	var asked string
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
		ElicitURL: func(_ context.Context, _ *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "t", nil)
	require.NoError(t, err)
	assert.Equal(t, "https://example.com/login", asked)
	assert.JSONEq(t, `{"action":"accept"}`, string(answer))
}
