// Package testproc runs fake MCP servers as real child processes, by
// re-executing the test binary (Command, with Main called first in
// TestMain), and tells which processes are left (Gone, LiveChildren).
package testproc

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcplug/mcplug/internal/addserver"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// EnvScenario names the scenario a re-executed test binary runs as a
// server; EnvPIDFile is where a scenario that starts a grandchild writes the
// grandchild's pid.
const (
	EnvScenario = "MCPTEST_SCENARIO"
	EnvPIDFile  = "MCPTEST_PIDFILE"
)

// Main runs the scenario named by $MCPTEST_SCENARIO and exits; without it,
// Main returns at once. Call it first in TestMain, so that the test binary
// can serve as a child-process server:
//
//	func TestMain(m *testing.M) { testproc.Main(); os.Exit(m.Run()) }
func Main() {
	name := os.Getenv(EnvScenario)
	if name == "" {
		return
	}
	run, ok := scenarios[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "mcptest: unknown scenario %q\n", name)
		os.Exit(99)
	}
	run()
	os.Exit(0)
}

// Command returns a command that runs this test binary as the named
// scenario's server. env entries (KEY=value) are added to the environment.
func Command(scenario string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), EnvScenario+"="+scenario)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func serveStdio(srv *mcptest.Server) { srv.Serve(os.Stdin, os.Stdout) }

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

var scenarios = map[string]func(){
	// A well-behaved server with the default tools.
	"basic": func() { serveStdio(&mcptest.Server{}) },

	// A server of MCP Apps: a tool that shows a view, and the view.
	"app": func() {
		srv := &mcptest.Server{Name: "app"}
		srv.AddTool(mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://app/view.html"}}`)},
			func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
				return mcptest.TextResult("shown"), nil
			})
		view := "<p>the view</p>"
		srv.AddResource(mcp.Resource{URI: "ui://app/view.html", Name: "view", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &view}}}, nil
		})
		serveStdio(srv)
	},

	// A server of the 2026-07-28 revision only, and one of both eras.
	"modern":   func() { serveStdio(&mcptest.Server{Versions: mcptest.Modern}) },
	"dual-era": func() { serveStdio(&mcptest.Server{Versions: mcptest.DualEra}) },

	// tools/call "where" answers its working directory and
	// $CLAUDE_PROJECT_DIR; "environ", the names of its environment's
	// variables, sorted, one a line.
	"where": func() {
		serveStdio(&mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{
			"where": func(map[string]any) any {
				wd, _ := os.Getwd()
				return mcptest.TextResult(wd + "|" + os.Getenv("CLAUDE_PROJECT_DIR"))
			},
			"environ": func(map[string]any) any {
				var names []string
				for _, kv := range os.Environ() {
					k, _, _ := strings.Cut(kv, "=")
					names = append(names, k)
				}
				slices.Sort(names)
				return mcptest.TextResult(strings.Join(names, "\n"))
			},
		}})
	},

	// A server with a resource, a resource template and a prompt, whose
	// name and texts carry terminal escape sequences.
	"library": func() {
		srv := &mcptest.Server{Name: "lib\x1b[2J\x1b[1;1Hfaked"}
		text := "notes\x1b[31m red \u009b2J \u202eevil"
		read := func(context.Context, *mcptest.Request) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: "file:///notes", Text: &text}}}, nil
		}
		srv.AddResource(mcp.Resource{URI: "file:///notes", Name: "notes", Description: "the notes\x1b]0;title\x07"}, read)
		srv.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "file:///{path}", Name: "files"}, read)
		srv.AddPrompt(mcp.Prompt{Name: "review", Description: "review code", Arguments: []mcp.PromptArgument{{Name: "lang", Required: true}}}, func(_ context.Context, req *mcptest.Request) (*mcp.GetPromptResult, error) {
			var args map[string]string
			json.Unmarshal(req.Arguments, &args)
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.Content{Type: "text", Text: "review this " + args["lang"]}}}}, nil
		})
		srv.AddTool(mcp.Tool{Name: "echo", Description: "echo\x1b[2K\rfake status line", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("ok"), nil
		})
		serveStdio(srv)
	},

	// The default fake server (echo and add) over Streamable HTTP, on
	// 127.0.0.1:$PORT, until it is killed.
	"http": func() {
		ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		http.Serve(ln, &mcptest.Server{})
	},

	// The demo's add server (examples/addserver).
	"addserver": func() {
		if err := addserver.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "addserver:", err)
			os.Exit(1)
		}
	},

	// Banner and log lines on stdout before and between messages.
	"noisy": func() {
		fmt.Println("Starting fake server v1.0 ...")
		fmt.Println(`{"level":"info","msg":"JSON log line, not a message"}`)
		serveStdio(&mcptest.Server{Noise: true})
	},

	// Dies before answering initialize.
	"exit-before-init": func() {
		fmt.Fprintln(os.Stderr, "loading config")
		fmt.Fprintln(os.Stderr, "fatal: API_TOKEN is not set")
		os.Exit(3)
	},

	// Crashes on tools/call "crash".
	"crash-on-call": func() {
		serveStdio(&mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{
			"crash": func(map[string]any) any {
				fmt.Fprintln(os.Stderr, "panic: boom")
				os.Exit(2)
				return nil
			},
			"echo": mcptest.DefaultToolFuncs["echo"],
		}})
	},

	// Ignores stdin closing and SIGTERM: only SIGKILL ends it.
	"stubborn": func() {
		signal.Ignore(syscall.SIGTERM)
		serveStdio(&mcptest.Server{})
		sleepForever()
	},

	// Never answers initialize, ignores stdin closing and SIGTERM.
	"never-init": func() {
		signal.Ignore(syscall.SIGTERM)
		serveStdio(&mcptest.Server{Handlers: map[string]mcptest.Handler{"initialize": func(*mcptest.Session, *mcptest.Message) {}}})
		sleepForever()
	},

	// Starts a grandchild that inherits stdout and outlives the server.
	// tools/call "exit" makes the server exit while the grandchild lives.
	"grandchild": func() {
		gc := Command("sleeper")
		gc.Stdout = os.Stdout
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "start grandchild:", err)
			os.Exit(1)
		}
		if f := os.Getenv(EnvPIDFile); f != "" {
			os.WriteFile(f, []byte(strconv.Itoa(gc.Process.Pid)), 0o644)
		}
		serveStdio(&mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{
			"exit": func(map[string]any) any {
				fmt.Fprintln(os.Stderr, "exiting on request")
				os.Exit(1)
				return nil
			},
		}})
	},
	"sleeper": sleepForever,

	// Writes 64 MiB to stderr while serving; tools/call "flood-done" answers
	// once all of it was written (which needs the client to drain stderr).
	"stderr-flood": func() {
		done := make(chan struct{})
		go func() {
			line := strings.Repeat("e", 1023) + "\n"
			for range 64 << 10 {
				os.Stderr.WriteString(line)
			}
			close(done)
		}()
		serveStdio(&mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{
			"flood-done": func(map[string]any) any { <-done; return mcptest.TextResult("done") },
		}})
	},

	// Answers initialize, then stops reading stdin for good.
	"stop-reading": func() {
		serveStdio(&mcptest.Server{Handlers: map[string]mcptest.Handler{
			"notifications/initialized": func(*mcptest.Session, *mcptest.Message) { sleepForever() },
		}})
	},

	// tools/call "big" answers text of args.size bytes, with newlines.
	"huge": func() {
		serveStdio(&mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{
			"big": func(args map[string]any) any {
				size, _ := args["size"].(float64)
				return mcptest.TextResult(BigText(int(size)))
			},
		}})
	},
}

// BigText returns n bytes of text made of 64-byte lines.
func BigText(n int) string {
	var b strings.Builder
	b.Grow(n)
	line := strings.Repeat("x", 63) + "\n"
	for b.Len()+len(line) <= n {
		b.WriteString(line)
	}
	b.WriteString(strings.Repeat("y", n-b.Len()))
	return b.String()
}
