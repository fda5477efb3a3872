package testproc

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// EnvTools, EnvToolDefs and EnvInstructions script the "named" scenario:
// the names of its tools, comma-separated, more tools as a JSON array of
// their definitions, and its instructions.
const (
	EnvTools        = "MCPTEST_TOOLS"
	EnvToolDefs     = "MCPTEST_TOOL_DEFS"
	EnvInstructions = "MCPTEST_INSTRUCTIONS"
)

func init() {
	// A server with the tools $MCPTEST_TOOLS names and those
	// $MCPTEST_TOOL_DEFS defines, each answering its own name, and the
	// instructions $MCPTEST_INSTRUCTIONS.
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
		var defs []mcp.Tool
		if raw := os.Getenv(EnvToolDefs); raw != "" {
			if err := json.Unmarshal([]byte(raw), &defs); err != nil {
				panic("mcptest: " + EnvToolDefs + ": " + err.Error())
			}
		}
		for _, def := range defs {
			srv.AddTool(def, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
				return mcptest.TextResult(def.Name), nil
			})
		}
		serveStdio(srv)
	}
}
