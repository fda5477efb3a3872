package mcp

import (
	"context"
	"os"
	"strconv"
	"sync"
)

// Defaults of how many servers a Manager starts at once, Claude Code's:
// its MCP_SERVER_CONNECTION_BATCH_SIZE (local servers) and
// MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE (remote ones).
const (
	defaultConnectBatch       = 3
	defaultRemoteConnectBatch = 20
)

// startLimits bound how many of a Manager's servers start at once: the
// local ones (child processes, which share the machine's CPUs while they
// start) and the remote ones, apart. A server holds its place from the
// start of its attempt to its end (connected and listed, or failed), and
// its ConnectTimeout runs from when it has a place, not from when it was
// queued: a host of 50 servers on a loaded machine starts them a few at a
// time instead of making them all late together.
type startLimits struct {
	once          sync.Once
	local, remote chan struct{}
}

// startSlot waits, within the Manager's life, for a place for s to start,
// and returns what gives it back.
func (m *Manager) startSlot(s *server) (release func(), err error) {
	m.starts.once.Do(func() {
		m.starts.local = make(chan struct{}, batchSize(m.opts.ConnectBatch, "MCP_SERVER_CONNECTION_BATCH_SIZE", defaultConnectBatch))
		m.starts.remote = make(chan struct{}, batchSize(m.opts.RemoteConnectBatch, "MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE", defaultRemoteConnectBatch))
	})
	slots := m.starts.remote
	if s.local() {
		slots = m.starts.local
	}
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-m.ctx.Done():
		return nil, ErrClosed
	}
}

// batchSize is n when set, else the positive integer in the environment
// variable env, else def.
func batchSize(n int, env string, def int) int {
	if n > 0 {
		return n
	}
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		return v
	}
	return def
}

// local reports whether s may run as a child process, and so starts in
// the smaller batches: a config entry of type stdio, or a transport given
// to Add that is not one of the HTTP transports (a TransportFunc that
// builds a CommandTransport cannot be told from any other function).
func (s *server) local() bool {
	switch s.kind {
	case "stdio", "":
		return true
	case "custom":
		t, err := s.transport(context.Background()) // Add's: the transport as given
		switch t.(type) {
		case *StreamableHTTPTransport, *SSETransport:
			return err != nil
		}
		return true
	}
	return false
}
