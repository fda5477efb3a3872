package mcp

import (
	"context"
	"encoding/json"
	"slices"
)

// Root is a directory or file the client lets the server work in.
type Root struct {
	URI  string          `json:"uri"` // a file:// URI
	Name string          `json:"name,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SetRoots replaces the roots the server sees in roots/list, and tells a
// legacy server when they changed (notifications/roots/list_changed); a
// modern server asks for them with each request that needs them.
func (c *Connection) SetRoots(ctx context.Context, roots []Root) error {
	if c.opts.Roots == nil {
		return ErrNoRoots
	}
	c.rootsMu.Lock()
	same := slices.EqualFunc(c.roots, roots, func(a, b Root) bool {
		return a.URI == b.URI && a.Name == b.Name && string(a.Meta) == string(b.Meta)
	})
	c.roots = slices.Clone(roots)
	c.rootsMu.Unlock()
	if same {
		return nil
	}
	return c.era().rootsChanged(ctx, c)
}

// listRoots answers roots/list.
func (c *Connection) listRoots() any {
	c.rootsMu.Lock()
	defer c.rootsMu.Unlock()
	roots := c.roots
	if roots == nil {
		roots = []Root{}
	}
	return map[string]any{"roots": roots}
}
