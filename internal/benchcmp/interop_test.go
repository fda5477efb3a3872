package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
)

// The kinds of server mcplug must reach without knowing which is which,
// as the official Go SDK builds them.
var kinds = map[string][]string{
	"modern-only": {"2026-07-28"},
	"dual-era":    nil, // the SDK's default: every version it knows
	"legacy-only": {"2025-11-25"},
}

// envKind makes this test binary a go-sdk stdio server of that kind.
const envKind = "BENCHCMP_GOSDK_KIND"

// envDelay makes that server wait so long before it reads anything, as a
// server does that starts slowly (a cold npx, a container).
const envDelay = "BENCHCMP_GOSDK_DELAY"

func TestMain(m *testing.M) {
	if kind := os.Getenv(envKind); kind != "" {
		if d, err := time.ParseDuration(os.Getenv(envDelay)); err == nil {
			time.Sleep(d)
		}
		if err := goSDKServer(kind).Run(context.Background(), &gosdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// goSDKServer is a go-sdk server of the given kind with a tool, a tool
// that asks the user (elicitation), one that asks the model (sampling),
// one that asks for the roots, a slow tool, a resource, a prompt and
// completion. The tools that need input return it as input requests: a
// modern client is asked through MRTR, a legacy one with server requests.
func goSDKServer(kind string) *gosdk.Server {
	srv := gosdk.NewServer(&gosdk.Implementation{Name: "gosdk-" + kind, Version: "1.8.0"}, &gosdk.ServerOptions{
		SupportedProtocolVersions: kinds[kind],
		CompletionHandler: func(_ context.Context, req *gosdk.CompleteRequest) (*gosdk.CompleteResult, error) {
			return &gosdk.CompleteResult{Completion: gosdk.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "lang"}}}, nil
		},
	})
	if kind == "modern-only" {
		// go-sdk answers initialize whatever its versions; a modern-only
		// server refuses it, naming what it speaks, as the spec says.
		srv.AddReceivingMiddleware(func(next gosdk.MethodHandler) gosdk.MethodHandler {
			return func(ctx context.Context, method string, req gosdk.Request) (gosdk.Result, error) {
				if method == "initialize" {
					return nil, fmt.Errorf("initialize is not supported: this server speaks %v", kinds[kind])
				}
				return next(ctx, method, req)
			}
		})
	}
	type sum struct {
		Sum float64 `json:"sum"`
	}
	gosdk.AddTool(srv, &gosdk.Tool{Name: "add"}, func(_ context.Context, _ *gosdk.CallToolRequest, in struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}) (*gosdk.CallToolResult, sum, error) {
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, sum{in.A + in.B}, nil
	})
	input := func(name string, request gosdk.InputRequest, answer func(gosdk.InputResponse) string) {
		gosdk.AddTool(srv, &gosdk.Tool{Name: name}, func(_ context.Context, req *gosdk.CallToolRequest, _ struct{}) (*gosdk.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["in"]
			if !ok {
				return &gosdk.CallToolResult{InputRequests: gosdk.InputRequestMap{"in": request}, RequestState: name + "-state"}, nil, nil
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: answer(resp)}}}, nil, nil
		})
	}
	input("ask", &gosdk.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}},
		func(r gosdk.InputResponse) string {
			e := r.(*gosdk.ElicitResult)
			return fmt.Sprintf("%s %v", e.Action, e.Content["name"])
		})
	input("sample", &gosdk.CreateMessageParams{MaxTokens: 10, Messages: []*gosdk.SamplingMessage{{Role: "user", Content: &gosdk.TextContent{Text: "capital of France?"}}}},
		func(r gosdk.InputResponse) string {
			switch m := r.(type) {
			case *gosdk.CreateMessageResult:
				return m.Content.(*gosdk.TextContent).Text
			case *gosdk.CreateMessageWithToolsResult:
				return m.Content[0].(*gosdk.TextContent).Text
			}
			return fmt.Sprintf("%T", r)
		})
	input("roots", &gosdk.ListRootsParams{}, func(r gosdk.InputResponse) string {
		var uris []string
		for _, root := range r.(*gosdk.ListRootsResult).Roots {
			uris = append(uris, root.URI)
		}
		return strings.Join(uris, ",")
	})
	gosdk.AddTool(srv, &gosdk.Tool{Name: "slow"}, func(ctx context.Context, _ *gosdk.CallToolRequest, _ struct{}) (*gosdk.CallToolResult, any, error) {
		select { // until the client gives up (the SDK's stateless HTTP handler does not always say so)
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "late"}}}, nil, nil
	})
	gosdk.AddTool(srv, &gosdk.Tool{Name: "grow"}, func(context.Context, *gosdk.CallToolRequest, struct{}) (*gosdk.CallToolResult, any, error) {
		gosdk.AddTool(srv, &gosdk.Tool{Name: "grown"}, func(context.Context, *gosdk.CallToolRequest, struct{}) (*gosdk.CallToolResult, any, error) {
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "new"}}}, nil, nil
		})
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "grew"}}}, nil, nil
	})
	srv.AddResource(&gosdk.Resource{URI: "file:///readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *gosdk.ReadResourceRequest) (*gosdk.ReadResourceResult, error) {
			return &gosdk.ReadResourceResult{Contents: []*gosdk.ResourceContents{{URI: "file:///readme", MIMEType: "text/plain", Text: "read me"}}}, nil
		})
	srv.AddPrompt(&gosdk.Prompt{Name: "greet", Arguments: []*gosdk.PromptArgument{{Name: "who"}}},
		func(_ context.Context, req *gosdk.GetPromptRequest) (*gosdk.GetPromptResult, error) {
			return &gosdk.GetPromptResult{Messages: []*gosdk.PromptMessage{{Role: "user", Content: &gosdk.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	return srv
}

func TestInteropWithGoSDKServers(t *testing.T) {
	transports := map[string]func(t *testing.T, kind string) mcp.Transport{
		"stdio": func(t *testing.T, kind string) mcp.Transport {
			return mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), envKind+"="+kind)
				return (&mcp.CommandTransport{Command: cmd}).Connect(ctx)
			})
		},
		// The SDK speaks 2026-07-28 over HTTP only when stateless; a stateful
		// dual-era server answers server/discover, then refuses 2026-07-28
		// for everything else: mcplug speaks 2025-11-25 with it instead.
		"stateful-http": func(t *testing.T, kind string) mcp.Transport {
			srv := goSDKServer(kind)
			h := httptest.NewServer(gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return srv }, nil))
			t.Cleanup(h.Close)
			return &mcp.StreamableHTTPTransport{URL: h.URL}
		},
		"streamable-http": func(t *testing.T, kind string) mcp.Transport {
			srv := goSDKServer(kind)
			opts := &gosdk.StreamableHTTPOptions{Stateless: kind != "legacy-only"}
			h := httptest.NewServer(gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return srv }, opts))
			t.Cleanup(h.Close)
			return &mcp.StreamableHTTPTransport{URL: h.URL}
		},
	}
	for _, tname := range []string{"stdio", "streamable-http", "stateful-http"} {
		for _, kind := range []string{"modern-only", "dual-era", "legacy-only"} {
			if tname == "stateful-http" && kind != "dual-era" {
				continue
			}
			t.Run(kind+" over "+tname, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				changed := make(chan struct{}, 8)
				c, err := mcp.Connect(ctx, transports[tname](t, kind), &mcp.Options{
					ToolListChanged: func(*mcp.Connection) { changed <- struct{}{} },
					Logger:          slog.New(slog.DiscardHandler),
					Roots:           []mcp.Root{{URI: "file:///work"}},
					ElicitForm: func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "octocat"}}, nil
					},
					Sampling: func(context.Context, *mcp.Connection, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						return &mcp.CreateMessageResult{Role: "assistant", Content: []mcp.Content{{Type: "text", Text: "Paris"}}, Model: "m", StopReason: "endTurn"}, nil
					},
				})
				require.NoError(t, err)
				defer c.Close()
				wantModern := kind != "legacy-only" && tname != "stateful-http"
				assert.Equal(t, wantModern, c.Modern(), "the era: %s", c.InitializeResult().ProtocolVersion)
				assert.Equal(t, "gosdk-"+kind, c.InitializeResult().ServerInfo.Name)

				tools, err := c.Tools(ctx)
				require.NoError(t, err)
				assert.Len(t, tools, 6)
				call := func(name string, args any) string {
					t.Helper()
					res, err := c.CallTool(ctx, name, args)
					require.NoError(t, err, name)
					require.False(t, res.IsError, "%s: %s", name, res.Text())
					return res.Text()
				}
				assert.Equal(t, "42", call("add", map[string]any{"a": 17, "b": 25}))
				assert.Equal(t, "accept octocat", call("ask", nil), "elicitation")
				assert.Equal(t, "Paris", call("sample", nil), "sampling")
				assert.Equal(t, "file:///work", call("roots", nil), "roots")

				read, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///readme"})
				require.NoError(t, err)
				require.Len(t, read.Contents, 1)
				assert.Equal(t, "read me", *read.Contents[0].Text)
				prompt, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "gopher"}})
				require.NoError(t, err)
				require.Len(t, prompt.Messages, 1)
				assert.Equal(t, "hello gopher", prompt.Messages[0].Content.Text)
				done, err := c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.PromptRef("greet"), Argument: mcp.CompleteArgument{Name: "who", Value: "go"}})
				require.NoError(t, err)
				assert.Equal(t, []string{"golang"}, done.Completion.Values)

				// A change of tools reaches the handler: through
				// subscriptions/listen (modern) or unasked (legacy).
				assert.Equal(t, "grew", call("grow", nil))
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatal("notifications/tools/list_changed never came")
				}
				tools, err = c.Tools(ctx)
				require.NoError(t, err)
				assert.Len(t, tools, 7, "the new tool is listed")

				short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
				defer stop()
				_, err = c.CallTool(short, "slow", nil)
				assert.ErrorIs(t, err, context.DeadlineExceeded, "cancellation")
				assert.Equal(t, "42", call("add", map[string]any{"a": 40, "b": 2}), "the connection goes on after a cancelled call")
			})
		}
	}
}

// Servers that take 5 s to start, as the seed's 15 s connect bound
// allows: mcplug waits for the probe's answer instead of taking a slow
// modern server for a legacy one.
func TestInteropWithSlowGoSDKServers(t *testing.T) {
	const delay = 5 * time.Second
	transports := map[string]func(t *testing.T, kind string) mcp.Transport{
		"stdio": func(t *testing.T, kind string) mcp.Transport {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envKind+"="+kind, envDelay+"="+delay.String())
			return &mcp.CommandTransport{Command: cmd}
		},
		"streamable-http": func(t *testing.T, kind string) mcp.Transport {
			srv := goSDKServer(kind)
			inner := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return srv }, &gosdk.StreamableHTTPOptions{Stateless: true})
			ready := time.Now().Add(delay)
			h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select { // accepted, but nothing served before the server is up
				case <-time.After(time.Until(ready)):
				case <-r.Context().Done():
					return
				}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(h.Close)
			return &mcp.StreamableHTTPTransport{URL: h.URL}
		},
	}
	for _, tname := range []string{"stdio", "streamable-http"} {
		for _, kind := range []string{"modern-only", "dual-era"} {
			t.Run(kind+" over "+tname, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				defer cancel()
				start := time.Now()
				c, err := mcp.Connect(ctx, transports[tname](t, kind), &mcp.Options{Logger: slog.New(slog.DiscardHandler)})
				require.NoError(t, err)
				defer c.Close()
				assert.GreaterOrEqual(t, time.Since(start), delay, "it did wait for the server")
				if kind == "modern-only" {
					assert.Equal(t, "2026-07-28", c.InitializeResult().ProtocolVersion)
				} else {
					// Both are right: a dual-era server read discover and
					// initialize at once and answers both, in an order its
					// scheduler picks (the probe's own tests settle the
					// preference in fake time).
					assert.Contains(t, []string{"2026-07-28", "2025-11-25"}, c.InitializeResult().ProtocolVersion)
				}
				res, err := c.CallTool(ctx, "add", map[string]any{"a": 17, "b": 25})
				require.NoError(t, err)
				assert.Equal(t, "42", res.Text())
			})
		}
	}
}
