package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcplug/mcplug/mcp"
)

// ToolProvider is a source of tools: it lists them, and calls one by name.
// *mcp.Manager and *mcp.Connection satisfy it.
type ToolProvider interface {
	Tools(ctx context.Context) ([]mcp.Tool, error)
	CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error)
}

// CallChecker is a ToolProvider that is asked before every call the
// model makes to a tool the agent has, whichever provider's it is, the
// agent's own tools included (its tool search, ReadResultToolName):
// name and args as the model gave them ({} for no arguments), ctx the
// call's. An error refuses the call: the tool is not called, the error
// is the call's error result, for the model to see why, and the turn
// goes on. The checkers among Agent.Tools are asked in order, and the
// first error stops the others. A call of a tool the agent does not
// have is not checked: it fails as ErrUnknownTool. A SubAgent's calls
// are checked by its parent's checkers too. Skills is one: it gates the
// tools that run code on the host while the model acts on a skill of an
// MCP server.
type CallChecker interface {
	ToolProvider
	CheckCall(ctx context.Context, name string, args json.RawMessage) error
}

// ErrUnknownTool is matched by the error of a call to a tool no provider has.
var ErrUnknownTool = errors.New("agent: unknown tool")

// Func is a built-in tool: its definition and the Go function behind it.
// An error from Fn becomes an error result the model sees.
type Func struct {
	Tool mcp.Tool
	Fn   func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error)
}

// Funcs is a ToolProvider of built-in tools.
type Funcs []Func

// Tools returns the definitions of the functions.
func (fs Funcs) Tools(context.Context) ([]mcp.Tool, error) {
	out := make([]mcp.Tool, len(fs))
	for i, f := range fs {
		out[i] = f.Tool
		if out[i].InputSchema == nil {
			out[i].InputSchema = json.RawMessage(`{"type":"object"}`)
		}
	}
	return out, nil
}

// CallTool runs the named function. args is a json.RawMessage, []byte, or
// any value that encodes to a JSON object; nil means {}.
func (fs Funcs) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	for _, f := range fs {
		if f.Tool.Name != name {
			continue
		}
		raw, err := rawArgs(args)
		if err != nil {
			return nil, err
		}
		return f.Fn(ctx, raw)
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
}

func rawArgs(args any) (json.RawMessage, error) {
	switch a := args.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		return a, nil
	case []byte:
		return a, nil
	}
	return json.Marshal(args)
}

// Text is a tool result with one text block.
func Text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: mcp.ContentText, Text: s}}}
}

// toolSet is the merged tools of several providers.
type toolSet struct {
	tools  []mcp.Tool
	routes map[string]ToolProvider
}

// loadTools lists every provider's tools. A name claimed twice is an error.
func loadTools(ctx context.Context, providers []ToolProvider) (*toolSet, error) {
	ts := &toolSet{routes: map[string]ToolProvider{}}
	for _, p := range providers {
		tools, err := p.Tools(ctx)
		if err != nil {
			return nil, fmt.Errorf("agent: list tools: %w", err)
		}
		for _, t := range tools {
			if _, dup := ts.routes[t.Name]; dup {
				return nil, fmt.Errorf("agent: tool name %q is claimed by two providers; rename one", t.Name)
			}
			ts.routes[t.Name] = p
			ts.tools = append(ts.tools, t)
		}
	}
	return ts, nil
}
