package mcp

// A Manager's tool table: the servers' tools under their exposed
// names, rebuilt when a server's list changes, and the routing of calls.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Tools connects servers not yet tried (see Connect) and returns the tools
// of every server, named mcp__<server>__<tool>; see ExposedName for the
// rules. A tool whose _meta.ui visibility leaves out the model (MCP
// Apps: a tool for the server's views alone) is not among them, nor one
// whose _meta.ui cannot be read (the server's Status says so). A tool
// without a description is described as "MCP tool <tool>
// from <server>". A server being reconnected keeps its tools listed;
// servers that failed contribute none; a server's list_changed refreshes
// its tools in the background. The error is non-nil only when ctx ends or
// the Manager is closed.
func (m *Manager) Tools(ctx context.Context) ([]Tool, error) {
	if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
		return nil, err
	}
	tools, _ := m.table()
	return tools, nil
}

// table builds the merged tool list and the routing table. Exposed names
// are unique whatever the servers send: a tool a server lists twice is
// exposed once, names that would collide are all disambiguated with a hash
// of server and tool (see ExposedName), and every collision is reported in
// the Status of the servers involved.
func (m *Manager) table() ([]Tool, map[string]route) {
	m.mu.Lock()
	servers := m.sorted()
	perms := m.permissions()
	m.mu.Unlock()
	denied := map[string]deniedTool{}
	type entry struct {
		s    *server
		tool Tool
		name string
	}
	var entries []entry
	count := map[string]int{}
	warn := map[*server][]string{}
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StateConnected || s.state == StateReconnecting {
			seen := map[string]bool{}
			for _, t := range s.tools {
				if !t.visibleTo(VisibilityModel) {
					if _, err := t.UI(); err != nil {
						warn[s] = append(warn[s], err.Error()+"; the tool is offered to no one")
					}
					continue // for the server's views alone (see Manager.CallAppTool), or unreadable
				}
				if seen[t.Name] {
					warn[s] = append(warn[s], fmt.Sprintf("the server lists tool %q more than once; the first is exposed", t.Name))
					continue
				}
				seen[t.Name] = true
				name := ExposedName(s.name, t.Name)
				if r := deniedRule(perms, s.name, t.Name); r != nil {
					denied[name] = deniedTool{Name: name, Server: s.name, Tool: t.Name, Rule: *r}
					continue // never offered: see Manager.Permissions
				}
				entries = append(entries, entry{s, t, name})
				count[name]++
			}
		}
		s.mu.Unlock()
	}
	routes := make(map[string]route, len(entries))
	tools := make([]Tool, 0, len(entries))
	exposed := map[*server]int{}
	for _, e := range entries {
		name := e.name
		if count[name] > 1 || routes[name].server != nil {
			name = disambiguate(e.s.name, e.tool.Name, func(n string) bool { return routes[n].server != nil })
			warn[e.s] = append(warn[e.s], fmt.Sprintf("tool %q would be exposed as %q like another tool; exposed as %q", e.tool.Name, e.name, name))
			m.logger.Debug("mcp: tool names collide", "server", e.s.name, "tool", e.tool.Name, "exposed", name) // Status's warnings say it
		}
		t := e.tool
		t.Name = name
		if e.s.cfg != nil && e.s.cfg.AlwaysLoad {
			t.Meta = withAlwaysLoad(t.Meta)
		}
		if t.Description == "" {
			t.Description = fmt.Sprintf("MCP tool %s from %s", e.tool.Name, e.s.name)
		}
		routes[name] = route{server: e.s, tool: e.tool.Name}
		tools = append(tools, t)
		exposed[e.s]++
	}
	for _, s := range servers {
		s.mu.Lock()
		s.warnings, s.exposed = warn[s], exposed[s]
		s.mu.Unlock()
	}
	m.mu.Lock()
	m.routes, m.denied = routes, denied
	m.mu.Unlock()
	return tools, routes
}

// CallTool calls a tool by its exposed name (as returned by Tools). The
// call is bounded by ctx and by ToolTimeout; a server being reconnected is
// waited for within the same bounds. A name no server exposes is an error
// matching ErrUnknownTool; a tool a deny rule keeps out of Tools, or that
// an ask rule asks about and AskPermission does not allow, is refused
// with a *PermissionError (ErrPermissionDenied), and nothing reaches the
// server. A tool that ran and failed is a result with IsError set, as
// with Connection.CallTool.
func (m *Manager) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	var res *CallToolResult
	err := m.routeTool(ctx, name, args, func(ctx context.Context, conn *Connection, tool string) (err error) {
		res, err = conn.CallTool(ctx, tool, args)
		return err
	})
	return res, err
}

// StartToolTask starts the tool name (mcp__<server>__<tool>) as a task on
// its server, as Connection.StartToolTask does; the Task's methods go to
// that server. ToolTimeout bounds the start only: the task is followed
// with Task.Wait, under the caller's ctx.
func (m *Manager) StartToolTask(ctx context.Context, name string, args any) (*Task, error) {
	var t *Task
	err := m.routeTool(ctx, name, args, func(ctx context.Context, conn *Connection, tool string) (err error) {
		t, err = conn.StartToolTask(ctx, tool, args)
		return err
	})
	return t, err
}

// routeTool runs do with the connection and tool name of the exposed tool
// name, connecting its server if needed, once the permission rules let
// the call with args through; ToolTimeout bounds it.
func (m *Manager) routeTool(ctx context.Context, name string, args any, do func(ctx context.Context, conn *Connection, tool string) error) error {
	m.mu.Lock()
	closed, routes := m.closed, m.routes
	m.mu.Unlock()
	if closed {
		return ErrClosed
	}
	r, ok := routes[name]
	if !ok { // not connected yet, or the table is stale
		if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
			return err
		}
		_, routes = m.table()
		r, ok = routes[name]
	}
	if !ok {
		m.mu.Lock()
		d, denied := m.denied[name]
		m.mu.Unlock()
		if denied {
			return &PermissionError{Tool: name, Server: d.Server, Rule: d.Rule}
		}
		return fmt.Errorf("%w %q (list the tools with Tools)", ErrUnknownTool, name)
	}
	if err := m.permit(ctx, name, r.server.name, r.tool, args); err != nil {
		return err
	}
	if m.opts.ToolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.ToolTimeout)
		defer cancel()
	}
	conn, err := m.wait(ctx, r.server)
	if err != nil {
		return err
	}
	if err := do(ctx, conn, r.tool); err != nil {
		return wrap(fmt.Sprintf("server %q", r.server.name), err)
	}
	return nil
}

// alwaysLoadMeta is the _meta key Claude Code reads on a tool: true, it is
// never deferred behind a tool search (package agent reads it).
const alwaysLoadMeta = "anthropic/alwaysLoad"

// withAlwaysLoad is a tool's _meta with "anthropic/alwaysLoad": true, for
// the tools of a config entry with "alwaysLoad": true, unless the tool
// says otherwise itself (its own value wins, as in Claude Code).
func withAlwaysLoad(meta json.RawMessage) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 && (json.Unmarshal(meta, &m) != nil || m == nil) {
		return meta
	}
	if _, ok := m[alwaysLoadMeta]; ok {
		return meta
	}
	m[alwaysLoadMeta] = json.RawMessage("true")
	b, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return b
}

// Status reports every server, sorted by name. It starts nothing.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	servers := m.sorted()
	built := m.routes != nil
	m.mu.Unlock()
	if !built {
		m.table()
	}
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.name, State: s.state, Transport: s.kind, Err: s.err, Tools: s.exposed,
			Restarts: s.restarts, Warnings: slices.Clone(s.warnings)}
		if s.cfg != nil {
			st.Scope, st.Source = s.cfg.Scope, s.cfg.Source
			st.Warnings = append(slices.Clone(s.cfg.Warnings), st.Warnings...)
		}
		if s.conn != nil {
			if err := s.conn.Err(); err != nil && s.state == StateConnected {
				st.State, st.Err = StateReconnecting, err
			}
			st.ServerInfo = s.conn.InitializeResult().ServerInfo
			st.ProtocolVersion = s.conn.InitializeResult().ProtocolVersion
		}
		s.mu.Unlock()
		if s.authorizer != nil && s.mayContact() == nil {
			if a, ok := s.authorizer().(MethodAuthorizer); ok {
				st.Auth = a.Method()
			}
		}
		out = append(out, st)
	}
	return out
}
