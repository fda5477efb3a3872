package mcp

import (
	"context"
	"encoding/json"
	"fmt"
)

// ToolCaller is what CallToolAs calls through: a *Connection or a
// *Manager.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args any) (*CallToolResult, error)
}

// ToolError reports a tool that ran and failed (IsError) where a typed
// result was wanted. Result is the tool's answer.
type ToolError struct {
	Tool   string
	Result *CallToolResult
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("mcp: tool %q failed: %s", e.Tool, preview([]byte(e.Result.Text())))
}

// CallToolAs calls a tool, as CallTool does, and decodes its
// structuredContent into a T. A tool that failed is a *ToolError; a result
// without structuredContent, or that does not decode into a T, matches
// ErrBadResult. The result comes back in every case but a failed call.
func CallToolAs[T any](ctx context.Context, c ToolCaller, name string, args any) (T, *CallToolResult, error) {
	var out T
	res, err := c.CallTool(ctx, name, args)
	switch {
	case err != nil:
		return out, nil, err
	case res.IsError:
		return out, res, &ToolError{Tool: name, Result: res}
	case len(res.StructuredContent) == 0:
		return out, res, fmt.Errorf("%w: tool %q answered no structuredContent", ErrBadResult, name)
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		return out, res, &badResult{fmt.Errorf("tool %q: structuredContent: %w", name, err)}
	}
	return out, res, nil
}
