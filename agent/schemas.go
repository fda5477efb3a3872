package agent

import "github.com/mcplug/mcplug/mcp"

// ToolChecker is a Model that knows which tool definitions its API
// refuses: CheckTool returns why, or nil.
type ToolChecker interface {
	Model
	CheckTool(t mcp.Tool) error
}
