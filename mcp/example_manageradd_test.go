package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os/exec"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// A server of the program's own, started by the Manager as a child
// process: a TransportFunc builds a new exec.Cmd for each connection, so
// that a server that is lost (it crashed, or Reconnect was asked) starts
// again. A *CommandTransport itself is refused, since its exec.Cmd runs
// once.
func ExampleManager_Add() {
	ctx := context.Background()
	m := mcp.NewManager(nil, nil)
	defer m.Close()

	err := m.Add("once", &mcp.CommandTransport{Command: serverCommand()})
	fmt.Println("a CommandTransport:", errors.Is(err, mcp.ErrSingleUseTransport))

	err = m.Add("calc", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		return (&mcp.CommandTransport{Command: serverCommand()}).Connect(ctx)
	}))
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		res, err := m.CallTool(ctx, "mcp__calc__add", map[string]int{"a": 17, "b": 25})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("17 + 25 =", res.Text(), "restarts:", m.Status()[0].Restarts)
		if err := m.Reconnect(ctx, "calc"); err != nil { // a new process
			log.Fatal(err)
		}
	}
	// Output:
	// a CommandTransport: true
	// 17 + 25 = 42 restarts: 0
	// 17 + 25 = 42 restarts: 1
}

// serverCommand is the command of a stdio MCP server with the tool add:
// this test binary, run again as one. A program's would be
// exec.Command("my-mcp-server").
func serverCommand() *exec.Cmd { return testproc.Command("basic") }
