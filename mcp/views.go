package mcp

// A Manager's MCP Apps side: the tools that name a view, the views
// (cached per server, see viewcache.go), and the calls a view makes to
// its own server.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxViewSize bounds a view's HTML, in bytes: a larger one is refused
// (the official example views are 0.2 to 5 MB, their scripts inlined).
const MaxViewSize = 16 << 20

// ErrNotForApps: a view asked for a tool its server does not let views
// call (its _meta.ui visibility leaves out "app").
var ErrNotForApps = errors.New("mcp: the tool is not visible to apps")

// AppTool is a tool that names a view: its server, the tool as the
// server lists it, and the tool's _meta.ui.
type AppTool struct {
	Name   string // as exposed (Tools, CallTool)
	Server string
	Tool   Tool // as the server lists it
	UI     *ToolUI
}

// AppTools connects servers not yet tried and returns the tools of every
// connected server that name a view (_meta.ui.resourceUri) and that the
// model may call, by server and then as listed. A host shows these, calls
// them with CallAppTool or CallTool, and renders View(Server,
// UI.ResourceURI) with the result.
func (m *Manager) AppTools(ctx context.Context) ([]AppTool, error) {
	if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
		return nil, err
	}
	m.mu.Lock()
	routes := m.routes // the table of the last change, when it is current
	m.mu.Unlock()
	if routes == nil {
		_, routes = m.table()
	}
	exposed := make(map[route]string, len(routes))
	for name, r := range routes {
		exposed[r] = name
	}
	m.mu.Lock()
	servers := m.sorted()
	m.mu.Unlock()
	var out []AppTool
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StateConnected || s.state == StateReconnecting {
			for _, t := range s.tools {
				if ui, err := t.UI(); err == nil && ui != nil && ui.ResourceURI != "" && ui.VisibleTo(VisibilityModel) && exposed[route{server: s, tool: t.Name}] != "" {
					out = append(out, AppTool{Name: exposed[route{server: s, tool: t.Name}], Server: s.name, Tool: t, UI: ui})
				}
			}
		}
		s.mu.Unlock()
	}
	return out, nil
}

// View returns the view uri (a ui:// resource) of the server, reading it
// with resources/read the first time. Views are cached per server until
// the server's tools or resources change (list_changed), the resource is
// updated (notifications/resources/updated), or the server reconnects.
// The first contents of the resource must be MIMETypeApp, as text or
// blob, of at most MaxViewSize bytes of UTF-8; anything else is an error
// matching ErrBadResult.
func (m *Manager) View(ctx context.Context, server, uri string) (*View, error) {
	if !strings.HasPrefix(uri, "ui://") {
		return nil, fmt.Errorf("mcp: view %q of server %q: not a ui:// URI", uri, server)
	}
	conn, err := m.Connection(ctx, server)
	if err != nil {
		return nil, err
	}
	s, err := m.lookup(server)
	if err != nil {
		return nil, err
	}
	if v := s.views.get(conn, uri); v != nil {
		return v, nil
	}
	res, err := conn.ReadResource(ctx, &ReadResourceParams{URI: uri})
	if err != nil {
		return nil, wrap(fmt.Sprintf("server %q", server), err)
	}
	v, err := viewOf(server, uri, res)
	if err != nil {
		return nil, err
	}
	s.views.put(conn, v)
	return v, nil
}

// viewOf checks what resources/read returned for a view.
func viewOf(server, uri string, res *ReadResourceResult) (*View, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("mcp: view %q of server %q: %w: %s", uri, server, ErrBadResult, fmt.Sprintf(format, a...))
	}
	if len(res.Contents) == 0 {
		return nil, bad("no contents")
	}
	c := res.Contents[0]
	if c.MimeType != MIMETypeApp {
		return nil, bad("MIME type %q, not %q", c.MimeType, MIMETypeApp)
	}
	var html string
	switch {
	case c.Text != nil:
		html = *c.Text
	case c.Blob != nil:
		if base64.StdEncoding.DecodedLen(len(*c.Blob)) > MaxViewSize+3 {
			return nil, bad("more than %d bytes", MaxViewSize)
		}
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		if err != nil {
			return nil, bad("blob: %v", err)
		}
		html = string(b)
	default:
		return nil, bad("neither text nor blob")
	}
	if len(html) > MaxViewSize {
		return nil, bad("more than %d bytes", MaxViewSize)
	}
	if !utf8.ValidString(html) {
		return nil, bad("not UTF-8")
	}
	ui, err := c.UI()
	if err != nil {
		return nil, fmt.Errorf("mcp: view %q of server %q: %w", uri, server, err)
	}
	return &View{Server: server, URI: uri, HTML: html, UI: ui}, nil
}

// CallAppTool calls, for a view of the server, the server's tool (under
// the name the server lists it by). The tool must be in the server's
// list and visible to apps (its _meta.ui visibility has "app", or none is
// given); otherwise the error matches ErrUnknownTool or ErrNotForApps
// and nothing reaches the server. The permission rules apply as to
// CallTool. ToolTimeout bounds it, as CallTool.
func (m *Manager) CallAppTool(ctx context.Context, server, tool string, args any) (*CallToolResult, error) {
	conn, err := m.Connection(ctx, server)
	if err != nil {
		return nil, err
	}
	s, err := m.lookup(server)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var found *Tool
	for i := range s.tools {
		if s.tools[i].Name == tool {
			found = &s.tools[i]
			break
		}
	}
	s.mu.Unlock()
	switch {
	case found == nil:
		return nil, fmt.Errorf("%w %q of server %q", ErrUnknownTool, tool, server)
	case !found.visibleTo(VisibilityApp):
		return nil, fmt.Errorf("%w: %q of server %q", ErrNotForApps, tool, server)
	}
	if err := m.permit(ctx, ExposedName(server, tool), server, tool, args); err != nil {
		return nil, err
	}
	if m.opts.ToolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.ToolTimeout)
		defer cancel()
	}
	res, err := conn.CallTool(ctx, tool, args)
	if err != nil {
		return nil, wrap(fmt.Sprintf("server %q", server), err)
	}
	return res, nil
}

// ReadAppResource reads, for a view of the server, one of the server's
// resources (resources/read).
func (m *Manager) ReadAppResource(ctx context.Context, server, uri string) (*ReadResourceResult, error) {
	conn, err := m.Connection(ctx, server)
	if err != nil {
		return nil, err
	}
	res, err := conn.ReadResource(ctx, &ReadResourceParams{URI: uri})
	if err != nil {
		return nil, wrap(fmt.Sprintf("server %q", server), err)
	}
	return res, nil
}
