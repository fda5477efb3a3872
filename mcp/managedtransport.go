package mcp

import "fmt"

// ErrSingleUseTransport is matched by the error of Manager.Add given a
// transport that can connect only once: a *CommandTransport, whose
// exec.Cmd runs once.
var ErrSingleUseTransport = fmt.Errorf("mcp: a transport that connects only once (a *CommandTransport runs its exec.Cmd once)")

// reusable checks that a transport given to Manager.Add can connect again
// when the server is lost. The Manager does not copy a CommandTransport's
// exec.Cmd to start it again: what exec.CommandContext, Cancel and the
// pipes a caller set hold cannot be copied, and a copy would run another
// program than the one the caller built.
func reusable(name string, t Transport) error {
	if _, ok := t.(*CommandTransport); ok {
		return fmt.Errorf("%w: server %q could not be started again after it is lost; give Manager.Add an mcp.TransportFunc that builds a new CommandTransport, with a new exec.Cmd, for each connection", ErrSingleUseTransport, name)
	}
	return nil
}
