package main

// mcpls install NAME[@VERSION]: a server of an MCP registry, written to a
// scope as `mcpls add` writes it, once the user saw what will run, the
// entry as it will be written, and the variables to set.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/registry"
)

// registryEnv names the registry install reads, when -registry does not.
const registryEnv = "MCPLUG_REGISTRY"

func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func installCommand(ctx context.Context, c *cmdLine, stdout, stderr io.Writer) int {
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
	plan, err := registry.PlanFor(s, &registry.Options{All: c.all})
	if err != nil {
		fmt.Fprintln(stderr, "mcpls:", safe(err.Error()))
		return 1
	}
	// Load's error also holds each entry's own (a variable unset, say),
	// which leaves the entry's names known; a file that cannot be read
	// whole does not, and a variable of its entries might be given again.
	cfg, _ := mcp.LoadConfig(c.dir)
	if len(cfg.Errors) > 0 {
		fmt.Fprintf(stderr, "mcpls: cannot tell which variables the config's entries name: %s\n", safe(errors.Join(errorList(cfg.Errors)...).Error()))
		return 1
	}
	// The name the user gives is used as given; else the shortest of
	// the server's names that no other server's entry has.
	var passed []string
	if c.name != "" {
		plan.Name = c.name
	} else {
		passed = plan.ChooseName(cfg.Servers)
		if sc, ok := cfg.Servers[plan.Name]; ok && sc.Scope == c.scope {
			fmt.Fprintf(stderr, "mcpls: %s is installed already: MCP server %s in %s config runs it\n", safe(s.Name), safe(plan.Name), c.scope)
			return 1
		}
	}
	// A variable another server's entry names is that server's: setting
	// it later for the one would hand it to the other. In any letters:
	// Windows has one variable of NAME and name.
	taken := map[string]bool{}
	for _, v := range cfg.Variables() {
		taken[strings.ToUpper(v)] = true
	}
	plan.Taken = func(name string) bool { return taken[strings.ToUpper(name)] }
	fmt.Fprintf(stderr, "%s %s: %s\n", safe(s.Name), safe(s.Version), safe(plan.Source))
	for _, n := range plan.Notes {
		fmt.Fprintf(stderr, "  %s\n", safe(n))
	}
	in := bufio.NewReader(stdin)
	if len(plan.Inputs) > 0 {
		fmt.Fprintf(stderr, "It needs (Enter takes the default%s):\n", map[bool]string{true: "", false: "; -all asks for the optional ones too"}[c.all])
	}
	for _, x := range plan.Inputs {
		fmt.Fprint(stderr, "  "+safe(x.Prompt()))
		answer, err := readLine(in)
		if err != nil {
			fmt.Fprintln(stderr, "\nmcpls: no answer:", err)
			return 1
		}
		x.Value = answer
	}
	sc, err := plan.Server()
	if err != nil {
		fmt.Fprintln(stderr, "mcpls:", safe(err.Error()))
		return 1
	}
	entry := config.Entry(sc)
	vars := plan.Variables()
	for _, n := range passed {
		fmt.Fprintf(stdout, "The name %q is another server's, in %s config.\n", safe(n), cfg.Servers[n].Scope)
	}
	fmt.Fprintf(stdout, "Install %s %s as %q in %s config.\n", safe(s.Name), safe(s.Version), safe(plan.Name), c.scope)
	if sc.Type == config.TypeStdio {
		words := make([]string, 0, 1+len(sc.Args))
		for _, w := range append([]string{sc.Command}, sc.Args...) {
			words = append(words, shellQuote(w))
		}
		fmt.Fprintf(stdout, "It runs: %s\n", safe(strings.Join(words, " ")))
	} else {
		fmt.Fprintf(stdout, "It connects to: %s (%s)\n", safe(sc.URL), sc.Type)
	}
	var shown bytes.Buffer
	if err := json.Indent(&shown, entry, "  ", "  "); err != nil {
		fmt.Fprintln(stderr, "mcpls:", err)
		return 1
	}
	// The entry exactly as it is written: it holds no secret, only the
	// names of the variables that hold them.
	fmt.Fprintf(stdout, "The entry:\n  %s\n", safe(shown.String()))
	if len(vars) > 0 {
		fmt.Fprintln(stdout, "Set these variables in the environment mcpls and Claude Code run in (the entry names them, and holds no secret):")
		setAlready := false
		for _, v := range vars {
			need := "required"
			if !v.Required {
				need = "optional"
			}
			// Names are made of words, and two servers' can meet: a
			// variable set already goes to this server as it is.
			if _, set := os.LookupEnv(v.Name); set {
				need += " (set already: its value goes to this server)"
				setAlready = true
			}
			line := fmt.Sprintf("  %s  %s, %s", v.Name, v.For, need)
			if d := strings.TrimSpace(v.Description); d != "" {
				line += ": " + d
			}
			fmt.Fprintln(stdout, safe(line))
		}
		if setAlready {
			fmt.Fprintln(stdout, "If a variable set already holds another server's secret, answer no and choose another name with -name.")
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
	change, err := config.Add(ctx, c.dir, c.scope, plan.Name, entry)
	if err != nil {
		code := refusal(stderr, plan.Name, c.scope, err)
		if errors.Is(err, config.ErrExists) {
			fmt.Fprintln(stderr, "Choose another name with -name.")
		}
		return code
	}
	fmt.Fprintf(stdout, "Added %s MCP server %s to %s config\n", sc.Type, safe(plan.Name), c.scope)
	changed(stdout, change)
	for _, v := range vars {
		if _, set := os.LookupEnv(v.Name); !set {
			fmt.Fprintf(stdout, "%s is not set yet: set it before the server starts.\n", safe(v.Name))
		}
	}
	return 0
}

// errorList is the config's errors as errors.
func errorList(list []*config.Error) []error {
	out := make([]error, len(list))
	for i, e := range list {
		out[i] = e
	}
	return out
}
