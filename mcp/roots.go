package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
)

// Root is a directory or file the client lets the server work in.
type Root struct {
	URI  string          `json:"uri"` // a file:// URI
	Name string          `json:"name,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ErrNoRoots is returned by SetRoots on a connection made without
// Options.Roots: the client did not offer the roots capability.
var ErrNoRoots = errors.New("mcp: the connection does not offer roots (set Options.Roots)")

// SetRoots replaces the roots the server sees in roots/list and, when they
// differ from the current ones, sends notifications/roots/list_changed to a
// legacy server. A modern server, which removed that notification, asks for
// the roots in each request that needs them, and so sees the new ones.
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
