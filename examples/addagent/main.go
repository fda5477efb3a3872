// Command addagent is the demo: a model calls an external MCP tool, add,
// served by a real child process over stdio.
//
//	go run ./examples/addagent              # no API key: a local mock model
//	go run ./examples/addagent --live "What is 1234 + 4321? Use the add tool."
//
// Without --live, a local server that speaks the Messages API replays two
// turns (call mcp__demo__add with {"a":17,"b":25}, then answer); the agent
// talks to it through the real Anthropic client, and the add tool runs in a
// real server process (this program, started again with --serve-add). With
// --live, the prompt goes to the real API (ANTHROPIC_API_KEY from the
// environment or a .env file; MINI_MODEL picks the model). The key goes
// only to the endpoint the user chose: ANTHROPIC_BASE_URL from the
// environment or --base-url, never from .env, which may have come with a
// checkout; of .env only ANTHROPIC_API_KEY and MINI_MODEL are read.
//
// The project servers of the working directory (.mcp.json,
// .claude/settings.json) are added beside "demo" once the user approved
// them in their own settings, as Claude Code asks (see mcp.LoadConfig);
// --approve approves them for this run.
//
// ENABLE_TOOL_SEARCH is read as Claude Code reads it: "auto" (the
// default: tools are deferred behind a search once their definitions pass
// 10% of the context), "auto:N", "true" or "false". With the search on,
// the mock model searches first (the Messages API's tool search tool),
// then calls the tool it found.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/mcplug/mcplug/mcp/config"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/anthropic"
	"github.com/mcplug/mcplug/internal/addserver"
	"github.com/mcplug/mcplug/internal/mockllm"
	"github.com/mcplug/mcplug/mcp"
)

const demoPrompt = "Use the add tool to compute 17 + 25."

// serveFlag makes this program the add server.
const serveFlag = "--serve-add"

func main() {
	serveIfAsked()
	d := &demo{stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(d.run(context.Background(), os.Args[1:]))
}

// serveIfAsked runs the add server on stdio and exits, when this program
// was started as one.
func serveIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == serveFlag {
		if err := addserver.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "addserver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

type demo struct {
	stdout, stderr io.Writer
	mock           *mockllm.Server // the mock model, when not --live
	baseURL        string          // --base-url
	approve        bool            // --approve
	// model, when set, is the model instead of the mock's or the API's
	// (a test's scripted model, agenttest).
	model agent.Model
}

func (d *demo) run(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("addagent", flag.ContinueOnError)
	fs.SetOutput(d.stderr)
	live := fs.Bool("live", false, "talk to the real Anthropic API (needs ANTHROPIC_API_KEY)")
	baseURL := fs.String("base-url", "", "with --live, the API `URL` (default: $ANTHROPIC_BASE_URL, else Anthropic's)")
	approve := fs.Bool("approve", false, "start the project's servers without asking (they run commands from the checkout)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	d.baseURL, d.approve = *baseURL, *approve
	if err := d.chat(ctx, *live, strings.Join(fs.Args(), " ")); err != nil {
		fmt.Fprintln(d.stderr, "addagent:", err)
		return 1
	}
	return 0
}

func (d *demo) chat(ctx context.Context, live bool, prompt string) error {
	search, err := agent.ParseToolSearch(os.Getenv("ENABLE_TOOL_SEARCH"))
	if err != nil {
		return err
	}
	servers, err := d.config()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(d.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := &mcp.ManagerOptions{Logger: logger}
	if d.approve {
		opts.ApproveServer = func(context.Context, *config.Server) bool { return true }
	}
	tools := mcp.NewManager(servers, opts)
	defer tools.Close()
	tools.Connect(ctx)
	for _, st := range tools.Status() {
		if st.State == mcp.StateNeedsApproval {
			fmt.Fprintf(d.stderr, "addagent: project server %q (%s) was not started: approve it in your settings (enabledMcpjsonServers), or run with --approve\n", st.Name, st.Source)
		}
	}

	var model agent.Model = d.model
	switch {
	case model != nil:
		if prompt == "" {
			prompt = demoPrompt
		}
	case live:
		loadDotEnv(".env")
		if os.Getenv("ANTHROPIC_API_KEY") == "" {
			return errors.New("--live needs ANTHROPIC_API_KEY (in the environment or a .env file)")
		}
		if prompt == "" {
			prompt = demoPrompt
		}
		var opts []option.RequestOption
		if d.baseURL != "" {
			opts = append(opts, option.WithBaseURL(d.baseURL))
		}
		model = anthropic.New(opts...)
	default:
		if prompt != "" {
			fmt.Fprintln(d.stderr, "addagent: the mock model plays a fixed scenario; use --live to send your own prompt")
		}
		prompt = demoPrompt
		first := mockllm.Turn{ToolCalls: []mockllm.ToolCall{{Name: "mcp__demo__add", Input: []byte(`{"a":17,"b":25}`)}}}
		if list, err := tools.Tools(ctx); err == nil && search.Defers(list) {
			first.Search = &mockllm.Search{Query: "add two numbers", Found: []string{"mcp__demo__add"}}
		}
		mock, err := mockllm.Start(first, mockllm.Turn{Text: "17 + 25 = 42."})
		if err != nil {
			return err
		}
		defer mock.Close()
		d.mock = mock
		model = anthropic.New(option.WithBaseURL(mock.URL), option.WithAPIKey("mock-key"))
	}

	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{tools}, Output: d.stdout, ToolSearch: search}
	defer a.Close() // the results it kept in files, if any
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	fmt.Fprintf(d.stdout, "  you: %s\n\n", prompt)
	_, err = a.Chat(ctx, prompt)
	return err
}

// config is the demo server, plus the project servers of the working
// directory, with the approvals of the user's own settings.
func (d *demo) config() (*mcp.Config, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program to start the add server: %w", err)
	}
	cfg := &mcp.Config{Servers: map[string]*config.Server{}}
	all, err := mcp.LoadConfig(".")
	if err != nil {
		fmt.Fprintln(d.stderr, "addagent:", err)
	}
	for _, name := range all.Names() {
		if sc := all.Servers[name]; sc.Scope == config.ScopeProject {
			cfg.Servers[name] = sc
		}
	}
	cfg.Servers["demo"] = &config.Server{Name: "demo", Type: config.TypeStdio, Command: exe, Args: []string{serveFlag}}
	return cfg, nil
}

// dotEnvKeys are the only keys read from .env: a .env that came with a
// checkout must not choose where the key goes (ANTHROPIC_BASE_URL) or what
// the servers run with (PATH, say).
var dotEnvKeys = map[string]bool{"ANTHROPIC_API_KEY": true, "MINI_MODEL": true}

// loadDotEnv sets the KEY=value lines of path that are not set already,
// for the keys of dotEnvKeys only.
func loadDotEnv(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if !dotEnvKeys[k] {
			continue
		}
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
		}
	}
}
