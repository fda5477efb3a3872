package mcptest

import (
	"fmt"
	"os"
	"os/exec"
)

// envServer names the server a re-executed test binary runs.
const envServer = "MCPTEST_SERVER"

// Main serves one of servers over stdio and exits, when this process was
// started by Command; otherwise it returns at once. Call it first in
// TestMain, so that the test binary can serve as a child-process server:
//
//	func TestMain(m *testing.M) {
//		mcptest.Main(map[string]func() *mcptest.Server{"calc": newCalc})
//		os.Exit(m.Run())
//	}
//
// The child exits with status 0 when its stdin ends, and 2 when it is asked
// for a server that servers does not name.
func Main(servers map[string]func() *Server) {
	name, ok := os.LookupEnv(envServer)
	if !ok {
		return
	}
	newServer, ok := servers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "mcptest: no server named %q in mcptest.Main\n", name)
		os.Exit(2)
	}
	if err := newServer().serveStream(os.Stdin, os.Stdout, true); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns a command that runs this test binary as the server that
// Main knows by name, for mcp.CommandTransport. The caller may add to its
// Env and set its other fields before use.
func Command(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServer+"="+name)
	return cmd
}
