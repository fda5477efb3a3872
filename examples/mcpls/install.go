package main

// mcpls install NAME[@VERSION]: a server of an MCP registry, written to a
// scope as `mcpls add` writes it, once the user saw what will run.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/registry"
)

// registryEnv names the registry install reads, when -registry does not.
const registryEnv = "MCPLUG_REGISTRY"

// readSecret reads a secret from the terminal without echoing it; when
// standard input is not a terminal, it reads a line.
var readSecret = func(in *bufio.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b, err := term.ReadPassword(int(f.Fd()))
		return string(b), err
	}
	return readLine(in)
}

func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func installCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, ok := parseCmdLine(args, stderr)
	if !ok {
		return 2
	}
	if len(c.args) != 1 {
		fmt.Fprintln(stderr, "usage: mcpls install [-s local|project|user] [-registry URL] [-y] NAME[@VERSION]")
		return 2
	}
	name, version, _ := strings.Cut(c.args[0], "@")
	client := &registry.Client{BaseURL: c.registry}
	if client.BaseURL == "" {
		client.BaseURL = os.Getenv(registryEnv)
	}
	s, err := client.Get(ctx, name, version)
	if errors.Is(err, registry.ErrNotFound) && version == "" {
		// A part of a name: say which servers have it.
		if found, serr := client.Search(ctx, name, 10); serr == nil && len(found) > 0 {
			fmt.Fprintf(stderr, "mcpls: no server named %s; the registry has:\n", safe(name))
			for _, f := range found {
				fmt.Fprintf(stderr, "  %s %s  %s\n", safe(f.Server.Name), safe(f.Server.Version), safe(f.Server.Description))
			}
			return 1
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcpls:", safe(err.Error()))
		return 1
	}
	plan, err := registry.PlanFor(s, nil)
	if err != nil {
		fmt.Fprintln(stderr, "mcpls:", safe(err.Error()))
		return 1
	}
	if c.name != "" {
		plan.Name = c.name
	}
	in := bufio.NewReader(stdin)
	if len(plan.Inputs) > 0 {
		fmt.Fprintf(stderr, "%s %s needs:\n", safe(s.Name), safe(s.Version))
	}
	for _, x := range plan.Inputs {
		var notes []string
		if x.Required {
			notes = append(notes, "required")
		}
		if x.Secret {
			notes = append(notes, "secret, not shown")
		}
		if x.Default != "" {
			notes = append(notes, "default "+x.Default)
		}
		if len(x.Choices) > 0 {
			notes = append(notes, "one of "+strings.Join(x.Choices, ", "))
		}
		fmt.Fprintf(stderr, "  %s %s (%s): %s: ", x.Kind, safe(x.Name), safe(strings.Join(notes, "; ")), safe(x.Description))
		var answer string
		if x.Secret {
			answer, err = readSecret(in)
			fmt.Fprintln(stderr)
		} else {
			answer, err = readLine(in)
		}
		if err != nil {
			fmt.Fprintln(stderr, "mcpls: no answer:", err)
			return 1
		}
		x.Value = answer
	}
	sc, err := plan.Server()
	if err != nil {
		fmt.Fprintln(stderr, "mcpls:", safe(err.Error()))
		return 1
	}
	// A secret has no place in .mcp.json, which is shared with the
	// project: the entry names the variable, the user's environment holds
	// the value.
	var fromEnv []string
	if c.scope == config.ScopeProject {
		for k := range sc.Env {
			if plan.Secret(k) {
				sc.Env[k] = "${" + k + "}"
				fromEnv = append(fromEnv, k)
			}
		}
		for k := range sc.Headers {
			if plan.Secret(k) {
				sc.Headers[k] = "${" + strings.ToUpper(strings.NewReplacer("-", "_").Replace(k)) + "}"
				fromEnv = append(fromEnv, strings.ToUpper(strings.NewReplacer("-", "_").Replace(k)))
			}
		}
	}
	fmt.Fprintf(stdout, "Install %s %s (%s) as %q in %s config:\n", safe(s.Name), safe(s.Version), safe(plan.Source), safe(plan.Name), c.scope)
	shown := func(k, v string) string {
		if plan.Secret(k) && !strings.HasPrefix(v, "${") {
			return "[secret]"
		}
		return v
	}
	if sc.Type == config.TypeStdio {
		fmt.Fprintf(stdout, "  command: %s\n", safe(strings.Join(append([]string{sc.Command}, sc.Args...), " ")))
		for _, k := range sorted(sc.Env) {
			fmt.Fprintf(stdout, "  env: %s=%s\n", safe(k), safe(shown(k, sc.Env[k])))
		}
	} else {
		fmt.Fprintf(stdout, "  %s: %s\n", sc.Type, safe(sc.URL))
		for _, k := range sorted(sc.Headers) {
			fmt.Fprintf(stdout, "  header: %s: %s\n", safe(k), safe(shown(k, redacted(k, sc.Headers[k]))))
		}
	}
	if !c.yes {
		fmt.Fprint(stderr, "Write it? [y/N] ")
		answer, err := readLine(in)
		if err != nil || !slices.Contains([]string{"y", "yes"}, strings.ToLower(strings.TrimSpace(answer))) {
			fmt.Fprintln(stderr, "mcpls: nothing written")
			return 1
		}
	}
	change, err := config.Add(ctx, c.dir, c.scope, plan.Name, config.Entry(sc))
	if err != nil {
		return refusal(stderr, plan.Name, c.scope, err)
	}
	fmt.Fprintf(stdout, "Added %s MCP server %s to %s config\n", sc.Type, safe(plan.Name), c.scope)
	changed(stdout, change)
	for _, k := range fromEnv {
		fmt.Fprintf(stdout, "Set %s in your environment: .mcp.json names it, and keeps no secret.\n", safe(k))
	}
	return 0
}

func sorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
