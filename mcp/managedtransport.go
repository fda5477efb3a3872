package mcp

import (
	"errors"
	"fmt"
)

// ErrSingleUseTransport is matched by the error of Manager.Add given a
// transport that can connect only once: a *CommandTransport, whose
// exec.Cmd runs once, or an end of NewInMemoryTransports, whose pipe
// carries one session.
var ErrSingleUseTransport = errors.New("mcp: a transport that connects only once")

// reusable checks that a transport given to Manager.Add can connect again
// when the server is lost. The Manager does not copy a CommandTransport's
// exec.Cmd to start it again: what exec.CommandContext, Cancel and the
// pipes a caller set hold cannot be copied, and a copy would run another
// program than the one the caller built.
func reusable(name string, t Transport) error {
	switch t.(type) {
	case *CommandTransport:
		return fmt.Errorf("%w (a *CommandTransport runs its exec.Cmd once): server %q could not be started again after it is lost; give Manager.Add an mcp.TransportFunc that builds a new CommandTransport, with a new exec.Cmd, for each connection", ErrSingleUseTransport, name)
	case *inMemoryTransport:
		return fmt.Errorf("%w (an end of NewInMemoryTransports carries one session): server %q could not be connected again after it is lost; give Manager.Add an mcp.TransportFunc that calls NewInMemoryTransports and serves the server's end for each connection (mcptest.Server.Transport does)", ErrSingleUseTransport, name)
	}
	return nil
}
