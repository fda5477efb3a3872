package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder keeps the params of each request the fake server received.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]json.RawMessage
}

func (r *recorder) on(m *mcptest.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]json.RawMessage{}
	}
	r.seen[m.Method] = append(r.seen[m.Method], m.Params)
}

func (r *recorder) params(method string) []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[method]
}

// replying answers method with a fixed result.
func replying(result string) mcptest.Handler {
	return func(s *mcptest.Session, m *mcptest.Message) { s.Reply(m.ID, json.RawMessage(result)) }
}

// paged answers a list method with two pages of items under key.
func paged(key string, first, second string) mcptest.Handler {
	return func(s *mcptest.Session, m *mcptest.Message) {
		if strings.Contains(string(m.Params), `"cursor":"p2"`) {
			s.Reply(m.ID, json.RawMessage(`{"`+key+`":[`+second+`]}`))
			return
		}
		s.Reply(m.ID, json.RawMessage(`{"`+key+`":[`+first+`],"nextCursor":"p2"}`))
	}
}

func TestResources(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	updated := make(chan string, 1)
	listChanged := make(chan struct{}, 1)
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"resources/list":           paged("resources", `{"uri":"file:///a.txt","name":"a","mimeType":"text/plain","size":3}`, `{"uri":"file:///b.png","name":"b"}`),
		"resources/templates/list": paged("resourceTemplates", `{"uriTemplate":"file:///{path}","name":"files"}`, `{"uriTemplate":"db://{table}","name":"tables"}`),
		"resources/read": replying(`{"contents":[
			{"uri":"file:///a.txt","mimeType":"text/plain","text":"abc"},
			{"uri":"file:///b.png","mimeType":"image/png","blob":"iVBORw0KGgo="}]}`),
		"resources/subscribe": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{}`))
			s.Notify("notifications/resources/updated", map[string]string{"uri": "file:///a.txt"})
			s.Notify("notifications/resources/list_changed", nil)
		},
		"resources/unsubscribe": replying(`{}`),
	}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger:              quiet,
		ResourceUpdated:     func(_ *mcp.Connection, uri string) { updated <- uri },
		ResourceListChanged: func(*mcp.Connection) { listChanged <- struct{}{} },
	})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)

	all, err := c.Resources(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, "file:///a.txt", all[0].URI)
	assert.Equal(t, int64(3), *all[0].Size)
	assert.Equal(t, "b", all[1].Name)

	templates, err := c.ResourceTemplates(ctx)
	require.NoError(t, err)
	require.Len(t, templates, 2)
	assert.Equal(t, "files", templates[0].Name)
	assert.Equal(t, "db://{table}", templates[1].URITemplate)

	read, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///a.txt"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 2)
	assert.Equal(t, "abc", *read.Contents[0].Text)
	assert.Nil(t, read.Contents[0].Blob)
	assert.Equal(t, "iVBORw0KGgo=", *read.Contents[1].Blob)
	assert.JSONEq(t, `{"uri":"file:///a.txt"}`, string(rec.params("resources/read")[0]))

	require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: "file:///a.txt"}))
	assert.Equal(t, "file:///a.txt", <-updated)
	<-listChanged
	require.NoError(t, c.Unsubscribe(ctx, &mcp.SubscribeParams{URI: "file:///a.txt"}))
	assert.JSONEq(t, `{"uri":"file:///a.txt"}`, string(rec.params("resources/unsubscribe")[0]))
}

func TestPrompts(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	changed := make(chan struct{}, 1)
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"prompts/list": paged("prompts", `{"name":"review","description":"Review code","arguments":[{"name":"lang","required":true}]}`, `{"name":"summarize"}`),
		"prompts/get": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{"description":"Review","messages":[
				{"role":"user","content":{"type":"text","text":"Review this Go"}},
				{"role":"user","content":{"type":"image","data":"aW1n","mimeType":"image/png"}},
				{"role":"user","content":{"type":"audio","data":"YXVk","mimeType":"audio/wav"}},
				{"role":"assistant","content":{"type":"resource","resource":{"uri":"file:///x.go","text":"package x"}}}]}`))
			s.Notify("notifications/prompts/list_changed", nil)
		},
	}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger: quiet, PromptListChanged: func(*mcp.Connection) { changed <- struct{}{} }})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)

	prompts, err := c.Prompts(ctx)
	require.NoError(t, err)
	require.Len(t, prompts, 2)
	assert.Equal(t, []mcp.PromptArgument{{Name: "lang", Required: true}}, prompts[0].Arguments)

	got, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "go"}})
	require.NoError(t, err)
	require.Len(t, got.Messages, 4)
	assert.Equal(t, "Review this Go", got.Messages[0].Content.Text)
	assert.Equal(t, "image/png", got.Messages[1].Content.MimeType)
	assert.Equal(t, "audio", got.Messages[2].Content.Type)
	assert.Equal(t, "assistant", got.Messages[3].Role)
	assert.Equal(t, "package x", *got.Messages[3].Content.Resource.Text)
	assert.JSONEq(t, `{"name":"review","arguments":{"lang":"go"}}`, string(rec.params("prompts/get")[0]))
	<-changed
}

func TestCompletionLoggingPing(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	logs := make(chan *mcp.LoggingMessage, 1)
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"completion/complete": replying(`{"completion":{"values":["go","gopher"],"total":10,"hasMore":true}}`),
		"logging/setLevel": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{}`))
			s.Notify("notifications/message", map[string]any{"level": "warning", "logger": "db", "data": map[string]any{"slow": true}})
		},
	}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger: quiet, LoggingMessage: func(_ *mcp.Connection, m *mcp.LoggingMessage) { logs <- m }})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)

	res, err := c.Complete(ctx, &mcp.CompleteParams{
		Ref:      mcp.PromptRef("review"),
		Argument: mcp.CompleteArgument{Name: "lang", Value: "go"},
		Context:  &mcp.CompleteContext{Arguments: map[string]string{"style": "strict"}},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "gopher"}, res.Completion.Values)
	assert.Equal(t, 10, *res.Completion.Total)
	assert.True(t, res.Completion.HasMore)
	assert.JSONEq(t, `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"lang","value":"go"},"context":{"arguments":{"style":"strict"}}}`,
		string(rec.params("completion/complete")[0]))
	_, err = c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.ResourceTemplateRef("file:///{path}"), Argument: mcp.CompleteArgument{Name: "path", Value: "sr"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"ref":{"type":"ref/resource","uri":"file:///{path}"},"argument":{"name":"path","value":"sr"}}`,
		string(rec.params("completion/complete")[1]))

	require.NoError(t, c.SetLoggingLevel(ctx, mcp.LevelWarning))
	assert.JSONEq(t, `{"level":"warning"}`, string(rec.params("logging/setLevel")[0]))
	m := <-logs
	assert.Equal(t, mcp.LevelWarning, m.Level)
	assert.Equal(t, "db", m.Logger)
	assert.JSONEq(t, `{"slow":true}`, string(m.Data))

	require.NoError(t, c.Ping(ctx))
	assert.Len(t, rec.params("ping"), 2, "the handshake's, and Ping's")
}

func TestServerLogsGoToSlogByDefault(t *testing.T) {
	noLeaks(t)
	logs := &logRecorder{}
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		s.Notify("notifications/message", map[string]any{"level": "error", "data": "disk full"})
		s.Reply(m.ID, mcptest.TextResult("ok"))
	}}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: slogOf(logs)})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return logs.contains("mcp: server log") }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "ERROR", logs.levelOf("mcp: server log"))
}

func TestLogBurstDuringACall(t *testing.T) {
	// 10,000 log notifications arrive while a call is pending and the log
	// handler is stuck: the call still completes, and the backlog stays
	// bounded (what does not fit is dropped and counted, not queued).
	noLeaks(t)
	release := make(chan struct{})
	var handled atomic.Int32
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		var burst strings.Builder
		for i := range 10_000 {
			fmt.Fprintf(&burst, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`+"\n", i)
		}
		s.WriteRaw(burst.String())
		s.Reply(m.ID, mcptest.TextResult("done"))
	}}}
	logs := &logRecorder{}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger: slogOf(logs),
		LoggingMessage: func(*mcp.Connection, *mcp.LoggingMessage) {
			if handled.Add(1) == 1 {
				<-release // the dispatcher is stuck on the first message
			}
		},
	})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "x", nil)
	require.NoError(t, err, "the call completes while the handler is stuck")
	assert.Equal(t, "done", res.Text())
	close(release)
	require.Eventually(t, func() bool { return logs.contains("dropped notifications") }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return handled.Load() > 1 }, 5*time.Second, time.Millisecond, "the kept backlog is served")
	require.NoError(t, c.Close()) // the dispatcher has finished
	// The dispatcher holds one batch it is serving and a queue behind it,
	// each bounded (1024): far fewer than the 10,000 sent.
	assert.LessOrEqual(t, handled.Load(), int32(2*1024+1), "the backlog is bounded")
}

func TestProgress(t *testing.T) {
	noLeaks(t)
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		var p struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
			Arguments struct{ Steps int }
		}
		json.Unmarshal(m.Params, &p)
		go func() {
			for i := 1; i <= p.Arguments.Steps; i++ {
				time.Sleep(30 * time.Millisecond) // the server working, not test synchronisation
				s.Notify("notifications/progress", map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "total": p.Arguments.Steps, "message": fmt.Sprint("step ", i)})
			}
			s.Reply(m.ID, mcptest.TextResult("finished"))
		}()
	}}}
	c := connect(t, srv.Transport())

	t.Run("progress reaches the call's callback", func(t *testing.T) {
		var got []mcp.Progress
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Progress: func(p mcp.Progress) { got = append(got, p) }})
		res, err := c.CallTool(ctx, "work", map[string]int{"steps": 3})
		require.NoError(t, err)
		assert.Equal(t, "finished", res.Text())
		require.Len(t, got, 3)
		assert.Equal(t, 3.0, got[2].Progress)
		assert.Equal(t, 3.0, *got[2].Total)
		assert.Equal(t, "step 3", got[2].Message)
	})
	t.Run("progress resets the timeout", func(t *testing.T) {
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Timeout: 200 * time.Millisecond, ResetOnProgress: true, MaxTimeout: 5 * time.Second})
		res, err := c.CallTool(ctx, "work", map[string]int{"steps": 10}) // 300 ms in all, never 200 ms without progress
		require.NoError(t, err)
		assert.Equal(t, "finished", res.Text())
	})
	t.Run("without resetting, the timeout fires", func(t *testing.T) {
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Timeout: 100 * time.Millisecond})
		_, err := c.CallTool(ctx, "work", map[string]int{"steps": 10})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "no response within 100ms")
	})
	t.Run("the hard maximum holds despite progress", func(t *testing.T) {
		ctx := mcp.WithCallOptions(ctxTimeout(t, 10*time.Second), mcp.CallOptions{Timeout: 200 * time.Millisecond, ResetOnProgress: true, MaxTimeout: 150 * time.Millisecond})
		_, err := c.CallTool(ctx, "work", map[string]int{"steps": 10})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "150ms")
	})
}

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

// tasksFor is the tasks capability of a client that runs requests as
// tasks.
func tasksFor(requests string) string {
	return `"tasks":{"list":{},"cancel":{},"requests":{` + requests + `}}`
}

// ask makes the fake server send one request to the client during a tool
// call and answer the call with the client's raw response.
func ask(method string, params any) *mcptest.Server {
	responses := make(chan *mcptest.Message, 1)
	return &mcptest.Server{
		OnMessage: func(m *mcptest.Message) {
			if m.Method == "" && string(m.ID) == `"q"` {
				responses <- m
			}
		},
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Request("q", method, params)
			go func() {
				r := <-responses
				out := string(r.Result)
				if r.Error != nil {
					out = "error:" + string(r.Error)
				}
				s.Reply(m.ID, mcptest.TextResult(out))
			}()
		}},
	}
}

// askClient runs ask and returns the client's response.
func askClient(t *testing.T, opts mcp.Options, method string, params any) string {
	t.Helper()
	opts.Logger = quiet
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), ask(method, params).Transport(), &opts)
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	require.NoError(t, err)
	return res.Text()
}

func TestRoots(t *testing.T) {
	t.Run("roots/list answers the current roots", func(t *testing.T) {
		noLeaks(t)
		got := askClient(t, mcp.Options{Roots: []mcp.Root{{URI: "file:///src", Name: "src"}}}, "roots/list", nil)
		assert.JSONEq(t, `{"roots":[{"uri":"file:///src","name":"src"}]}`, got)
	})
	t.Run("without roots, roots/list is not found", func(t *testing.T) {
		noLeaks(t)
		got := askClient(t, mcp.Options{}, "roots/list", nil)
		assert.Contains(t, got, `"code":-32601`)
	})
	t.Run("SetRoots notifies a change, and only a change", func(t *testing.T) {
		noLeaks(t)
		var changes atomic.Int32
		seen := make(chan struct{}, 4)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
			"notifications/roots/list_changed": func(*mcptest.Session, *mcptest.Message) { changes.Add(1) },
			"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				seen <- struct{}{}
				s.Reply(m.ID, mcptest.TextResult(""))
			},
		}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, Roots: []mcp.Root{}})
		require.NoError(t, err)
		defer c.Close()
		ctx := ctxTimeout(t, 5*time.Second)
		require.NoError(t, c.SetRoots(ctx, []mcp.Root{{URI: "file:///a"}}))
		require.NoError(t, c.SetRoots(ctx, []mcp.Root{{URI: "file:///a"}}))
		_, err = c.CallTool(ctx, "sync", nil) // the server reads in order: the notifications came first
		require.NoError(t, err)
		assert.Equal(t, int32(1), changes.Load())

		plain := connect(t, (&mcptest.Server{}).Transport())
		assert.ErrorIs(t, plain.SetRoots(ctx, nil), mcp.ErrNoRoots)
	})
}

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

const formSchema = `{"type":"object","properties":{
	"name":{"type":"string","minLength":1},
	"age":{"type":"integer","minimum":0,"default":30},
	"newsletter":{"type":"boolean","default":false},
	"color":{"type":"string","enum":["red","green"]},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},
	"required":["name","age"]}`

func TestElicitation(t *testing.T) {
	form := func(result *mcp.ElicitResult) mcp.ElicitHandler {
		return func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return result, nil
		}
	}
	request := json.RawMessage(`{"mode":"form","message":"Who are you?","requestedSchema":` + formSchema + `}`)
	tests := []struct {
		name    string
		opts    mcp.Options
		request json.RawMessage
		want    string
	}{
		{"an accepted form gets the schema's defaults", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}})},
			request, `{"action":"accept","content":{"name":"Ada","age":30,"newsletter":false}}`},
		{"a request without mode is a form", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}})},
			json.RawMessage(`{"message":"?","requestedSchema":` + formSchema + `}`), `{"action":"accept","content":{"name":"Ada","age":36,"newsletter":false}}`},
		{"an answer that breaks the schema is not sent", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "", "color": "blue"}})},
			request, `error:-32602`},
		{"a declined form sends no content", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "decline", Content: map[string]any{"name": "x"}})},
			request, `{"action":"decline"}`},
		{"a schema that is not a flat form is refused", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept"})},
			json.RawMessage(`{"message":"?","requestedSchema":{"type":"object","properties":{"nested":{"type":"object"}}}}`), `error:-32602`},
		{"url mode reaches its handler", mcp.Options{ElicitURL: form(&mcp.ElicitResult{Action: "accept"})},
			json.RawMessage(`{"mode":"url","message":"Log in","url":"https://example.com/auth","elicitationId":"e1"}`), `{"action":"accept"}`},
		{"a mode not offered is invalid params", mcp.Options{ElicitForm: form(&mcp.ElicitResult{Action: "accept"})},
			json.RawMessage(`{"mode":"url","message":"Log in","url":"https://example.com/auth","elicitationId":"e1"}`), `error:-32602`},
		{"no elicitation handler at all is method not found", mcp.Options{}, request, `error:-32601`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			got := askClient(t, tt.opts, "elicitation/create", tt.request)
			if code, ok := strings.CutPrefix(tt.want, "error:"); ok {
				assert.Contains(t, got, `"code":`+code)
				return
			}
			assert.JSONEq(t, tt.want, got)
		})
	}
	t.Run("url mode completion is delivered", func(t *testing.T) {
		noLeaks(t)
		done := make(chan string, 1)
		srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Notify("notifications/elicitation/complete", map[string]string{"elicitationId": "e1"})
			s.Reply(m.ID, mcptest.TextResult(""))
		}}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			ElicitURL:           form(&mcp.ElicitResult{Action: "accept"}),
			ElicitationComplete: func(_ *mcp.Connection, id string) { done <- id }})
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "e1", <-done)
	})
}

func TestOutputSchema(t *testing.T) {
	noLeaks(t)
	schemaTool := `{"name":"weather","inputSchema":{"type":"object"},"outputSchema":{
		"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"$defs":{"temp":{"type":"number"}},
		"properties":{"temp":{"$ref":"#/$defs/temp"},"unit":{"enum":["C","F"]}},
		"required":["temp"],
		"allOf":[{"if":{"properties":{"unit":{"const":"F"}}},"then":{"properties":{"temp":{"minimum":-460}}}}]}}`
	results := map[string]string{
		"good":    `{"content":[],"structuredContent":{"temp":21.5,"unit":"C"}}`,
		"bad":     `{"content":[],"structuredContent":{"temp":"warm"}}`,
		"missing": `{"content":[{"type":"text","text":"21.5"}]}`,
		"failed":  `{"content":[{"type":"text","text":"no sensor"}],"isError":true}`,
		"ifthen":  `{"content":[],"structuredContent":{"temp":-500,"unit":"F"}}`,
	}
	srv := &mcptest.Server{
		Tools: []json.RawMessage{json.RawMessage(schemaTool)},
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct{ Arguments struct{ Case string } }
			json.Unmarshal(m.Params, &p)
			s.Reply(m.ID, json.RawMessage(results[p.Arguments.Case]))
		}},
	}
	c := connect(t, srv.Transport())
	ctx := ctxTimeout(t, 5*time.Second)
	tools, err := c.Tools(ctx)
	require.NoError(t, err)
	require.Len(t, tools, 1)
	var want, got any
	require.NoError(t, json.Unmarshal([]byte(schemaTool), &want))
	raw, err := json.Marshal(tools[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, want, got, "the tool, its $schema, $defs, allOf and if/then/else round-trip")

	for _, tc := range []struct {
		name string
		ok   bool
	}{{"good", true}, {"failed", true}, {"bad", false}, {"missing", false}, {"ifthen", false}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.CallTool(ctx, "weather", map[string]string{"case": tc.name})
			if tc.ok {
				require.NoError(t, err)
				require.NotNil(t, res)
				return
			}
			var se *mcp.OutputSchemaError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "weather", se.Tool)
			assert.NotErrorIs(t, err, mcp.ErrClosed, "a schema mismatch is not a transport error")
			assert.NoError(t, c.Err())
		})
	}
}

func TestToolListCache(t *testing.T) {
	noLeaks(t)
	var lists atomic.Int32
	changed := make(chan struct{}, 1)
	srv := &mcptest.Server{
		OnMessage: func(m *mcptest.Message) {
			if m.Method == "tools/list" {
				lists.Add(1)
			}
		},
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Notify("notifications/tools/list_changed", nil)
			s.Reply(m.ID, mcptest.TextResult(""))
		}},
	}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
		ToolListChanged: func(*mcp.Connection) { changed <- struct{}{} }})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)
	_, err = c.Tools(ctx)
	require.NoError(t, err)
	_, err = c.Tools(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(1), lists.Load(), "a server that announces changes is listed once")
	_, err = c.CallTool(ctx, "x", nil)
	require.NoError(t, err)
	<-changed
	_, err = c.Tools(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(2), lists.Load(), "list_changed drops the cached list")
}

func TestTypedNilParams(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{"resources/list": replying(`{"resources":[]}`)}}
	c := connect(t, srv.Transport())
	_, err := c.Resources(ctxTimeout(t, 5*time.Second))
	require.NoError(t, err)
	assert.Nil(t, rec.params("resources/list")[0], "nil params are omitted, not sent as null")
}
