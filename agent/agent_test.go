package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcplug/mcplug/mcp/config"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The agent's tool interface is met by the MCP types without either
// package importing the other's interface.
var (
	_ agent.ToolProvider     = (*mcp.Manager)(nil)
	_ agent.ToolProvider     = (*mcp.Connection)(nil)
	_ agent.ToolProvider     = agent.Funcs(nil)
	_ agent.ResourceProvider = (*mcp.Manager)(nil)
)

func TestMain(m *testing.M) {
	testproc.Main()
	os.Exit(m.Run())
}

// script is a Model that plays scripted replies and records each request.
type script struct {
	replies  []*agent.Response
	requests []agent.Request
}

func (s *script) Generate(_ context.Context, req *agent.Request, onText func(string)) (*agent.Response, error) {
	r := *req
	r.Messages = append([]agent.Message(nil), req.Messages...)
	s.requests = append(s.requests, r)
	if len(s.requests) > len(s.replies) {
		return nil, errors.New("script: no more replies")
	}
	resp := s.replies[len(s.requests)-1]
	if onText != nil {
		for _, b := range resp.Content {
			if b.Type == agent.BlockText {
				onText(b.Text)
			}
		}
	}
	return resp, nil
}

type imageScript struct{ *script }

func (s imageScript) AcceptsImages() bool { return true }

func call(name, input string) *agent.Response {
	return &agent.Response{Content: []agent.Block{{Type: agent.BlockToolUse, ID: "call-" + name, Name: name, Input: json.RawMessage(input)}}}
}

func answer(text string) *agent.Response {
	return &agent.Response{Content: []agent.Block{{Type: agent.BlockText, Text: text}}}
}

// lastResult returns the tool result the model was sent in its last request.
func lastResult(t *testing.T, s *script) agent.Block {
	t.Helper()
	msgs := s.requests[len(s.requests)-1].Messages
	last := msgs[len(msgs)-1]
	require.Equal(t, agent.RoleUser, last.Role)
	require.Len(t, last.Content, 1)
	require.Equal(t, agent.BlockToolResult, last.Content[0].Type)
	return last.Content[0]
}

func echoFuncs() agent.Funcs {
	return agent.Funcs{
		{Tool: mcp.Tool{Name: "echo", Description: "Echo."}, Fn: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return agent.Text(string(args)), nil
		}},
		{Tool: mcp.Tool{Name: "fail"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return nil, errors.New("disk on fire")
		}},
		{Tool: mcp.Tool{Name: "refuse"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: "text", Text: "not allowed"}}}, nil
		}},
		{Tool: mcp.Tool{Name: "big"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return agent.Text(strings.Repeat("é", 600)), nil // 1200 bytes
		}},
		{Tool: mcp.Tool{Name: "picture"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				{Type: "text", Text: "a cat"},
				{Type: "image", MimeType: "image/png", Data: tinyPNG},
				{Type: "resource_link", URI: "file:///cat.png", Name: "cat.png"},
				{Type: "resource", Resource: &mcp.ResourceContents{URI: "file:///notes.txt", Text: ptr("notes")}},
			}}, nil
		}},
	}
}

func ptr[T any](v T) *T { return &v }

func TestChatRunsToolsUntilAnswer(t *testing.T) {
	s := &script{replies: []*agent.Response{call("echo", `{ "x" : 1 }`), answer("done.")}}
	var out bytes.Buffer
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{echoFuncs()}, Output: &out}
	got, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "done.", got)
	assert.Equal(t, "  → echo({\"x\":1})\ndone.\n", out.String(), "tool calls print with compact JSON args; text streams")
	r := lastResult(t, s)
	assert.Equal(t, "call-echo", r.ToolUseID)
	assert.False(t, r.IsError)
	assert.Equal(t, `{ "x" : 1 }`, r.Content[0].Text)
	assert.Len(t, a.History(), 4)
	require.Len(t, s.requests[0].Tools, 5)
	assert.Equal(t, "echo", s.requests[0].Tools[0].Name)
}

func TestToolFailuresBecomeErrorResults(t *testing.T) {
	tests := []struct {
		name, tool, want string
		isError          bool
	}{
		{"a Go error from the tool", "fail", "Error: disk on fire", true},
		{"a result marked as an error", "refuse", "not allowed", true},
		{"an unknown tool", "nope", `Error: agent: unknown tool "nope"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{replies: []*agent.Response{call(tt.tool, `{}`), answer("recovered")}}
			a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{echoFuncs()}}
			got, err := a.Chat(context.Background(), "go")
			require.NoError(t, err, "the turn goes on")
			assert.Equal(t, "recovered", got)
			r := lastResult(t, s)
			assert.Equal(t, tt.isError, r.IsError)
			assert.Equal(t, tt.want, r.Content[0].Text)
		})
	}
}

func TestMCPServerCrashMidTurn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := &mcp.Config{Servers: map[string]*config.Server{}}
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: 300 * time.Millisecond})
	defer m.Close()
	require.NoError(t, m.Add("flaky", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		t := &mcp.CommandTransport{Command: testproc.Command("crash-on-call"), Logger: slog.New(slog.DiscardHandler)}
		return t.Connect(ctx)
	})))
	s := &script{replies: []*agent.Response{
		{Content: []agent.Block{
			{Type: agent.BlockToolUse, ID: "1", Name: "mcp__flaky__crash", Input: json.RawMessage(`{}`)},
			{Type: agent.BlockToolUse, ID: "2", Name: "mcp__flaky__echo", Input: json.RawMessage(`{"text":"x"}`)},
		}},
		answer("the server died"),
	}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{m}}
	got, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "the server died", got)
	msgs := s.requests[1].Messages
	results := msgs[len(msgs)-1].Content
	require.Len(t, results, 2, "every tool call gets its result")
	assert.True(t, results[0].IsError)
	assert.Contains(t, results[0].Content[0].Text, "panic: boom")
	assert.False(t, results[1].IsError, "the next call restarts the server")
	assert.Equal(t, "x", results[1].Content[0].Text)
	assert.Equal(t, "2", results[1].ToolUseID)
}

func TestMaxSteps(t *testing.T) {
	s := &script{replies: []*agent.Response{call("echo", `{}`), call("echo", `{}`), call("echo", `{}`)}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{echoFuncs()}, MaxSteps: 2}
	_, err := a.Chat(context.Background(), "loop")
	require.ErrorIs(t, err, agent.ErrMaxSteps)
	assert.Len(t, s.requests, 2)
	h := a.History()
	require.Len(t, h, 5)
	assert.Equal(t, agent.BlockToolResult, h[len(h)-1].Content[0].Type, "the last tool call has its result")
}

// Without files to keep results in (a negative MaxResultTokens), a text
// past MaxResultBytes is cut.
func TestTruncation(t *testing.T) {
	s := &script{replies: []*agent.Response{call("big", `{}`), answer("ok")}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{echoFuncs()}, MaxResultBytes: 101, MaxResultTokens: -1}
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	text := lastResult(t, s).Content[0].Text
	assert.True(t, strings.HasPrefix(text, strings.Repeat("é", 50)+"\n[truncated: showing 100 of 1200 bytes]"), text)
}

func TestResultContent(t *testing.T) {
	t.Run("a model that takes images gets the image", func(t *testing.T) {
		s := &script{replies: []*agent.Response{call("picture", `{}`), answer("ok")}}
		a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{echoFuncs()}}
		_, err := a.Chat(context.Background(), "go")
		require.NoError(t, err)
		c := lastResult(t, s).Content
		require.Len(t, c, 2)
		assert.Equal(t, "a cat\n[resource link: file:///cat.png cat.png]\nnotes", c[0].Text)
		assert.Equal(t, agent.Block{Type: agent.BlockImage, MediaType: "image/png", Data: tinyPNG}, c[1])
	})
	t.Run("other models get a summary", func(t *testing.T) {
		s := &script{replies: []*agent.Response{call("picture", `{}`), answer("ok")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{echoFuncs()}}
		_, err := a.Chat(context.Background(), "go")
		require.NoError(t, err)
		c := lastResult(t, s).Content
		require.Len(t, c, 1)
		assert.Equal(t, fmt.Sprintf("a cat\n[image: image/png, %d bytes base64]\n[resource link: file:///cat.png cat.png]\nnotes", len(tinyPNG)), c[0].Text)
	})
}

func TestToolNamesClaimedTwice(t *testing.T) {
	a := &agent.Agent{Model: &script{}, Tools: []agent.ToolProvider{echoFuncs(), echoFuncs()[:1]}}
	_, err := a.Chat(context.Background(), "go")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"echo" is claimed by two providers`)
}

func TestLazyMCPAndSubAgents(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var dials atomic.Int32
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	srv := &mcptest.Server{}
	require.NoError(t, m.Add("s", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		dials.Add(1)
		return srv.Transport().Connect(ctx)
	})))
	s := &script{replies: []*agent.Response{answer("sub done"), call("mcp__s__add", `{"a":1,"b":2}`), answer("3")}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{echoFuncs(), m}}
	assert.Equal(t, int32(0), dials.Load(), "constructing an agent starts nothing")

	sub := a.SubAgent("helper", echoFuncs()[:1])
	got, err := sub.Chat(context.Background(), "delegated")
	require.NoError(t, err)
	assert.Equal(t, "sub done", got)
	assert.Equal(t, int32(0), dials.Load(), "a sub-agent never connects MCP")
	require.Len(t, s.requests[0].Tools, 1)
	assert.Equal(t, "helper", s.requests[0].System)

	got, err = a.Chat(context.Background(), "add")
	require.NoError(t, err)
	assert.Equal(t, "3", got)
	assert.Equal(t, int32(1), dials.Load(), "the first Chat connects")
	assert.Len(t, s.requests[1].Tools, 7)
	assert.Equal(t, "3", lastResult(t, s).Content[0].Text)
}

func TestEveryBlockSentToTheModelIsBounded(t *testing.T) {
	huge := strings.Repeat("x", 3000)
	noise := pngData(t, picture(100, 100, true), true) // 40 KB
	tools := agent.Funcs{
		{Tool: mcp.Tool{Name: "loud-failure"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return nil, errors.New(huge)
		}},
		{Tool: mcp.Tool{Name: "pictures"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			res := &mcp.CallToolResult{Content: []mcp.Content{{Type: "image", MimeType: "image/png", Data: noise}}}
			for range 5 {
				res.Content = append(res.Content, mcp.Content{Type: "image", MimeType: "image/png", Data: tinyPNG})
			}
			return res, nil
		}},
	}
	t.Run("an error's text", func(t *testing.T) {
		s := &script{replies: []*agent.Response{call("loud-failure", `{}`), answer("ok")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}, MaxResultBytes: 100}
		_, err := a.Chat(context.Background(), "go")
		require.NoError(t, err)
		r := lastResult(t, s)
		assert.True(t, r.IsError)
		assert.Less(t, len(r.Content[0].Text), 200)
		assert.Contains(t, r.Content[0].Text, "[truncated")
	})
	t.Run("images, in size and in number", func(t *testing.T) {
		s := &script{replies: []*agent.Response{call("pictures", `{}`), answer("ok")}}
		a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{tools}, MaxImageBytes: 2000, MaxImages: 3}
		_, err := a.Chat(context.Background(), "go")
		require.NoError(t, err)
		c := lastResult(t, s).Content
		images := 0
		for _, b := range c {
			if b.Type == agent.BlockImage {
				images++
				assert.LessOrEqual(t, len(b.Data), 2000)
			}
		}
		assert.Equal(t, 3, images)
		require.Equal(t, agent.BlockText, c[0].Type)
		assert.Contains(t, c[0].Text, "[image: image/png, 100×100 pixels, ", "the large one is scaled down to fit")
		assert.Contains(t, c[0].Text, "bytes base64) to fit 2000×2000 pixels and 2,000 bytes]")
		assert.Equal(t, 3, strings.Count(c[0].Text, "not shown, past the limit of 3 images a result"), "the three past the count")
	})
}

// growing is a provider whose tool grow adds a tool.
type growing struct {
	mu    sync.Mutex
	funcs agent.Funcs
}

func (g *growing) Tools(ctx context.Context) ([]mcp.Tool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.funcs.Tools(ctx)
}

func (g *growing) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	if name == "grow" {
		g.mu.Lock()
		g.funcs = append(g.funcs, agent.Func{Tool: mcp.Tool{Name: "grown"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return agent.Text("I am new"), nil
		}})
		g.mu.Unlock()
		return agent.Text("grew"), nil
	}
	g.mu.Lock()
	f := g.funcs
	g.mu.Unlock()
	return f.CallTool(ctx, name, args)
}

func TestTheAgentKeepsUpWithToolChanges(t *testing.T) {
	t.Run("a tool added during a turn is offered on the next", func(t *testing.T) {
		g := &growing{funcs: agent.Funcs{{Tool: mcp.Tool{Name: "grow"}}}}
		s := &script{replies: []*agent.Response{call("grow", `{}`), call("grown", `{}`), answer("done")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{g}}
		got, err := a.Chat(context.Background(), "go")
		require.NoError(t, err)
		assert.Equal(t, "done", got)
		require.Len(t, s.requests, 3)
		assert.Len(t, s.requests[0].Tools, 1)
		assert.Len(t, s.requests[1].Tools, 2, "the next turn sees the new tool")
		assert.Equal(t, "I am new", lastResult(t, s).Content[0].Text)
	})
	t.Run("an MCP server's list_changed reaches the next Chat of the same Agent", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		srv := &mcptest.Server{}
		srv.AddTool(mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
			srv.AddTool(mcp.Tool{Name: "later"}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
				return mcptest.TextResult("later"), nil
			})
			return mcptest.TextResult("added"), nil
		})
		m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
		defer m.Close()
		require.NoError(t, m.Add("s", srv.Transport()))
		s := &script{replies: []*agent.Response{call("mcp__s__echo", `{"text":"x"}`), answer("one"), answer("two")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{m}}
		_, err := a.Chat(context.Background(), "first")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			ts, _ := m.Tools(context.Background())
			return len(ts) == 2
		}, 10*time.Second, time.Millisecond, "the Manager refreshed its list")
		_, err = a.Chat(context.Background(), "second")
		require.NoError(t, err)
		require.Len(t, s.requests, 3)
		assert.Len(t, s.requests[0].Tools, 1)
		assert.Len(t, s.requests[2].Tools, 2, "the same Agent offers the new tool")
	})
}

func TestResourceTools(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := &mcptest.Server{}
	srv.AddResource(mcp.Resource{URI: "file:///guide.md", Name: "guide", MimeType: "text/markdown"}, func(ctx context.Context, req *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return mcptest.TextResource(req.URI, "# Read me"), nil
	})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	require.NoError(t, m.Add("docs", srv.Transport()))
	s := &script{replies: []*agent.Response{call("list_mcp_resources", `{}`), call("read_mcp_resource", `{"ref":"@docs:file:///guide.md"}`), answer("read")}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{m, agent.ResourceTools(m)}}
	_, err := a.Chat(context.Background(), "what does the guide say?")
	require.NoError(t, err)
	require.Len(t, s.requests, 3)
	list := s.requests[1].Messages[len(s.requests[1].Messages)-1].Content[0]
	assert.Contains(t, list.Content[0].Text, "@docs:file:///guide.md\tguide\ttext/markdown")
	assert.Equal(t, "# Read me", lastResult(t, s).Content[0].Text)

	t.Run("off unless added", func(t *testing.T) {
		s := &script{replies: []*agent.Response{answer("hi")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{m}}
		_, err := a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		for _, tool := range s.requests[0].Tools {
			assert.NotContains(t, tool.Name, "mcp_resource")
		}
	})
}

func TestWhatOneRequestCarriesIsBounded(t *testing.T) {
	photo := pngData(t, picture(27, 27, true), true) // 3,000 bytes base64, or near
	require.InDelta(t, 3000, len(photo), 100)
	output := strings.Repeat("t", 3000)
	tools := agent.Funcs{
		{Tool: mcp.Tool{Name: "photo"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{{Type: "image", MimeType: "image/png", Data: photo}}}, nil
		}},
		{Tool: mcp.Tool{Name: "log"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return agent.Text(output), nil
		}},
	}
	// carried sums what a request's tool results weigh, as sent.
	carried := func(req agent.Request) (n int, notes []string) {
		for _, m := range req.Messages {
			for _, b := range m.Content {
				for _, c := range b.Content {
					n += len(c.Data) + len(c.Text)
					if strings.Contains(c.Text, "dropped from the conversation") {
						notes = append(notes, c.Text)
					}
				}
			}
		}
		return n, notes
	}
	for _, tc := range []struct{ name, tool string }{{"images, the oldest first", "photo"}, {"texts, once no image is left", "log"}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{replies: []*agent.Response{call(tc.tool, `{}`), call(tc.tool, `{}`), call(tc.tool, `{}`), answer("ok")}}
			a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{tools}, MaxRequestBytes: 7000}
			_, err := a.Chat(context.Background(), "go")
			require.NoError(t, err)
			require.Len(t, s.requests, 4)
			for i, req := range s.requests {
				n, _ := carried(req)
				assert.LessOrEqual(t, n, 7000, "request %d", i)
			}
			n, notes := carried(s.requests[3])
			assert.Greater(t, n, 5800, "the two newest results are whole")
			require.Len(t, notes, 1, "the oldest one is a note")
			assert.Regexp(t, ` (3000|`+strconv.Itoa(len(photo))+`) bytes`, notes[0])
			_, early := carried(s.requests[1])
			assert.Empty(t, early, "a request already made keeps what it was sent")
		})
	}
	t.Run("40 MiB of images in one result stay under the default", func(t *testing.T) {
		big := pngData(t, picture(1130, 1130, true), true) // noise: 5.1 MB of base64, just under the bound of one image
		require.Greater(t, len(big), agent.DefaultMaxRequestBytes/5)
		require.LessOrEqual(t, len(big), agent.DefaultMaxImageBytes)
		many := agent.Funcs{{Tool: mcp.Tool{Name: "album"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			res := &mcp.CallToolResult{}
			for range 8 {
				res.Content = append(res.Content, mcp.Content{Type: "image", MimeType: "image/png", Data: big})
			}
			return res, nil
		}}}
		s := &script{replies: []*agent.Response{call("album", `{}`), answer("ok")}}
		a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{many}}
		_, err := a.Chat(context.Background(), "go")
		require.NoError(t, err)
		n, notes := carried(s.requests[1])
		assert.LessOrEqual(t, n, agent.DefaultMaxRequestBytes)
		assert.Len(t, notes, 4, "4 of the 8 images are dropped")
	})
}

// A tool an MCP server makes visible to its views alone (MCP Apps,
// visibility ["app"]) is never offered to the model, nor can the model
// call it by name.
func TestAToolForViewsAloneNeverReachesTheModel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := &mcptest.Server{}
	srv.AddTool(mcp.Tool{Name: "show", Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://s/view.html"}}`)}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
		return mcptest.TextResult("shown"), nil
	})
	srv.AddTool(mcp.Tool{Name: "poll", Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`)}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
		return mcptest.TextResult("polled"), nil
	})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler), Extensions: mcp.UIExtension()})
	defer m.Close()
	require.NoError(t, m.Add("s", srv.Transport()))
	s := &script{replies: []*agent.Response{call("mcp__s__poll", `{}`), answer("done")}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{m}}
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, s.requests, 2)
	var names []string
	for _, tool := range s.requests[0].Tools {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"mcp__s__show"}, names)
	res := lastResult(t, s)
	assert.True(t, res.IsError, "a call by the hidden name fails")
	assert.NotContains(t, res.Content[0].Text, "polled")
}
