package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
)

// showPermissions prints the permission rules of the settings files (in
// the order they are read: the organisation's, the user's, the
// project's, the project's local ones), each with its file and whether
// it is in force, the rules left out, and then the tools of the connected
// servers that the rules hide (deny) or ask about (ask).
func showPermissions(ctx context.Context, m *mcp.Manager, stdout, stderr io.Writer) int {
	if _, err := m.Tools(ctx); err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	perms := m.Permissions()
	if perms == nil || len(perms.Rules) == 0 {
		fmt.Fprintln(stdout, "no permission rules (permissions.allow, deny and ask of the settings files)")
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if perms != nil {
		for _, r := range perms.Rules {
			note := ""
			switch {
			case r.Ignored != "":
				note = "not in force: " + r.Ignored
			case !r.MayMatchMCP():
				note = "not an MCP tool's rule: it decides nothing here"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Behavior, oneLine(r.Text), r.Scope, oneLine(r.Source), oneLine(note))
		}
	}
	w.Flush()
	if perms != nil {
		for _, warn := range perms.Warnings {
			fmt.Fprintln(stderr, "mcpls: warning: "+safe(warn))
		}
	}
	var ruled []mcp.ToolPermission
	for _, tp := range m.ToolPermissions() {
		if tp.Behavior != config.Allow {
			ruled = append(ruled, tp)
		}
	}
	if len(ruled) == 0 {
		return 0
	}
	fmt.Fprintln(stdout)
	w = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, tp := range ruled {
		what := "hidden"
		if tp.Behavior == config.Ask {
			what = "asks each call"
		}
		fmt.Fprintf(w, "%s\t%s\t%s %s (%s)\n", oneLine(tp.Name), what, tp.Behavior, oneLine(tp.Rule.Text), tp.Rule.Scope)
	}
	w.Flush()
	return 0
}
