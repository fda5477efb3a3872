package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCapabilitiesMatchHandlers(t *testing.T) {
	sampling := func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return nil, nil
	}
	elicit := func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }
	tests := []struct {
		name string
		opts mcp.Options
		want string
	}{
		{"no handlers offer nothing", mcp.Options{}, `{}`},
		{"roots", mcp.Options{Roots: []mcp.Root{}}, `{"roots":{"listChanged":true}}`},
		{"sampling, also as a task", mcp.Options{Sampling: sampling}, `{"sampling":{},` + tasksFor(`"sampling":{"createMessage":{}}`) + `}`},
		{"sampling with tools", mcp.Options{Sampling: sampling, SamplingTools: true}, `{"sampling":{"tools":{}},` + tasksFor(`"sampling":{"createMessage":{}}`) + `}`},
		{"form elicitation", mcp.Options{ElicitForm: elicit}, `{"elicitation":{"form":{}},` + tasksFor(`"elicitation":{"create":{}}`) + `}`},
		{"url elicitation", mcp.Options{ElicitURL: elicit}, `{"elicitation":{"url":{}},` + tasksFor(`"elicitation":{"create":{}}`) + `}`},
		{"everything", mcp.Options{Roots: []mcp.Root{}, Sampling: sampling, ElicitForm: elicit, ElicitURL: elicit},
			`{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},` + tasksFor(`"sampling":{"createMessage":{}},"elicitation":{"create":{}}`) + `}`},
		{"tasks disabled", mcp.Options{Sampling: sampling, DisableTasks: true}, `{"sampling":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			rec := &recorder{}
			opts := tt.opts
			opts.Logger = quiet
			c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), (&mcptest.Server{OnMessage: rec.on}).Transport(), &opts)
			require.NoError(t, err)
			defer c.Close()
			var p struct{ Capabilities json.RawMessage }
			require.NoError(t, json.Unmarshal(rec.params("initialize")[0], &p))
			assert.JSONEq(t, tt.want, string(p.Capabilities))
		})
	}
}

func TestSlowHandlersDoNotStallTraffic(t *testing.T) {
	t.Run("a slow sampling handler while other calls proceed", func(t *testing.T) {
		noLeaks(t)
		release := make(chan struct{})
		started := make(chan struct{})
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct{ Name string }
			json.Unmarshal(m.Params, &p)
			if p.Name == "sample" {
				s.Request("slow", "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
			}
			s.Reply(m.ID, mcptest.TextResult(p.Name))
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			Sampling: func(ctx context.Context, _ *mcp.Connection, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				close(started)
				select { // a model call that takes its time
				case <-release:
				case <-ctx.Done():
				}
				return &mcp.CreateMessageResult{Model: "m"}, nil
			}})
		require.NoError(t, err)
		defer c.Close()
		ctx := ctxTimeout(t, 5*time.Second)
		_, err = c.CallTool(ctx, "sample", nil)
		require.NoError(t, err)
		<-started
		for i := range 20 {
			res, err := c.CallTool(ctx, fmt.Sprint("other-", i), nil)
			require.NoError(t, err, "calls proceed while sampling is pending")
			assert.Equal(t, fmt.Sprint("other-", i), res.Text())
		}
		require.NoError(t, c.Ping(ctx))
		close(release)
	})
	t.Run("a handler may call the server while its request is pending", func(t *testing.T) {
		noLeaks(t)
		handler := func(ctx context.Context, c *mcp.Connection, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			tools, err := c.Tools(ctx) // a call back into the server
			if err != nil {
				return nil, err
			}
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: fmt.Sprint(len(tools), " tools")}}, Model: "m"}, nil
		}
		out := askClient(t, mcp.Options{Sampling: handler}, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":1}`))
		assert.Contains(t, out, `"text":"2 tools"`)
	})
	t.Run("a request the server cancels ends the handler's ctx and gets no answer", func(t *testing.T) {
		noLeaks(t)
		ended := make(chan error, 1)
		started := make(chan struct{})
		responded := make(chan struct{}, 1)
		var session atomic.Pointer[mcptest.Session]
		srv := &mcptest.Server{
			OnMessage: func(m *mcptest.Message) {
				if m.Method == "" && string(m.ID) == `"s1"` {
					responded <- struct{}{}
				}
			},
			Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				session.Store(s)
				s.Request("s1", "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
				s.Reply(m.ID, mcptest.TextResult("ok"))
			}},
		}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			Sampling: func(ctx context.Context, _ *mcp.Connection, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				close(started)
				<-ctx.Done()
				ended <- ctx.Err()
				return &mcp.CreateMessageResult{Model: "m"}, nil
			}})
		require.NoError(t, err)
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		<-started
		session.Load().Notify("notifications/cancelled", map[string]any{"requestId": "s1", "reason": "changed my mind"})
		assert.ErrorIs(t, <-ended, context.Canceled)
		require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second))) // anything the client sent is read by now
		require.NoError(t, c.Close())
		assert.Empty(t, responded, "no answer to a cancelled request")
	})
	t.Run("a request cancelled before it is served never reaches the handler", func(t *testing.T) {
		noLeaks(t)
		responded := make(chan struct{}, 1)
		srv := &mcptest.Server{
			OnMessage: func(m *mcptest.Message) {
				if m.Method == "" && string(m.ID) == `"s2"` {
					responded <- struct{}{}
				}
			},
			Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				s.Notify("notifications/resources/updated", map[string]any{"uri": "file:///busy"})
				s.Request("s2", "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
				s.Notify("notifications/cancelled", map[string]any{"requestId": "s2"})
				s.Reply(m.ID, mcptest.TextResult("ok"))
			}},
		}
		busy, release := make(chan struct{}), make(chan struct{})
		var sampled atomic.Bool
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			ResourceUpdated: func(*mcp.Connection, string) { close(busy); <-release }, // holds the dispatcher
			Sampling: func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				sampled.Store(true)
				return &mcp.CreateMessageResult{Model: "m"}, nil
			}})
		require.NoError(t, err)
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		<-busy
		require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second))) // the request and its cancellation are read
		close(release)
		require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second)))
		require.NoError(t, c.Close()) // waits for the dispatcher
		assert.False(t, sampled.Load())
		assert.Empty(t, responded)
	})
}

func TestServerRequests(t *testing.T) {
	t.Run("a ping with a string id during a call is answered with an empty object", func(t *testing.T) {
		noLeaks(t)
		assert.Equal(t, `{}`, askClient(t, mcp.Options{}, "ping", nil)) // ask sends id "q"
	})
	t.Run("an unknown request gets method not found", func(t *testing.T) {
		noLeaks(t)
		var e struct{ Code int }
		got := askClient(t, mcp.Options{}, "custom/unknown", map[string]any{})
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(got, "error:")), &e), got)
		assert.Equal(t, mcp.CodeMethodNotFound, e.Code)
	})
	t.Run("duplicate and unknown-id responses are dropped", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(json.RawMessage("999"), mcptest.TextResult("stray"))
			s.Reply(m.ID, mcptest.TextResult("first"))
			s.Reply(m.ID, mcptest.TextResult("second"))
		}}}
		c := connect(t, srv.Transport())
		for range 3 {
			res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
			require.NoError(t, err)
			assert.Equal(t, "first", res.Text())
		}
		assert.NoError(t, c.Err())
	})
}
