package main

// mcpls's subcommands: their names, arguments, options and usage, and
// help, which prints them.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// A command is a subcommand of mcpls.
type command struct {
	name     string
	need     []string // the arguments it needs, named as the usage names them
	optional []string // those it may take after them
	more     bool     // it takes any number after those ([ARGS...])
	summary  string   // one line, in the list of commands
	about    string   // the usage's text
	examples []string
	opts     []*option
	run      func(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int
}

// commands are mcpls's subcommands but list (the listing, whose flags are
// the flag package's) and help, by name.
var commands = map[string]*command{}

// order is the order in which help lists the commands.
var order = []string{"list", "add", "add-json", "remove", "get", "reset-project-choices", "install", "help"}

// summaries of list and help, which are not in commands.
const (
	listSummary = "List the servers, each connected, with its state and tools (the default)"
	helpSummary = "Print the commands, or a command's usage"
)

func init() {
	for _, c := range []*command{
		{
			name: "add", need: []string{"NAME", "COMMAND_OR_URL"}, more: true,
			summary: "Add a server: a command to run, or the URL of an http or sse server",
			about: `Add a server to the config, as "claude mcp add" does: to the local scope
(the project's entry of ~/.claude.json) unless -s says otherwise.
Options go before "--", and the server's command with its own options
after it: in "mcpls add NAME npx -y pkg", -y would be an option of mcpls,
which refuses it.`,
			examples: []string{
				"mcpls add my-server -e API_KEY=xxx -- node ./my-server.js",
				"mcpls add my-server -- npx -y some-mcp-server",
				"mcpls add -s user --transport http sentry https://mcp.sentry.dev/mcp",
				"mcpls add -t http docs https://docs.example/mcp -H 'Authorization: Bearer ${DOCS_TOKEN}'",
			},
			opts: []*option{scopeOption,
				{short: "-t", long: "--transport", value: "TRANSPORT", help: "stdio, sse or http (streamable-http is http; default: stdio)",
					set: func(c *cmdLine, v string) { c.transport = v }},
				{short: "-e", long: "--env", value: "KEY=value...", list: true, help: "environment variables of a stdio server",
					set: func(c *cmdLine, v string) { c.env = append(c.env, v) }},
				{short: "-H", long: "--header", value: "'Name: value'...", list: true, help: "headers of an http or sse server",
					set: func(c *cmdLine, v string) { c.headers = append(c.headers, v) }},
				{long: "--client-id", value: "ID", help: "the OAuth client ID of an http or sse server",
					set: func(c *cmdLine, v string) { c.clientID = v }},
				{long: "--callback-port", value: "PORT", help: "the fixed port of its OAuth redirect, 1 to 65535",
					set: func(c *cmdLine, v string) { c.callbackPort = v }},
				{long: "--client-secret", help: "refused: Claude Code keeps it in a store mcpls does not write",
					set: func(c *cmdLine, _ string) { c.clientSecret = true }},
				dirOption,
			},
			run: addCommand,
		},
		{
			name: "add-json", need: []string{"NAME", "JSON"},
			summary: "Add a server from its JSON entry (- reads it from standard input)",
			about: `Add a server to the config from its JSON entry, as "claude mcp add-json"
does: the keys Claude Code keeps are written, in its order. JSON "-" reads
the entry from standard input (at most 1 MiB), which keeps tokens off the
command line and out of the shell's history.`,
			examples: []string{
				`mcpls add-json weather '{"command":"node","args":["weather.js"],"env":{"KEY":"${WEATHER_KEY}"}}'`,
				"mcpls add-json -s user github - < github.json",
			},
			opts: []*option{scopeOption,
				{long: "--client-secret", help: "refused: Claude Code keeps it in a store mcpls does not write",
					set: func(c *cmdLine, _ string) { c.clientSecret = true }},
				dirOption,
			},
			run: addJSONCommand,
		},
		{
			name: "remove", need: []string{"NAME"},
			summary: "Remove a server",
			about: `Remove a server from the config, as "claude mcp remove" does: from the
scope -s names, or else from the one scope that has it (when more than
one has it, mcpls names them and removes nothing).`,
			examples: []string{"mcpls remove my-server", "mcpls remove -s user my-server"},
			opts: []*option{
				{short: "-s", long: "--scope", value: "SCOPE", help: "local, user or project (default: the one scope that has the server)",
					set: scopeOption.set},
				dirOption,
			},
			run: removeCommand,
		},
		{
			name: "get", need: []string{"NAME"},
			summary: "Show a server's entry, and whether it connects",
			about: `Show a server's entry, as the config reads it (secrets redacted), and
connect it to say whether it works, as "claude mcp get" does; a project
server waiting for approval is not started.`,
			opts: []*option{dirOption},
			run:  getCommand,
		},
		{
			name:    "reset-project-choices",
			summary: "Forget the approvals and rejections of the project's servers",
			about: `Forget the user's approvals and rejections of the project's .mcp.json
servers, as "claude mcp reset-project-choices" does, in ~/.claude.json and
the project's .claude/settings.local.json.`,
			opts: []*option{dirOption},
			run:  resetCommand,
		},
		{
			name: "install", need: []string{"NAME[@VERSION]"},
			summary: "Install a server of an MCP registry, once you saw what runs",
			about: `Install a server of an MCP registry (server.json) into the config: mcpls
shows what runs, the entry as it is written and the variables to set, and
asks before it writes. Secrets are never asked for: the entry names the
variables that hold them. The registry is -registry, or $MCPLUG_REGISTRY,
or the official one.`,
			examples: []string{"mcpls install io.github.github/github-mcp-server", "mcpls install -s project -all com.neon/mcp@1.0.0"},
			opts: []*option{scopeOption,
				{long: "--registry", alias: []string{"-registry"}, value: "URL", help: "the registry (default: $MCPLUG_REGISTRY, else https://registry.modelcontextprotocol.io)",
					set: func(c *cmdLine, v string) { c.registry = v }},
				{long: "--name", alias: []string{"-name"}, value: "NAME", help: "the server's name in the config, used as given (default: from the registry's name, a longer one when another server's entry has it)",
					set: func(c *cmdLine, v string) { c.name = v }},
				{long: "--all", alias: []string{"-all"}, help: "ask for the optional inputs too",
					set: func(c *cmdLine, _ string) { c.all = true }},
				{short: "-y", long: "--yes", help: "write without asking",
					set: func(c *cmdLine, _ string) { c.yes = true }},
				dirOption,
			},
			run: installCommand,
		},
	} {
		commands[c.name] = c
	}
}

// synopsis is the command's usage line.
func (cmd *command) synopsis() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: mcpls %s [options]", cmd.name)
	for _, a := range cmd.need {
		b.WriteString(" " + a)
	}
	for _, a := range cmd.optional {
		b.WriteString(" [" + a + "]")
	}
	if cmd.more {
		b.WriteString(" [ARGS...]")
	}
	return b.String()
}

// usage prints the command's usage.
func (cmd *command) usage(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n%s\n", strings.Replace(cmd.synopsis(), "usage:", "Usage:", 1), cmd.about)
	if len(cmd.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range cmd.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintln(w, "\nOptions:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, o := range append(slices.Clone(cmd.opts), helpOption) {
		names := strings.Join(o.names(), ", ")
		if o.short == "" && o.long != "" {
			names = "    " + names // aligned with the long names of those that have a short one
		}
		if o.value != "" {
			names += " " + o.value
		}
		fmt.Fprintf(tw, "  %s\t%s\n", names, o.help)
	}
	tw.Flush()
}

// main runs the command with the words after its name.
func (cmd *command) main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, help, err := cmd.parse(args)
	if help {
		cmd.usage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "(mcpls %s -h prints its usage)\n", cmd.name)
		return 2
	}
	if len(c.extra) > 0 {
		fmt.Fprintf(stderr, "mcpls %s: warning: arguments left unused, as Claude Code leaves them: %s\n", cmd.name, shellJoin(c.extra))
	}
	return cmd.run(ctx, c, stdout, stderr)
}

// printCommands prints the list of commands.
func printCommands(w io.Writer) {
	fmt.Fprintln(w, "Commands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range order {
		summary := map[string]string{"list": listSummary, "help": helpSummary}[name]
		if c := commands[name]; c != nil {
			summary = c.summary
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, summary)
	}
	tw.Flush()
}

// help prints mcpls's usage, or a command's, for `mcpls help [COMMAND]`.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return list([]string{"-h"}, true, stdout, stderr)
	}
	switch name := args[0]; {
	case name == "list":
		return list([]string{"-h"}, false, stdout, stderr)
	case name == "help":
		fmt.Fprintf(stdout, "Usage: mcpls help [COMMAND]\n\n%s.\n", helpSummary)
		return 0
	case commands[name] != nil:
		commands[name].usage(stdout)
		return 0
	default:
		return unknownCommand(name, stderr)
	}
}

// unknownCommand says that name is none of mcpls's commands.
func unknownCommand(name string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "mcpls: unknown command %q\n\n", safe(name))
	printCommands(stderr)
	return 2
}
