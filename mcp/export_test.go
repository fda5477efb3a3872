package mcp

import (
	"io"
	"time"

	"github.com/mcplug/mcplug/internal/httpstream"
	"github.com/mcplug/mcplug/internal/ndjson"
)

// SetIdleRead changes how long c's stream may go unread between calls
// before the background reader takes over, and wakes the background reader
// to look again.
func SetIdleRead(c *Connection, d time.Duration) { c.stream.r.SetIdle(d) }

// CallReads reports whether a call is reading c's stream.
func CallReads(c *Connection) bool { return c.stream.r.CallReads() }

// BackgroundSleep returns how long c's background reader sleeps while a
// call reads.
func BackgroundSleep(c *Connection) time.Duration { return c.stream.r.BackgroundSleep() }

// NewStreamWithWriteQueue is NewStream with another bound on the bytes
// queued for writing.
func NewStreamWithWriteQueue(rwc io.ReadWriteCloser, max int) Stream {
	return newLineStreamWith(rwc, ndjson.StreamOptions{MaxQueue: max})
}

// SetProbeTimeout changes how long Connect waits for an answer to
// server/discover, and returns a function that restores it.
func SetProbeTimeout(d time.Duration) func() {
	old := probeTimeout
	probeTimeout = d
	return func() { probeTimeout = old }
}

// SetHTTPMaxQueue changes the bound of the bytes waiting to be POSTed, and
// returns a function that restores it.
func SetHTTPMaxQueue(n int) func() {
	old := httpstream.MaxQueue
	httpstream.MaxQueue = n
	return func() { httpstream.MaxQueue = old }
}

// SetDrainTimeout changes how long what follows a response on its SSE
// stream is read, and returns a function that restores it.
func SetDrainTimeout(d time.Duration) func() {
	old := httpstream.DrainTimeout
	httpstream.DrainTimeout = d
	return func() { httpstream.DrainTimeout = old }
}

// CloseIdleHTTPConnections closes the idle connections of the HTTP client
// the transports share by default, so that a test can count what is left.
func CloseIdleHTTPConnections() { closeIdleClients() }

// SetHTTPProbeTimeout sets the bound of server/discover over HTTP, and
// returns the function that restores it.
func SetHTTPProbeTimeout(d time.Duration) func() {
	old := httpProbeTimeout
	httpProbeTimeout = d
	return func() { httpProbeTimeout = old }
}

// ServerIsLocal reports whether m counts its server name among the local
// ones, which start in the smaller batches.
func ServerIsLocal(m *Manager, name string) bool {
	s, err := m.lookup(name)
	return err == nil && s.local()
}
