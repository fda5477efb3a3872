package agenttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/agenttest"
	"github.com/mcplug/mcplug/mcp"
)

func TestTheScript(t *testing.T) {
	ctx := context.Background()
	t.Run("replies in order, then ErrNoReply", func(t *testing.T) {
		m := agenttest.New(agenttest.Text("one"), agenttest.Text("two"))
		for _, want := range []string{"one", "two"} {
			resp, err := m.Generate(ctx, &agent.Request{}, nil)
			require.NoError(t, err)
			assert.Equal(t, want, resp.Text())
			assert.Equal(t, agent.StopEndTurn, resp.StopReason)
		}
		_, err := m.Generate(ctx, &agent.Request{}, nil)
		assert.ErrorIs(t, err, agenttest.ErrNoReply)
		assert.ErrorContains(t, err, "request 3, and the script has 2 replies")
		m.Add(agenttest.Text("three"))
		resp, err := m.Generate(ctx, &agent.Request{}, nil)
		require.NoError(t, err, "Add extends the script")
		assert.Equal(t, "three", resp.Text())
	})
	t.Run("tool calls get IDs, arguments as JSON", func(t *testing.T) {
		m := agenttest.New(agenttest.Calls(
			agenttest.ToolCall{Name: "a", Args: map[string]int{"x": 1}},
			agenttest.ToolCall{Name: "b", Args: json.RawMessage(`{"y": 2}`)},
			agenttest.ToolCall{Name: "c"},
		), agenttest.Call("d", `"s"`))
		resp, err := m.Generate(ctx, &agent.Request{}, nil)
		require.NoError(t, err)
		require.Len(t, resp.Content, 3)
		assert.Equal(t, agent.StopToolUse, resp.StopReason)
		for i, want := range []struct{ id, input string }{{"toolu_1", `{"x":1}`}, {"toolu_2", `{"y": 2}`}, {"toolu_3", `{}`}} {
			assert.Equal(t, want.id, resp.Content[i].ID)
			assert.Equal(t, want.input, string(resp.Content[i].Input))
		}
		resp, err = m.Generate(ctx, &agent.Request{}, nil)
		require.NoError(t, err)
		assert.Equal(t, "toolu_4", resp.Content[0].ID)
		assert.Equal(t, `"\"s\""`, string(resp.Content[0].Input), "a string is encoded as JSON")
	})
	t.Run("a reply sees the request; a failure is the model's error", func(t *testing.T) {
		boom := errors.New("overloaded")
		m := agenttest.New(func(req *agent.Request) (*agent.Response, error) {
			return &agent.Response{Content: []agent.Block{{Type: agent.BlockText, Text: "you said " + req.Messages[0].Content[0].Text}}}, nil
		}, agenttest.Fail(boom))
		var streamed string
		resp, err := m.Generate(ctx, &agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}}},
			func(s string) { streamed += s })
		require.NoError(t, err)
		assert.Equal(t, "you said hi", resp.Text())
		assert.Equal(t, "you said hi", streamed, "text goes to onText")
		_, err = m.Generate(ctx, &agent.Request{}, nil)
		assert.ErrorIs(t, err, boom)
	})
	t.Run("an ended ctx", func(t *testing.T) {
		m := agenttest.New(agenttest.Text("never"))
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err := m.Generate(done, &agent.Request{}, nil)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("the requests are recorded as they were sent", func(t *testing.T) {
		m := agenttest.New(agenttest.Text("ok"))
		req := &agent.Request{System: "sys", Sections: []agent.Section{{Title: "T", Text: "x"}},
			Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Block{{Type: agent.BlockText, Text: "hi"}}}},
			Tools:    []mcp.Tool{{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
		_, err := m.Generate(ctx, req, nil)
		require.NoError(t, err)
		req.Messages[0].Content[0].Text = "changed"
		req.Tools[0].InputSchema[2] = 'X'
		req.Sections[0].Text = "changed"
		got := m.Request(0)
		assert.Equal(t, "hi", got.Messages[0].Content[0].Text)
		assert.Equal(t, `{"type":"object"}`, string(got.Tools[0].InputSchema))
		text, ok := agenttest.SectionText(got, "T")
		assert.True(t, ok)
		assert.Equal(t, "x", text)
		assert.Equal(t, []string{"a"}, agenttest.ToolNames(got))
		assert.Nil(t, m.Request(1))
		assert.Len(t, m.Requests(), 1)
	})
	t.Run("images and search, as the test says", func(t *testing.T) {
		m := &agenttest.Model{Images: true, Searches: true}
		assert.True(t, m.AcceptsImages())
		assert.True(t, m.SearchesTools())
		assert.False(t, agenttest.New().AcceptsImages())
	})
	t.Run("safe for concurrent use", func(t *testing.T) {
		m := &agenttest.Model{}
		for range 8 {
			m.Add(agenttest.Call("x", nil))
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := m.Generate(ctx, &agent.Request{}, nil)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		assert.Len(t, m.Requests(), 8)
	})
}
