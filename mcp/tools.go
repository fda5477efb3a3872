package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// defaultInputSchema stands in for a tool's missing inputSchema.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// maxPages bounds how many pages a list method fetches.
const maxPages = 10000

// Tools returns the server's tools, fetching every page of tools/list.
//
// A tool without a name is dropped, a tool without an inputSchema gets
// {"type":"object"}, and a tool whose inputSchema is not a JSON object is
// dropped; each is logged, and none fails the list. A cursor the server
// repeats ends the listing (logged) rather than looping.
func (c *Connection) Tools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	err := c.paginate(ctx, "tools/list", func(raw json.RawMessage) error {
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		for _, t := range page.Tools {
			if tool, ok := c.checkTool(t); ok {
				tools = append(tools, tool)
			}
		}
		return nil
	})
	return tools, err
}

func (c *Connection) checkTool(raw json.RawMessage) (Tool, bool) {
	var t Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		c.logger.Warn("mcp: dropped a tool that does not decode", "err", err, "tool", preview(raw))
		return t, false
	}
	if t.Name == "" {
		c.logger.Warn("mcp: dropped a tool without a name", "tool", preview(raw))
		return t, false
	}
	schema := bytes.TrimSpace(t.InputSchema)
	switch {
	case len(schema) == 0 || bytes.Equal(schema, []byte("null")):
		c.logger.Warn("mcp: tool has no inputSchema; using {\"type\":\"object\"}", "tool", t.Name)
		t.InputSchema = defaultInputSchema
	case schema[0] != '{':
		c.logger.Warn("mcp: dropped a tool whose inputSchema is not an object", "tool", t.Name, "inputSchema", preview(schema))
		return t, false
	}
	return t, true
}

// paginate calls method with each cursor until the server returns none,
// handing every page's raw result to page.
func (c *Connection) paginate(ctx context.Context, method string, page func(json.RawMessage) error) error {
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		var params any
		if cursor != "" {
			params = cursorParams{Cursor: cursor}
		}
		var raw json.RawMessage
		if err := c.call(ctx, method, params, &raw); err != nil {
			return err
		}
		if err := requireObject(raw); err != nil {
			return wrap(method, err)
		}
		if err := page(raw); err != nil {
			return wrap(method, fmt.Errorf("%w: %v", ErrBadResult, err))
		}
		var next struct {
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(raw, &next)
		if next.NextCursor == "" {
			return nil
		}
		if seen[next.NextCursor] {
			c.logger.Warn("mcp: server repeated a cursor; stopped paging", "method", method, "cursor", next.NextCursor)
			return nil
		}
		seen[next.NextCursor] = true
		cursor = next.NextCursor
	}
	c.logger.Warn("mcp: stopped paging after too many pages", "method", method, "pages", maxPages)
	return nil
}

// CallTool calls the named tool with args, which must encode to a JSON
// object (a struct, a map, or a json.RawMessage); nil sends {}.
//
// A tool that ran and failed is a result with IsError set, not an error.
// The error is non-nil when the call itself failed: a JSON-RPC error from
// the server ([*Error], for example an unknown tool), a result that is not
// an object (ErrBadResult), ctx ending, or the connection ending
// (ErrClosed).
func (c *Connection) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	arguments, err := encodeArguments(args)
	if err != nil {
		return nil, err
	}
	var res CallToolResult
	if err := c.call(ctx, "tools/call", callToolParams{Name: name, Arguments: arguments}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func encodeArguments(args any) (json.RawMessage, error) {
	var b []byte
	switch a := args.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		b = a
	case []byte:
		b = a
	default:
		var err error
		if b, err = json.Marshal(args); err != nil {
			return nil, fmt.Errorf("mcp: encode tool arguments: %w", err)
		}
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' || !json.Valid(b) {
		return nil, fmt.Errorf("mcp: tool arguments must be a JSON object, got %s", preview(b))
	}
	return b, nil
}
