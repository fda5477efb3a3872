package testproc

import (
	"context"
	"os"
	"strings"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// EnvTools and EnvInstructions script the "named" scenario: the names of
// its tools, comma-separated, and its instructions.
const (
	EnvTools        = "MCPTEST_TOOLS"
	EnvInstructions = "MCPTEST_INSTRUCTIONS"
)

func init() {
	// A server with the tools $MCPTEST_TOOLS names, each answering its
	// own name, and the instructions $MCPTEST_INSTRUCTIONS.
	scenarios["named"] = func() {
		srv := &mcptest.Server{Name: "named", Instructions: os.Getenv(EnvInstructions)}
		for _, name := range strings.Split(os.Getenv(EnvTools), ",") {
			if name == "" {
				continue
			}
			srv.AddTool(mcp.Tool{Name: name, Description: "The tool " + name + "."}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
				return mcptest.TextResult(name), nil
			})
		}
		serveStdio(srv)
	}
}
