package mcp

import "time"

// SetIdleRead changes how long c's stream may go unread between calls
// before the background reader takes over.
func SetIdleRead(c *Connection, d time.Duration) {
	c.stream.mu.Lock()
	c.stream.idle = d
	c.stream.mu.Unlock()
}

// CallReads reports whether a call is reading c's stream.
func CallReads(c *Connection) bool {
	c.stream.mu.Lock()
	defer c.stream.mu.Unlock()
	return c.stream.reader > background
}
