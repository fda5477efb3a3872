package mcp

import (
	"context"
)

// SetLoggingLevel asks the server to send log messages of level and above:
// logging/setLevel on a legacy server; on a modern one, the level goes in
// the _meta of every later request, and only those get log messages.
func (c *Connection) SetLoggingLevel(ctx context.Context, level LoggingLevel) error {
	return c.era().setLoggingLevel(ctx, c, level)
}
