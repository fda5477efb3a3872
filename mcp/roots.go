package mcp

import (
	"context"
	"slices"
)

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
