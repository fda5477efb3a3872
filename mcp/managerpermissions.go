package mcp

// A Manager's permission rules (config.Permissions): a tool a deny rule
// matches is not offered and a call to it is refused; a call to a tool an
// ask rule matches waits for the host's answer.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcplug/mcplug/mcp/config"
)

// ErrPermissionDenied is matched by the error of a call a permission rule
// refuses (a *PermissionError).
var ErrPermissionDenied = errors.New("mcp: refused by a permission rule")

// PermissionError is a call refused by a permission rule: a deny rule,
// or an ask rule the host said no to (or could not be asked about: no
// ManagerOptions.AskPermission). It matches ErrPermissionDenied.
type PermissionError struct {
	Tool   string      // the exposed name called
	Server string      // the server's name in the Manager
	Rule   config.Rule // the rule that decided
	// Asked reports that an ask rule matched and AskPermission said no;
	// false for a deny rule, and for an ask rule with no AskPermission.
	Asked bool
}

func (e *PermissionError) Error() string {
	rule := fmt.Sprintf("the permission rule %q", e.Rule.Text)
	if e.Rule.Source != "" {
		rule += " of " + e.Rule.Source
	}
	switch {
	case e.Rule.Behavior == config.Deny:
		return fmt.Sprintf("mcp: tool %q is denied by %s (permissions.deny)", e.Tool, rule)
	case e.Asked:
		return fmt.Sprintf("mcp: tool %q: the user did not allow the call (%s asks for each call)", e.Tool, rule)
	}
	return fmt.Sprintf("mcp: tool %q: %s asks the user for each call, and there is no one to ask (set ManagerOptions.AskPermission)", e.Tool, rule)
}

// Is reports whether target is ErrPermissionDenied.
func (e *PermissionError) Is(target error) bool { return target == ErrPermissionDenied }

// PermissionRequest is a call ManagerOptions.AskPermission decides on.
type PermissionRequest struct {
	Tool       string      // the exposed name called
	Server     string      // the server's name in the Manager
	ServerTool string      // the tool's name on its server
	Args       any         // the arguments, as given to CallTool
	Rule       config.Rule // the ask rule that matched
}

// deniedTool is a tool of a server that a deny rule keeps from being
// offered.
type deniedTool struct {
	Name   string // the name it would be exposed by
	Server string
	Tool   string // its name on the server
	Rule   config.Rule
}

// ToolPermission is a tool of a server that a permission rule in force
// matches, and what the rule decides.
type ToolPermission struct {
	Name     string // as exposed (a Deny tool: the name it would be exposed by)
	Server   string
	Tool     string // its name on the server
	Behavior config.Behavior
	Rule     config.Rule
}

// Permissions returns the permission rules the Manager applies: those of
// its Config (config.Load reads them from the settings files; the
// workspace's own allow rules count once it is trusted), or nil.
func (m *Manager) Permissions() *config.Permissions {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.permissions()
}

// permissions is Permissions; m.mu must be held.
func (m *Manager) permissions() *config.Permissions {
	if m.cfg == nil {
		return nil
	}
	return m.cfg.Permissions
}

// ToolPermissions returns the tools of the connected servers that a
// permission rule in force matches, by server and then by name, with what
// the rule decides: Deny (the tool is not in Tools), Ask or Allow. It
// starts nothing.
func (m *Manager) ToolPermissions() []ToolPermission {
	_, routes := m.table()
	m.mu.Lock()
	perms, denied := m.permissions(), m.denied
	m.mu.Unlock()
	var out []ToolPermission
	for _, d := range denied {
		out = append(out, ToolPermission{Name: d.Name, Server: d.Server, Tool: d.Tool, Behavior: config.Deny, Rule: d.Rule})
	}
	for name, r := range routes {
		if b, rule := perms.Decide(r.server.name, r.tool); rule != nil {
			out = append(out, ToolPermission{Name: name, Server: r.server.name, Tool: r.tool, Behavior: b, Rule: *rule})
		}
	}
	slices.SortFunc(out, func(a, b ToolPermission) int {
		if a.Server != b.Server {
			return compareStrings(a.Server, b.Server)
		}
		return compareStrings(a.Name, b.Name)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// deniedRule is the deny rule that keeps the tool of server from being
// offered, or nil.
func deniedRule(perms *config.Permissions, server, tool string) *config.Rule {
	if b, r := perms.Decide(server, tool); b == config.Deny {
		return r
	}
	return nil
}

// permit decides on a call of the tool of server (exposed as name) by the
// permission rules: a deny rule refuses it, an ask rule asks
// AskPermission, under ctx.
func (m *Manager) permit(ctx context.Context, name, server, tool string, args any) error {
	m.mu.Lock()
	perms := m.permissions()
	m.mu.Unlock()
	b, rule := perms.Decide(server, tool)
	switch b {
	case config.Deny:
		return &PermissionError{Tool: name, Server: server, Rule: *rule}
	case config.Ask:
		if m.opts.AskPermission == nil {
			return &PermissionError{Tool: name, Server: server, Rule: *rule}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !m.opts.AskPermission(ctx, &PermissionRequest{Tool: name, Server: server, ServerTool: tool, Args: args, Rule: *rule}) {
			return &PermissionError{Tool: name, Server: server, Rule: *rule, Asked: true}
		}
	}
	return nil
}
