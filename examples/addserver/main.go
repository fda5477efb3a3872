// Command addserver is a tiny MCP server over stdio with one tool,
// add(a, b). Use it from a config file:
//
//	{"mcpServers": {"demo": {"command": "go", "args": ["run", "./examples/addserver"]}}}
package main

import (
	"fmt"
	"os"

	"github.com/mcplug/mcplug/internal/addserver"
)

func main() {
	if err := addserver.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "addserver:", err)
		os.Exit(1)
	}
}
