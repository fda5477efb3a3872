package mcp

// The views a Manager keeps of a server, for one connection: read once
// until the server says they changed or the connection is replaced.

import "sync"

// View is a view ready to render: its server, its ui:// URI, its HTML
// and its _meta.ui (nil when it gave none: it may then reach nothing).
type View struct {
	Server string
	URI    string
	HTML   string
	UI     *ResourceUI
}

// views is a server's cache of views, for one connection.
type views struct {
	mu   sync.Mutex
	conn *Connection
	byID map[string]*View
}

func (v *views) get(conn *Connection, uri string) *View {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.conn != conn {
		return nil
	}
	return v.byID[uri]
}

func (v *views) put(conn *Connection, view *View) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.conn != conn {
		v.conn, v.byID = conn, map[string]*View{}
	}
	v.byID[view.URI] = view
}

// drop forgets one view ("" forgets them all).
func (v *views) drop(uri string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if uri == "" {
		v.byID = nil
		v.conn = nil
		return
	}
	delete(v.byID, uri)
}
