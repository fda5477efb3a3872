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
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"golang.org/x/term"
)

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

func addCommand(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int {
	name := c.args[0]
	if c.transport == "streamable-http" { // Claude Code's other name for http
		c.transport = config.TypeHTTP
	}
	sc := &config.Server{Type: c.transport}
	var order []string // of the -e and -H flags: Claude Code keeps it, a repeated key in its first place
	oauth := c.clientID != "" || c.callbackPort != "" || c.clientSecret
	switch c.transport {
	case config.TypeStdio:
		if oauth {
			fmt.Fprintln(stderr, "mcpls add: warning: --client-id, --client-secret and --callback-port only work with http and sse servers, and are ignored for stdio")
		}
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
			fmt.Fprintf(stderr, "mcpls add: warning: arguments left unused (a remote server takes its URL alone), as Claude Code leaves them: %s\n", shellJoin(c.args[2:]))
		}
		sc.URL = c.args[1]
		if c.callbackPort != "" {
			port, err := strconv.Atoi(c.callbackPort)
			if err != nil || port < 1 || port > 65535 {
				fmt.Fprintln(stderr, "mcpls add: --callback-port must be a whole number from 1 to 65535")
				return 2
			}
			sc.OAuth = &config.OAuth{CallbackPort: port}
		}
		if c.clientID != "" {
			if sc.OAuth == nil {
				sc.OAuth = &config.OAuth{}
			}
			sc.OAuth.ClientID = c.clientID
			if c.clientSecret {
				fmt.Fprintln(stderr, "mcpls add: --client-secret is not taken: Claude Code keeps the secret in its own credential store, which mcpls does not write; add the server with claude mcp add, or write the secret as ${VARIABLE} in the entry's oauth.clientSecret (mcpls add-json)")
				return 2
			}
		}
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

// maxStdinJSON bounds the JSON add-json - reads from standard input, as
// Claude Code bounds it.
const maxStdinJSON = 1 << 20

// jsonFromStdin reads the entry of add-json -: at most maxStdinJSON
// bytes, not from a terminal (nobody would type it there; Claude Code
// does not wait for one either), and not empty.
func jsonFromStdin() (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return "", errors.New("mcpls add-json: there is no JSON on standard input (it is a terminal): pipe it in, or give it as the argument")
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxStdinJSON+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("mcpls add-json: reading standard input: %w", err)
	case len(b) > maxStdinJSON:
		return "", fmt.Errorf("mcpls add-json: the JSON on standard input is over the limit of %d bytes (1 MiB)", maxStdinJSON)
	case strings.TrimSpace(string(b)) == "":
		return "", errors.New("mcpls add-json: there is no JSON on standard input: pipe it in, or give it as the argument")
	}
	return string(b), nil
}

func addJSONCommand(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int {
	name, raw := c.args[0], c.args[1]
	if raw == "-" {
		var err error
		if raw, err = jsonFromStdin(); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if err := config.ValidName(name); err != nil {
		return refusal(stderr, name, c.scope, err)
	}
	if c.clientSecret {
		var e struct {
			Type  string
			OAuth struct{ ClientID string } `json:"oauth"`
		}
		if json.Unmarshal([]byte(raw), &e) == nil && e.Type != "" && e.Type != config.TypeStdio && e.OAuth.ClientID != "" {
			fmt.Fprintln(stderr, "mcpls add-json: --client-secret is not taken: Claude Code keeps the secret in its own credential store, which mcpls does not write; write it as ${VARIABLE} in the entry's oauth.clientSecret")
			return 2
		}
	}
	entry, err := config.EntryFromJSON(name, json.RawMessage(raw))
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

func removeCommand(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int {
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
		fmt.Fprintf(stderr, "No MCP server named %q. Configured servers: %s\n", safe(name), safe(strings.Join(removable(c.dir), ", ")))
		return 1
	case err != nil:
		return refusal(stderr, name, scope, err)
	}
	fmt.Fprintf(stdout, "Removed MCP server %q from %s config\n", safe(name), change.Scope)
	changed(stdout, change)
	return 0
}

// removable are the names of the servers remove could take from the
// project of dir: those of the local and user scopes and of dir's own
// .mcp.json, in the order of Config.Names. A parent folder's .mcp.json,
// a settings file's servers and the organisation's are read by Load but
// written by no command, so naming them would send the user to a remove
// that fails again.
func removable(dir string) []string {
	cfg, _ := mcp.LoadConfig(dir)
	var names []string
	for _, n := range cfg.Names() {
		if scopes, err := config.ScopesOf(dir, n); err == nil && len(scopes) > 0 {
			names = append(names, n)
		}
	}
	return names
}

func resetCommand(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int {
	if _, err := config.ResetProjectChoices(ctx, c.dir); err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	fmt.Fprintln(stdout, "Project-scoped (.mcp.json) server approvals and rejections stored for this project have been reset.")
	fmt.Fprintln(stdout, "You will be prompted for approval next time you start Claude Code.")
	return 0
}

func getCommand(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int {
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
