package main

// mcpls add | add-json | remove | get | list | reset-project-choices, as
// `claude mcp` has them: the same flags, defaults (local scope), files
// and messages; exit status 0 on success, 1 when the change cannot be
// made, 2 for a wrong command line.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
)

// commands are mcpls's subcommands, by name.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"add":                   addCommand,
	"add-json":              addJSONCommand,
	"remove":                removeCommand,
	"get":                   getCommand,
	"reset-project-choices": resetCommand,
	"install":               installCommand,
}

// cmdLine is a subcommand's command line: flags anywhere before "--",
// positional arguments, and everything after "--" as is.
type cmdLine struct {
	scope     config.Scope
	scopeSet  bool
	transport string
	env       []string
	headers   []string
	dir       string
	registry  string
	name      string
	yes       bool
	all       bool // install: ask for the optional inputs too
	args      []string
}

func parseCmdLine(args []string, stderr io.Writer) (*cmdLine, bool) {
	c := &cmdLine{scope: config.ScopeLocal, transport: config.TypeStdio, dir: "."}
	takes := map[string]func(string){
		"s": func(v string) { c.scope, c.scopeSet = config.Scope(v), true }, "scope": func(v string) { c.scope, c.scopeSet = config.Scope(v), true },
		"t": func(v string) { c.transport = v }, "transport": func(v string) { c.transport = v },
		"e": func(v string) { c.env = append(c.env, v) }, "env": func(v string) { c.env = append(c.env, v) },
		"H": func(v string) { c.headers = append(c.headers, v) }, "header": func(v string) { c.headers = append(c.headers, v) },
		"C":        func(v string) { c.dir = v },
		"registry": func(v string) { c.registry = v },
		"name":     func(v string) { c.name = v },
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			c.args = append(c.args, args[i+1:]...)
			break
		}
		if a == "-y" || a == "--yes" {
			c.yes = true
			continue
		}
		if a == "-all" || a == "--all" {
			c.all = true
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			c.args = append(c.args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		set, ok := takes[name]
		if !ok {
			fmt.Fprintf(stderr, "mcpls: unknown option %s\n", safe(a))
			return nil, false
		}
		if !hasValue {
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "mcpls: option %s needs a value\n", safe(a))
				return nil, false
			}
			i++
			value = args[i]
		}
		set(value)
	}
	switch c.scope {
	case config.ScopeLocal, config.ScopeProject, config.ScopeUser:
	default:
		fmt.Fprintf(stderr, "mcpls: invalid scope %s: local, project or user\n", safe(string(c.scope)))
		return nil, false
	}
	return c, true
}

// scopeTitle is how Claude Code names a scope's config.
func scopeTitle(s config.Scope) string {
	switch s {
	case config.ScopeLocal:
		return "Local config (private to you in this project)"
	case config.ScopeProject:
		return "Project config (shared via .mcp.json)"
	case config.ScopeUser:
		return "User config (available in all your projects)"
	case config.ScopeManaged:
		return "Enterprise config (managed by your organization)"
	}
	return string(s)
}

func changed(stdout io.Writer, c *config.Change) {
	fmt.Fprintf(stdout, "File modified: %s\n", safe(c.String()))
}

// refusal prints why a write failed, in Claude Code's words where it has
// them, and returns the exit status.
func refusal(stderr io.Writer, name string, scope config.Scope, err error) int {
	var se *config.ScopesError
	switch {
	case errors.Is(err, config.ErrExists):
		fmt.Fprintf(stderr, "MCP server %s already exists in %s config\n", safe(name), scope)
	case errors.Is(err, config.ErrBadName):
		fmt.Fprintf(stderr, "Invalid name %s. Names can only contain letters, numbers, hyphens, and underscores.\n", safe(name))
	case errors.Is(err, config.ErrManaged):
		fmt.Fprintf(stderr, "MCP server %q is provided by your organization and cannot be removed locally (%s).\n", safe(name), safe(err.Error()))
	case errors.Is(err, config.ErrPolicy):
		fmt.Fprintf(stderr, "Cannot add MCP server %q: not allowed by enterprise policy (%s)\n", safe(name), safe(err.Error()))
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "MCP server %q exists in multiple scopes:\n", safe(name))
		for _, s := range se.Scopes {
			fmt.Fprintf(stderr, "  - %s\n", scopeTitle(s))
		}
		fmt.Fprintf(stderr, "\nTo remove from a specific scope, use:\n")
		for _, s := range se.Scopes {
			fmt.Fprintf(stderr, "  mcpls remove %s -s %s\n", safe(name), s)
		}
	default:
		fmt.Fprintln(stderr, safe(err.Error()))
	}
	return 1
}

// redacted is a header's value as printed: credentials are not.
func redacted(name, value string) string {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key":
		return "[REDACTED]"
	}
	return value
}

func addCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, ok := parseCmdLine(args, stderr)
	if !ok {
		return 2
	}
	if len(c.args) < 2 {
		fmt.Fprintln(stderr, "usage: mcpls add [-s local|project|user] [-t stdio|sse|http] [-e KEY=value]... [-H 'Name: value']... NAME COMMAND_OR_URL [ARGS...]")
		return 2
	}
	name := c.args[0]
	sc := &config.Server{Type: c.transport}
	var order []string // of the -e and -H flags: Claude Code keeps it, a repeated key in its first place
	switch c.transport {
	case config.TypeStdio:
		sc.Command, sc.Args = c.args[1], c.args[2:]
		sc.Env = map[string]string{}
		for _, kv := range c.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				fmt.Fprintf(stderr, "mcpls: invalid environment variable %s: KEY=value\n", safe(kv))
				return 2
			}
			if _, ok := sc.Env[k]; !ok {
				order = append(order, k)
			}
			sc.Env[k] = v
		}
	case config.TypeHTTP, config.TypeSSE:
		if len(c.args) > 2 {
			fmt.Fprintln(stderr, "mcpls: a remote server takes a URL and no arguments")
			return 2
		}
		sc.URL = c.args[1]
		for _, h := range c.headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				fmt.Fprintf(stderr, "mcpls: invalid header %s: 'Name: value'\n", safe(h))
				return 2
			}
			if sc.Headers == nil {
				sc.Headers = map[string]string{}
			}
			k = strings.TrimSpace(k)
			if _, ok := sc.Headers[k]; !ok {
				order = append(order, k)
			}
			sc.Headers[k] = strings.TrimSpace(v)
		}
	default:
		fmt.Fprintf(stderr, "mcpls: invalid transport %s: stdio, sse or http\n", safe(c.transport))
		return 2
	}
	change, err := config.Add(ctx, c.dir, c.scope, name, config.Entry(sc, order...))
	if err != nil {
		return refusal(stderr, name, c.scope, err)
	}
	if sc.Type == config.TypeStdio {
		fmt.Fprintf(stdout, "Added stdio MCP server %s with command: %s %s to %s config\n", safe(name), safe(sc.Command), safe(strings.Join(sc.Args, " ")), c.scope)
	} else {
		fmt.Fprintf(stdout, "Added %s MCP server %s with URL: %s to %s config\n", strings.ToUpper(sc.Type), safe(name), safe(sc.URL), c.scope)
		if len(sc.Headers) > 0 {
			shown := map[string]string{}
			for k, v := range sc.Headers {
				shown[k] = redacted(k, v)
			}
			b, _ := json.MarshalIndent(shown, "", "  ")
			fmt.Fprintf(stdout, "Headers: %s\n", safe(string(b)))
		}
	}
	changed(stdout, change)
	return 0
}

func addJSONCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, ok := parseCmdLine(args, stderr)
	if !ok {
		return 2
	}
	if len(c.args) != 2 {
		fmt.Fprintln(stderr, "usage: mcpls add-json [-s local|project|user] NAME JSON")
		return 2
	}
	name := c.args[0]
	if err := config.ValidName(name); err != nil {
		return refusal(stderr, name, c.scope, err)
	}
	entry, err := config.EntryFromJSON(name, json.RawMessage(c.args[1]))
	if err != nil {
		fmt.Fprintf(stderr, "Invalid configuration: %s\n", safe(strings.TrimPrefix(err.Error(), "config: ")))
		return 1
	}
	change, err := config.Add(ctx, c.dir, c.scope, name, entry)
	if err != nil {
		return refusal(stderr, name, c.scope, err)
	}
	var kind struct{ Type string }
	json.Unmarshal(entry, &kind)
	if kind.Type == "" {
		kind.Type = config.TypeStdio
	}
	fmt.Fprintf(stdout, "Added %s MCP server %s to %s config\n", safe(kind.Type), safe(name), c.scope)
	changed(stdout, change)
	return 0
}

func removeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, ok := parseCmdLine(args, stderr)
	if !ok {
		return 2
	}
	if len(c.args) != 1 {
		fmt.Fprintln(stderr, "usage: mcpls remove [-s local|project|user] NAME")
		return 2
	}
	name := c.args[0]
	scope := config.Scope("")
	if c.scopeSet {
		scope = c.scope
	}
	change, err := config.Remove(ctx, c.dir, scope, name)
	switch {
	case errors.Is(err, config.ErrNotFound) && scope != "":
		fmt.Fprintf(stderr, "No MCP server named %q in %s scope\n", safe(name), scope)
		return 1
	case errors.Is(err, config.ErrNotFound):
		cfg, _ := mcp.LoadConfig(c.dir)
		fmt.Fprintf(stderr, "No MCP server named %q. Configured servers: %s\n", safe(name), safe(strings.Join(cfg.Names(), ", ")))
		return 1
	case err != nil:
		return refusal(stderr, name, scope, err)
	}
	fmt.Fprintf(stdout, "Removed MCP server %q from %s config\n", safe(name), change.Scope)
	changed(stdout, change)
	return 0
}

func resetCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, ok := parseCmdLine(args, stderr)
	if !ok || len(c.args) != 0 {
		fmt.Fprintln(stderr, "usage: mcpls reset-project-choices")
		return 2
	}
	if _, err := config.ResetProjectChoices(ctx, c.dir); err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	fmt.Fprintln(stdout, "Project-scoped (.mcp.json) server approvals and rejections stored for this project have been reset.")
	fmt.Fprintln(stdout, "You will be prompted for approval next time you start Claude Code.")
	return 0
}

func getCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, ok := parseCmdLine(args, stderr)
	if !ok || len(c.args) != 1 {
		fmt.Fprintln(stderr, "usage: mcpls get NAME")
		return 2
	}
	name := c.args[0]
	cfg, _ := mcp.LoadConfig(c.dir)
	sc := cfg.Servers[name]
	if sc == nil {
		fmt.Fprintf(stderr, "No MCP server named %q. Configured servers: %s\n", safe(name), safe(strings.Join(cfg.Names(), ", ")))
		return 1
	}
	fmt.Fprintf(stdout, "%s:\n", safe(name))
	fmt.Fprintf(stdout, "  Scope: %s\n", scopeTitle(sc.Scope))
	fmt.Fprintf(stdout, "  Status: %s\n", safe(status(ctx, cfg, name)))
	fmt.Fprintf(stdout, "  Type: %s\n", safe(sc.Type))
	if sc.Type == config.TypeStdio {
		fmt.Fprintf(stdout, "  Command: %s\n", safe(sc.Command))
		fmt.Fprintf(stdout, "  Args: %s\n", safe(strings.Join(sc.Args, " ")))
		fmt.Fprintln(stdout, "  Environment:")
		for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
			fmt.Fprintf(stdout, "    %s=%s\n", safe(k), safe(sc.Env[k]))
		}
	} else {
		fmt.Fprintf(stdout, "  URL: %s\n", safe(redact.URL(sc.URL)))
		if len(sc.Headers) > 0 {
			fmt.Fprintln(stdout, "  Headers:")
			for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
				fmt.Fprintf(stdout, "    %s: %s\n", safe(k), safe(redacted(k, sc.Headers[k])))
			}
		}
	}
	if sc.Scope != config.ScopeManaged {
		fmt.Fprintf(stdout, "\nTo remove this server, run: mcpls remove %s -s %s\n", safe(name), sc.Scope)
	}
	return 0
}

// status connects the server name of cfg and says how it went.
func status(ctx context.Context, cfg *mcp.Config, name string) string {
	if sc := cfg.Servers[name]; sc != nil && sc.Err != nil {
		if errors.Is(sc.Err, config.ErrPolicy) {
			return "✘ Blocked by the organisation's policy: " + sc.Err.Error()
		}
		return "✘ " + sc.Err.Error()
	}
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := m.Connection(ctx, name)
	if err == nil {
		return "✓ Connected"
	}
	for _, s := range m.Status() {
		if s.Name == name && s.State == mcp.StateNeedsApproval {
			return "⏸ Pending approval (mcpls -approve " + name + ")"
		}
	}
	return "✘ Failed to connect: " + err.Error()
}
