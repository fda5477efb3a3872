// Package addserver is a tiny MCP server with one tool, add(a, b), written
// with this module's own stream code. It backs examples/addserver and the
// addagent demo.
package addserver

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/mcplug/mcplug/mcp"
)

// Version is the server's version in serverInfo.
const Version = "1.0.0"

var addTool = json.RawMessage(`{"name":"add","title":"Add","description":"Add two numbers and return the sum.","inputSchema":{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"],"additionalProperties":false},"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}}`)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Serve answers MCP requests read from r on w until r ends.
func Serve(r io.Reader, w io.Writer) error {
	s := mcp.NewStream(readWriter{r, w})
	defer s.Close()
	for {
		var req request
		if err := s.ReadObject(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if req.ID == nil || req.Method == "" {
			continue // a notification or a response: nothing to answer
		}
		result, rerr := handle(req)
		if err := s.WriteObject(response{JSONRPC: "2.0", ID: req.ID, Result: result, Error: rerr}); err != nil {
			return err
		}
	}
}

// legacyVersions are the versions the server speaks, newest first: those
// of the initialize handshake.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

func handle(req request) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		version := mcp.LatestLegacyVersion
		if slices.Contains(legacyVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		return map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "addserver", "version": Version},
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []json.RawMessage{addTool}}, nil
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				A *float64 `json:"a"`
				B *float64 `json:"b"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return toolError("arguments a and b must be numbers"), nil
		}
		if p.Name != "add" {
			return nil, &rpcError{Code: mcp.CodeInvalidParams, Message: "unknown tool: " + p.Name}
		}
		if p.Arguments.A == nil || p.Arguments.B == nil {
			return toolError("both a and b are required"), nil
		}
		sum := strconv.FormatFloat(*p.Arguments.A+*p.Arguments.B, 'f', -1, 64)
		return map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": sum}},
			"structuredContent": map[string]any{"sum": *p.Arguments.A + *p.Arguments.B},
		}, nil
	}
	return nil, &rpcError{Code: mcp.CodeMethodNotFound, Message: "method not found: " + req.Method}
}

func toolError(msg string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": msg}}, "isError": true}
}

type readWriter struct {
	io.Reader
	io.Writer
}

func (readWriter) Close() error { return nil }
