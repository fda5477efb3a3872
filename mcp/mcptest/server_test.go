package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// servers are the servers this test binary can run as a child process.
var servers = map[string]func() *mcptest.Server{
	"legacy": func() *mcptest.Server { return kitchenSink(nil) },
	"modern": func() *mcptest.Server { return kitchenSink(mcptest.Modern) },
	"calc":   newCalc,
}

func TestMain(m *testing.M) {
	mcptest.Main(servers)
	os.Exit(m.Run())
}

// kitchenSink is a server with a tool of each kind, a resource, a
// template and a prompt.
func kitchenSink(versions []string) *mcptest.Server {
	srv := &mcptest.Server{Versions: versions}
	srv.AddTool(mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		var in struct{ A, B float64 }
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		return mcptest.TextResult(fmt.Sprint(in.A + in.B)), nil
	})
	srv.AddTool(mcp.Tool{Name: "interview"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		answer, err := req.Elicit(ctx, &mcp.ElicitRequest{Message: "Your name?",
			RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		sample, err := req.Sample(ctx, &mcp.CreateMessageRequest{MaxTokens: 10,
			Messages: []mcp.SamplingMessage{{Role: "user", Content: []mcp.Content{{Type: "text", Text: "greet"}}}}})
		if err != nil {
			return nil, err
		}
		roots, err := req.Roots(ctx)
		if err != nil {
			return nil, err
		}
		return mcptest.TextResult(fmt.Sprintf("%s|%s|%s|%s", answer.Action, answer.Content["name"], sample.Content[0].Text, roots[0].URI)), nil
	})
	srv.AddTool(mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			req.Progress(float64(i), 3, "step")
		}
		return mcptest.TextResult("done"), nil
	})
	srv.AddTool(mcp.Tool{Name: "fail"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		return nil, errors.New("disk full")
	})
	srv.AddTool(mcp.Tool{Name: "refuse"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		return nil, &mcp.Error{Code: -32050, Message: "not today"}
	})
	srv.AddTool(mcp.Tool{Name: "wait"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	srv.AddResource(mcp.Resource{URI: "file:///readme", Name: "readme"}, func(ctx context.Context, req *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return mcptest.TextResource(req.URI, "hello"), nil
	})
	srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "db://{table}/rows", Name: "rows"}, func(ctx context.Context, req *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return mcptest.TextResource(req.URI, "rows of "+strings.Split(req.URI, "/")[2]), nil
	})
	srv.AddPrompt(mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}}, func(ctx context.Context, req *mcptest.Request) (*mcp.GetPromptResult, error) {
		var args struct{ Who string }
		req.Bind(&args)
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.Content{Type: "text", Text: "Hello, " + args.Who}}}}, nil
	})
	return srv
}

func newCalc() *mcptest.Server {
	srv := &mcptest.Server{Name: "calc"}
	srv.AddTool(mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		var in struct{ A, B int }
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		return mcptest.TextResult(fmt.Sprint(in.A + in.B)), nil
	})
	return srv
}

// clientOptions answer every kind of input.
var clientOptions = &mcp.Options{
	ElicitForm: func(ctx context.Context, c *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	},
	Sampling: func(ctx context.Context, c *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "hi there"}}, Model: "m"}, nil
	},
	Roots: []mcp.Root{{URI: "file:///work"}},
}

// transports names the ways to reach a kitchenSink server of an era: in
// memory, Streamable HTTP and stdio.
func transports(era string) map[string]func(t *testing.T) mcp.Transport {
	versions := map[string][]string{"legacy": nil, "modern": mcptest.Modern}[era]
	return map[string]func(t *testing.T) mcp.Transport{
		"in memory": func(t *testing.T) mcp.Transport { return kitchenSink(versions).Transport() },
		"HTTP": func(t *testing.T) mcp.Transport {
			ts := httptest.NewServer(kitchenSink(versions))
			t.Cleanup(ts.Close)
			client := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(client.CloseIdleConnections)
			return &mcp.StreamableHTTPTransport{URL: ts.URL, Client: client}
		},
		"stdio": func(t *testing.T) mcp.Transport { return &mcp.CommandTransport{Command: mcptest.Command(era)} },
	}
}

func noLeaks(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}

func TestServer(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		for name, tr := range transports(era) {
			t.Run(era+" over "+name, func(t *testing.T) {
				noLeaks(t)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := mcp.Connect(ctx, tr(t), clientOptions)
				require.NoError(t, err)
				defer c.Close()
				assert.Equal(t, era == "modern", c.Modern())

				t.Run("a tool's handler answers", func(t *testing.T) {
					res, err := c.CallTool(ctx, "add", map[string]any{"a": 17, "b": 25})
					require.NoError(t, err)
					assert.Equal(t, "42", res.Text())
				})
				t.Run("a handler asks the client for input", func(t *testing.T) {
					res, err := c.CallTool(ctx, "interview", nil)
					require.NoError(t, err)
					assert.Equal(t, "accept|Ada|hi there|file:///work", res.Text())
				})
				t.Run("progress reaches the caller", func(t *testing.T) {
					var got []float64
					pctx := mcp.WithCallOptions(ctx, mcp.CallOptions{Progress: func(p mcp.Progress) { got = append(got, p.Progress) }})
					_, err := c.CallTool(pctx, "progress", nil)
					require.NoError(t, err)
					assert.Equal(t, []float64{1, 2, 3}, got)
				})
				t.Run("a handler's error is a tool error", func(t *testing.T) {
					res, err := c.CallTool(ctx, "fail", nil)
					require.NoError(t, err)
					assert.True(t, res.IsError)
					assert.Equal(t, "disk full", res.Text())
				})
				t.Run("an *mcp.Error is a JSON-RPC error", func(t *testing.T) {
					_, err := c.CallTool(ctx, "refuse", nil)
					var rpcErr *mcp.Error
					require.ErrorAs(t, err, &rpcErr)
					assert.EqualValues(t, -32050, rpcErr.Code)
				})
				t.Run("a cancelled call ends its handler", func(t *testing.T) {
					wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
					defer wcancel()
					_, err := c.CallTool(wctx, "wait", nil)
					require.ErrorIs(t, err, context.DeadlineExceeded)
					res, err := c.CallTool(ctx, "add", map[string]any{"a": 1, "b": 1})
					require.NoError(t, err)
					assert.Equal(t, "2", res.Text())
				})
				t.Run("resources and templates are listed and read", func(t *testing.T) {
					rs, err := c.Resources(ctx)
					require.NoError(t, err)
					require.Len(t, rs, 1)
					assert.Equal(t, "file:///readme", rs[0].URI)
					res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///readme"})
					require.NoError(t, err)
					assert.Equal(t, "hello", *res.Contents[0].Text)
					res, err = c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://users/rows"})
					require.NoError(t, err)
					assert.Equal(t, "rows of users", *res.Contents[0].Text)
					_, err = c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://a/b/rows"})
					var rpcErr *mcp.Error
					require.ErrorAs(t, err, &rpcErr)
					assert.EqualValues(t, mcp.CodeResourceNotFound, rpcErr.Code)
				})
				t.Run("a prompt is fetched with its arguments", func(t *testing.T) {
					res, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "Ada"}})
					require.NoError(t, err)
					assert.Equal(t, "Hello, Ada", res.Messages[0].Content.Text)
				})
			})
		}
	}
}

func TestFaults(t *testing.T) {
	type setup struct {
		name    string
		connect func(t *testing.T, srv *mcptest.Server) *mcp.Connection
	}
	setups := []setup{
		{"in memory", func(t *testing.T, srv *mcptest.Server) *mcp.Connection {
			c, err := mcp.Connect(context.Background(), srv.Transport(), nil)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			return c
		}},
		{"HTTP", func(t *testing.T, srv *mcptest.Server) *mcp.Connection {
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			client := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(client.CloseIdleConnections)
			c, err := mcp.Connect(context.Background(), &mcp.StreamableHTTPTransport{URL: ts.URL, Client: client}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			return c
		}},
	}
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			t.Run("an error reply fails the next call only", func(t *testing.T) {
				noLeaks(t)
				srv := newCalc()
				c := su.connect(t, srv)
				srv.InjectFault("tools/call", mcptest.ErrorReply(-32001, "overloaded"))
				_, err := c.CallTool(context.Background(), "add", map[string]any{"a": 1, "b": 2})
				var rpcErr *mcp.Error
				require.ErrorAs(t, err, &rpcErr)
				assert.EqualValues(t, -32001, rpcErr.Code)
				assert.Equal(t, "overloaded", rpcErr.Message)
				res, err := c.CallTool(context.Background(), "add", map[string]any{"a": 1, "b": 2})
				require.NoError(t, err)
				assert.Equal(t, "3", res.Text())
			})
			t.Run("a hung call ends with the caller's ctx", func(t *testing.T) {
				noLeaks(t)
				srv := newCalc()
				c := su.connect(t, srv)
				srv.InjectFault("tools/call", mcptest.Hang())
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				_, err := c.CallTool(ctx, "add", nil)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			})
			t.Run("garbage fails the call", func(t *testing.T) {
				noLeaks(t)
				srv := newCalc()
				c := su.connect(t, srv)
				srv.InjectFault("tools/call", mcptest.Garbage("<html>502 Bad Gateway</html>"))
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				_, err := c.CallTool(ctx, "add", nil)
				assert.Error(t, err)
			})
			t.Run("a disconnect fails the call", func(t *testing.T) {
				noLeaks(t)
				srv := newCalc()
				c := su.connect(t, srv)
				srv.InjectFault("tools/call", mcptest.Disconnect())
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := c.CallTool(ctx, "add", nil)
				require.Error(t, err)
				assert.NotErrorIs(t, err, context.DeadlineExceeded)
			})
		})
	}
}

func TestAddToolNotifiesConnectedClients(t *testing.T) {
	noLeaks(t)
	srv := newCalc()
	changed := make(chan struct{}, 1)
	c, err := mcp.Connect(context.Background(), srv.Transport(), &mcp.Options{
		ToolListChanged: func(*mcp.Connection) { changed <- struct{}{} },
	})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tools, err := c.Tools(ctx)
	require.NoError(t, err)
	require.Len(t, tools, 1)

	srv.AddTool(mcp.Tool{Name: "mul"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		return mcptest.TextResult("6"), nil
	})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed")
	}
	tools, err = c.Tools(ctx)
	require.NoError(t, err)
	assert.Len(t, tools, 2)
	srv.RemoveTool("mul")
	<-changed
	tools, err = c.Tools(ctx)
	require.NoError(t, err)
	assert.Len(t, tools, 1)
}

func TestModernInputIsAskedOneRoundAtATime(t *testing.T) {
	srv := kitchenSink(mcptest.Modern)
	var rounds atomic.Int32
	srv.OnMessage = func(m *mcptest.Message) {
		if m.Method == "tools/call" {
			rounds.Add(1)
		}
	}
	c, err := mcp.Connect(context.Background(), srv.Transport(), clientOptions)
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(context.Background(), "interview", nil)
	require.NoError(t, err)
	assert.Equal(t, "accept|Ada|hi there|file:///work", res.Text())
	assert.EqualValues(t, 4, rounds.Load(), "three questions, one round each, then the answer")
}

func TestInputTheClientDoesNotOffer(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			noLeaks(t)
			tr := transports(era)["in memory"](t)
			c, err := mcp.Connect(context.Background(), tr, nil)
			require.NoError(t, err)
			defer c.Close()
			res, err := c.CallTool(context.Background(), "interview", nil)
			if era == "modern" {
				var inErr *mcp.InputError
				require.ErrorAs(t, err, &inErr)
				assert.Equal(t, "elicitation/create", inErr.Method)
				return
			}
			require.NoError(t, err) // the handler's error becomes a tool error
			assert.True(t, res.IsError)
			assert.Contains(t, res.Text(), "elicitation")
		})
	}
}
