// Command mcpls checks an MCP config by hand, like `claude mcp list`: it
// reads the same files as mcp.LoadConfig (~/.claude.json, .mcp.json of
// the directory and its parents, and also ~/.claude/settings.json and
// .claude/settings.json, which Claude Code does not read for servers),
// connects every server, and prints one line per server: name, state,
// transport, scope, tools, and the server's name or what went wrong.
//
// A project server (from .mcp.json or .claude/settings.json, which come
// with the project) is started only once the user approved it; until then
// it shows "needs approval". -approve NAME records the approval in
// .claude/settings.local.json of the project root, the user's own settings
// of the project, as Claude Code does; -reject NAME records the refusal.
// Like Claude Code, those settings count only in a trusted workspace:
// -trust records the trust in ~/.claude.json (hasTrustDialogAccepted).
// Until then the user's own stdio servers run in the home directory, not
// in the project.
//
//	go run ./examples/mcpls                 # status of each server
//	go run ./examples/mcpls -v              # and every exposed tool
//	go run ./examples/mcpls -trust -approve demo   # trust the workspace, approve its server demo
//	go run ./examples/mcpls -call mcp__demo__add '{"a":1,"b":2}'
//	go run ./examples/mcpls -resources      # resources and templates, by ref
//	go run ./examples/mcpls -read '@docs:file:///README.md'
//	go run ./examples/mcpls -prompts        # prompts, by ref
//	go run ./examples/mcpls -skills         # skills, by ref (docs/skills.md)
//	go run ./examples/mcpls -skill docs:pdf-processing   # one skill, each file verified
//	go run ./examples/mcpls -prompt mcp__docs__review '{"lang":"go"}'
//	go run ./examples/mcpls -config path/to/servers.json
//	go run ./examples/mcpls -config examples/mcpls/sample.mcp.json -v   # the repository's add server
//	go run ./examples/mcpls -login docs     # sign in to the remote server docs (OAuth)
//	go run ./examples/mcpls -search "open a pull request" -n 3   # what a model's tool search finds
//	go run ./examples/mcpls -permissions    # the permission rules, and the tools they hide or ask about
//	mcpls -search - < queries.txt           # one line of tools per query
//
// It also writes the config as `claude mcp` does, with its options,
// read as Claude Code reads them, and its messages (local scope by
// default; see docs/manager.md); `mcpls help` lists the commands and
// `mcpls help COMMAND` prints one's usage:
//
//	mcpls add [-s local|project|user] [-t stdio|sse|http] [-e K=v]... [-H 'N: v']... NAME -- CMD [ARGS...]
//	mcpls add -t http NAME URL
//	mcpls add-json [-s SCOPE] NAME JSON        # JSON "-" reads it from standard input
//	mcpls remove [-s SCOPE] NAME
//	mcpls get NAME
//	mcpls list
//	mcpls reset-project-choices
//	mcpls install [-s SCOPE] [--registry URL] [--name NAME] [--all] [-y] io.github.example/weather-mcp[@VERSION]
//
// Everything a server or a config file supplies is printed with terminal
// control characters replaced, so that neither can rewrite the screen.
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
	"bufio"
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

	"github.com/mcplug/mcplug/mcp/config"

	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"

	"github.com/mcplug/mcplug/agent/toolsearch"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/otelmcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// topUsage is the start of mcpls -h.
const topUsage = `mcpls checks the MCP servers of a project's config, the files Claude
Code reads, and writes that config as "claude mcp" does.

Usage:
  mcpls [list] [flags]            list the servers, each connected (the flags are below)
  mcpls COMMAND [options] [ARGS]  run one of the commands
  mcpls help [COMMAND]            print this, or a command's usage

`

// stdin is where -search - and add-json - read.
var stdin io.Reader = os.Stdin

// searchTools prints the k exposed tools the agent's tool search finds
// for query, best first, separated by spaces, on one line; for query "-",
// one such line for each line of standard input.
func searchTools(ctx context.Context, m *mcp.Manager, query string, k int, stdout, stderr io.Writer) int {
	if k <= 0 {
		fmt.Fprintln(stderr, "mcpls: -n must be at least 1")
		return 2
	}
	tools, err := m.Tools(ctx)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	idx := toolsearch.New(tools)
	line := func(q string) {
		var names []string
		for _, r := range idx.Search(q, k) {
			names = append(names, safe(r.Tool.Name))
		}
		fmt.Fprintln(stdout, strings.Join(names, " "))
	}
	if query != "-" {
		line(query)
		return 0
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "mcpls: reading queries:", err)
		return 1
	}
	return 0
}

// run runs mcpls with args, the words after its name, and returns the
// exit status: 0 for success, 1 when what was asked failed, 2 for a
// command line mcpls cannot read.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch name := args[0]; {
		case name == "list":
			return list(args[1:], false, stdout, stderr)
		case name == "help":
			return help(args[1:], stdout, stderr)
		case commands[name] != nil:
			return commands[name].main(context.Background(), args[1:], stdout, stderr)
		case !strings.HasPrefix(name, "-"):
			return unknownCommand(name, stderr)
		}
	}
	return list(args, true, stdout, stderr)
}

// listUsage is the text of the listing's usage, before its flags.
const listUsage = `Usage: mcpls [list] [flags]

List the servers of the project's config, each connected, one line each:
name, state, transport, scope, tools, and the server's name or what went
wrong (exit status 1 when a server failed). The config is the files
Claude Code reads (~/.claude.json, .mcp.json of the directory and its
parents), and ~/.claude/settings.json and .claude/settings.json; with
$CLAUDE_CONFIG_DIR set, the user's files are that folder's, as in Claude
Code. The flags also call a tool, read a resource, get a prompt, search
the tools, sign in to a server, and record the user's trust and
approvals.
`

// list is the listing, mcpls [list] [flags]; top is true when no command
// was named, and its usage then lists the commands too.
func list(args []string, top bool, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	dir := fs.String("C", ".", "project `directory` whose config is read")
	file := fs.String("config", "", "read only this config `file`")
	verbose := fs.Bool("v", false, "list every exposed tool")
	call := fs.String("call", "", "call the tool `NAME` with the JSON arguments that follow")
	trust := fs.Bool("trust", false, "trust the workspace (saved in ~/.claude.json), so that its own settings count")
	approve := fs.String("approve", "", "approve the project server `NAME` (saved in .claude/settings.local.json)")
	reject := fs.String("reject", "", "reject the project server `NAME` (saved in .claude/settings.local.json)")
	login := fs.String("login", "", "sign in to the remote server `NAME` (OAuth; prints a link to open)")
	resources := fs.Bool("resources", false, "list the resources and resource templates of every server, by ref")
	prompts := fs.Bool("prompts", false, "list the prompts of every server, by ref")
	skills := fs.Bool("skills", false, "list the skills of every server, by ref")
	skill := fs.String("skill", "", "show the skill `REF` (as -skills lists it), each of its files read and verified")
	read := fs.String("read", "", "read the resource `REF` (@server:uri, as -resources lists it)")
	prompt := fs.String("prompt", "", "get the prompt `REF` (as -prompts lists it) with the JSON object of arguments that follows")
	tracing := fs.Bool("trace", false, "print the OpenTelemetry spans of the run's MCP messages on stderr, as they end")
	search := fs.String("search", "", "print the tools a tool search finds for `QUERY`, best first;\n- reads a query a line from standard input")
	limit := fs.Int("n", 5, "with -search, how many tools to print for each query")
	perms := fs.Bool("permissions", false, "print the permission rules of the settings files, and the tools they hide or ask about")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if top {
				fmt.Fprint(stdout, topUsage)
				printCommands(stdout)
				fmt.Fprintf(stdout, "\nEvery command takes -C DIR, the project directory (default: the working\ndirectory); \"mcpls help COMMAND\" or \"mcpls COMMAND -h\" prints its usage.\n\n")
			}
			fmt.Fprint(stdout, listUsage)
			fmt.Fprintln(stdout, "\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintln(stderr, "(mcpls -h prints the commands and flags)")
		return 2
	}
	if takes := *call != "" || *prompt != ""; fs.NArg() > 1 || fs.NArg() == 1 && !takes {
		extra := fs.Args()
		if takes {
			extra = extra[1:]
		}
		if commands[extra[0]] != nil || extra[0] == "list" {
			fmt.Fprintf(stderr, "mcpls: %s after the flags: a command's name comes first, then its options (mcpls %s -C DIR ...)\n", safe(extra[0]), safe(extra[0]))
		} else {
			fmt.Fprintf(stderr, "mcpls: unexpected argument %s (mcpls -h prints the commands and flags)\n", shellQuote(extra[0]))
		}
		return 2
	}
	hint := "mcpls"
	if *dir != "." {
		hint += " -C " + shellQuote(*dir)
	}
	if *trust {
		if *file != "" {
			fmt.Fprintln(stderr, "mcpls: -trust is for a project directory (-C), not a -config file")
			return 2
		}
		if err := config.SaveTrust(*dir); err != nil {
			fmt.Fprintln(stderr, safe(err.Error()))
			return 1
		}
	}
	load := func() (*mcp.Config, error) {
		if *file != "" {
			return config.LoadFile(*file)
		}
		return mcp.LoadConfig(*dir)
	}
	cfg, _ := load()
	if *approve != "" || *reject != "" {
		if *file != "" {
			fmt.Fprintln(stderr, "mcpls: -approve and -reject are for a project directory (-C), not a -config file")
			return 2
		}
		for name, ok := range map[string]bool{*approve: true, *reject: false} {
			if name == "" {
				continue
			}
			if _, found := cfg.ProjectEntry(name); !found {
				fmt.Fprintf(stderr, "mcpls: no project server %q to approve or reject (the project's servers: %s)\n", safe(name), safe(strings.Join(projectNames(cfg), ", ")))
				return 2
			}
			if ok && cfg.Workspace != nil && !cfg.Workspace.Trusted {
				fmt.Fprintf(stderr, "mcpls: the workspace %s is not trusted, and approvals in it count only once it is: %s -trust -approve %s\n", safe(cfg.Workspace.Root), hint, safe(name))
				return 1
			}
			if err := config.SaveApproval(*dir, name, ok); err != nil {
				fmt.Fprintln(stderr, safe(err.Error()))
				return 1
			}
		}
		cfg, _ = load()
	}
	for _, e := range cfg.Errors { // file-level problems; server problems show in the table
		fmt.Fprintln(stderr, safe(e.Error()))
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "mcpls: warning: "+safe(w))
	}
	mopts := &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler), Authorizer: authorizer}
	if *tracing {
		mopts.Observer = otelmcp.New(&otelmcp.Options{TracerProvider: &spanPrinter{out: stderr},
			MeterProvider: noopmetric.NewMeterProvider(), Propagator: propagation.TraceContext{}})
	}
	m := mcp.NewManager(cfg, mopts)
	defer m.Close()
	ctx := context.Background()
	if *login != "" {
		if err := signIn(ctx, m, cfg, *login, stderr); err != nil {
			fmt.Fprintln(stderr, safe(err.Error()))
			return 1
		}
	}
	m.Connect(ctx) // failures show in Status

	switch {
	case *call != "":
		return callTool(ctx, m, *call, fs.Arg(0), stdout, stderr)
	case *read != "":
		res, err := m.ReadResource(ctx, *read)
		return printResult(res, err, "mcpls -resources", stdout, stderr)
	case *prompt != "":
		var promptArgs map[string]string
		if raw := fs.Arg(0); raw != "" {
			if err := json.Unmarshal([]byte(raw), &promptArgs); err != nil {
				fmt.Fprintf(stderr, "mcpls: prompt arguments must be a JSON object of strings: %v\n", err)
				return 2
			}
		}
		res, err := m.GetPrompt(ctx, *prompt, promptArgs)
		return printResult(res, err, "mcpls -prompts", stdout, stderr)
	case *search != "":
		return searchTools(ctx, m, *search, *limit, stdout, stderr)
	case *resources:
		return listResources(ctx, m, stdout, stderr)
	case *prompts:
		return listPrompts(ctx, m, stdout, stderr)
	case *skills:
		return listSkills(ctx, m, stdout, stderr)
	case *skill != "":
		return showSkill(ctx, m, *skill, stdout, stderr)
	case *perms:
		return showPermissions(ctx, m, stdout, stderr)
	}
	tools, err := m.Tools(ctx)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
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
			how := hint + " -approve " + shellQuote(s.Name)
			if cfg.Workspace != nil && !cfg.Workspace.Trusted {
				how = hint + " -trust -approve " + shellQuote(s.Name)
			}
			detail = fmt.Sprintf("from %s; approve with: %s", s.Source, how)
		case s.State == mcp.StateNeedsAuthorization:
			failed++
			detail = fmt.Sprintf("sign in with: %s -login %s (%v)", hint, shellQuote(s.Name), s.Err)
		case s.Err != nil:
			if s.State == mcp.StateFailed || s.State == mcp.StateReconnecting {
				failed++
			}
			detail = s.Err.Error()
		case s.ServerInfo.Name != "":
			detail = s.ServerInfo.Name + " " + s.ServerInfo.Version
			if *verbose && s.ProtocolVersion != "" {
				era := "legacy"
				if s.ProtocolVersion > mcp.LatestLegacyVersion {
					era = "modern"
				}
				detail += fmt.Sprintf(" (protocol %s, %s)", s.ProtocolVersion, era)
			}
		}
		if sc := cfg.Servers[s.Name]; *verbose && s.Auth != "" && (s.State == mcp.StateNeedsAuthorization || (sc != nil && sc.OAuth != nil)) {
			detail += "; " + s.Auth
		}
		scope := string(s.Scope)
		if scope == "" {
			scope = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d tools\t%s\n", oneLine(s.Name), s.State, s.Transport, scope, s.Tools, oneLine(detail))
		for _, warn := range s.Warnings {
			fmt.Fprintf(w, "\t\t\t\t\twarning: %s\n", oneLine(warn))
		}
	}
	w.Flush()
	if *verbose {
		fmt.Fprintln(stdout)
		for _, t := range tools {
			fmt.Fprintf(stdout, "%s\n    %s\n", oneLine(t.Name), oneLine(t.Description))
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// projectNames are the names of cfg's project entries, sorted.
func projectNames(cfg *mcp.Config) []string {
	var names []string
	for _, name := range cfg.Names() {
		if _, ok := cfg.ProjectEntry(name); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

func listResources(ctx context.Context, m *mcp.Manager, stdout, stderr io.Writer) int {
	resources, err := m.Resources(ctx)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	templates, err := m.ResourceTemplates(ctx)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	if len(resources)+len(templates) == 0 {
		fmt.Fprintln(stdout, "no resources")
		return 0
	}
	for _, r := range resources {
		fmt.Fprintf(stdout, "%s\n    %s\n", oneLine(r.Ref), oneLine(describe(r.Name, r.Title, r.Description)))
	}
	for _, t := range templates {
		fmt.Fprintf(stdout, "%s (template)\n    %s\n", oneLine(t.Ref), oneLine(describe(t.Name, t.Title, t.Description)))
	}
	return 0
}

func listPrompts(ctx context.Context, m *mcp.Manager, stdout, stderr io.Writer) int {
	prompts, err := m.Prompts(ctx)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	if len(prompts) == 0 {
		fmt.Fprintln(stdout, "no prompts")
		return 0
	}
	for _, p := range prompts {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name)
			} else {
				args = append(args, "["+a.Name+"]")
			}
		}
		fmt.Fprintf(stdout, "%s %s\n    %s\n", oneLine(p.Ref), oneLine(strings.Join(args, " ")), oneLine(describe(p.Name, p.Title, p.Description)))
	}
	return 0
}

func describe(name, title, description string) string {
	parts := []string{}
	for _, s := range []string{title, description} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return name
	}
	return strings.Join(parts, ": ")
}

// printResult prints a result as JSON (which escapes every control
// character), or the error; list names the command that lists what exists.
func printResult(res any, err error, list string, stdout, stderr io.Writer) int {
	if errors.Is(err, mcp.ErrUnknownRef) {
		fmt.Fprintf(stderr, "%s (list them with: %s)\n", safe(err.Error()), list)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Fprintln(stdout, escapeJSON(string(out)))
	return 0
}

// escapeJSON escapes in JSON text what encoding/json leaves as it is
// and a terminal acts on: C1 controls (CSI, OSC, … in a UTF-8 terminal)
// and the bidirectional overrides, as \uXXXX (the same JSON value).
func escapeJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
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
		fmt.Fprintf(stderr, "mcpls: unknown tool %q (list the tools with: mcpls -v)\n", safe(name))
		return 2
	}
	if code := printResult(res, err, "mcpls -v", stdout, stderr); code != 0 || !res.IsError {
		return code
	}
	return 1
}

// oneLine is s on one line, cut to 160 bytes, safe for a terminal.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(safe(s)), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// safe replaces the characters of s that a terminal would act on (C0 and
// C1 controls but newline and tab, DEL, and the bidirectional overrides
// that make text read otherwise than it is) with U+FFFD, so that text a
// server or a config file supplies cannot move the cursor, recolour, or
// fake lines of mcpls's output.
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f),
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return '\ufffd'
		}
		return r
	}, s)
}

// shellQuote quotes s for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '@' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(safe(s), "'", `'\''`) + "'"
}
