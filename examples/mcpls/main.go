// Command mcpls checks an MCP config by hand, like `claude mcp list`: it
// reads the same files as mcp.LoadConfig (~/.claude.json,
// ~/.claude/settings.json, .claude/settings.json, .mcp.json), connects
// every server, and prints one line per server: name, state, transport,
// scope, tools, and the server's name or what went wrong.
//
// A project server (from .mcp.json or .claude/settings.json, which come
// with the project) is started only once the user approved it; until then
// it shows "needs approval". -approve NAME records the approval in
// .claude/settings.local.json, the user's own settings of the project, as
// Claude Code does; -reject NAME records the refusal.
//
//	go run ./examples/mcpls                 # status of each server
//	go run ./examples/mcpls -v              # and every exposed tool
//	go run ./examples/mcpls -approve demo   # approve the project server demo
//	go run ./examples/mcpls -call mcp__demo__add '{"a":1,"b":2}'
//	go run ./examples/mcpls -config path/to/servers.json
//	go run ./examples/mcpls -config examples/mcpls/sample.mcp.json -v   # the repository's add server
//	go run ./examples/mcpls -login docs     # sign in to the remote server docs (OAuth)
//
// Remote servers behind OAuth use the tokens kept in the user's config
// directory (mcplug/oauth); one without shows "needs authorization", and
// -login NAME signs in to it, printing a link to open in a browser (the
// redirect comes back to 127.0.0.1:8976, or the entry's
// oauth.callbackPort).
//
// Install it as mcpls with
//
//	go install github.com/mcplug/mcplug/examples/mcpls@latest
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mcplug/mcplug/mcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "project `directory` whose config is read")
	file := fs.String("config", "", "read only this config `file`")
	verbose := fs.Bool("v", false, "list every exposed tool")
	call := fs.String("call", "", "call the tool `NAME` with the JSON arguments that follow")
	approve := fs.String("approve", "", "approve the project server `NAME` (saved in .claude/settings.local.json)")
	reject := fs.String("reject", "", "reject the project server `NAME` (saved in .claude/settings.local.json)")
	login := fs.String("login", "", "sign in to the remote server `NAME` (OAuth; prints a link to open)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for name, ok := range map[string]bool{*approve: true, *reject: false} {
		if name == "" {
			continue
		}
		if err := mcp.SaveApproval(*dir, name, ok); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	var cfg *mcp.Config
	var cfgErr error
	if *file != "" {
		cfg, cfgErr = mcp.LoadConfigFile(*file)
	} else {
		cfg, cfgErr = mcp.LoadConfig(*dir)
	}
	for _, e := range cfg.Errors { // file-level problems; server problems show in the table
		fmt.Fprintln(stderr, e)
	}
	_ = cfgErr
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler), Authorizer: authorizer})
	defer m.Close()
	ctx := context.Background()
	if *login != "" {
		if err := signIn(ctx, m, cfg, *login, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	m.Connect(ctx) // failures show in Status

	if *call != "" {
		return callTool(ctx, m, *call, fs.Arg(0), stdout, stderr)
	}
	tools, err := m.Tools(ctx)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	status := m.Status()
	if len(status) == 0 {
		fmt.Fprintln(stdout, "no MCP servers configured (to try one, from the repository root: mcpls -config examples/mcpls/sample.mcp.json -v)")
		return 0
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	failed := 0
	for _, s := range status {
		detail := ""
		switch {
		case s.State == mcp.StateNeedsApproval:
			detail = fmt.Sprintf("from %s; approve with: mcpls -approve %s", s.Source, s.Name)
		case s.State == mcp.StateNeedsAuthorization:
			failed++
			detail = fmt.Sprintf("sign in with: mcpls -login %s (%v)", s.Name, s.Err)
		case s.Err != nil:
			if s.State == mcp.StateFailed || s.State == mcp.StateReconnecting {
				failed++
			}
			detail = s.Err.Error()
		case s.ServerInfo.Name != "":
			detail = s.ServerInfo.Name + " " + s.ServerInfo.Version
			if *verbose && s.ProtocolVersion != "" {
				era := "legacy"
				if mcp.IsModern(s.ProtocolVersion) {
					era = "modern"
				}
				detail += fmt.Sprintf(" (protocol %s, %s)", s.ProtocolVersion, era)
			}
		}
		if *verbose && s.Auth != "" {
			detail += "; " + s.Auth
		}
		scope := string(s.Scope)
		if scope == "" {
			scope = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d tools\t%s\n", s.Name, s.State, s.Transport, scope, s.Tools, oneLine(detail))
		for _, warn := range s.Warnings {
			fmt.Fprintf(w, "\t\t\t\t\twarning: %s\n", warn)
		}
	}
	w.Flush()
	if *verbose {
		fmt.Fprintln(stdout)
		for _, t := range tools {
			fmt.Fprintf(stdout, "%s\n    %s\n", t.Name, oneLine(t.Description))
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func callTool(ctx context.Context, m *mcp.Manager, name, rawArgs string, stdout, stderr io.Writer) int {
	var args json.RawMessage
	if rawArgs != "" {
		if !json.Valid([]byte(rawArgs)) {
			fmt.Fprintf(stderr, "mcpls: arguments are not valid JSON: %s\n", rawArgs)
			return 2
		}
		args = json.RawMessage(rawArgs)
	}
	res, err := m.CallTool(ctx, name, args)
	if errors.Is(err, mcp.ErrUnknownTool) {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Fprintln(stdout, string(out))
	if res.IsError {
		return 1
	}
	return 0
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
