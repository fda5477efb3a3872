// Package mcptest provides a scriptable fake MCP server for tests: in
// process (Server.Transport) or as a real child process made by re-executing
// the test binary (Command, with Main called from TestMain).
//
// The fake works on raw lines, so a test can make it misbehave in every way
// a real server might: noise on stdout, responses out of order or twice,
// huge messages, exits and hangs.
package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/mcplug/mcplug/mcp"
)

// Message is one JSON-RPC message as the fake server sees it.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// Handler handles one incoming message. It runs on the server's read loop:
// it may reply at once, later from another goroutine, or never.
type Handler func(s *Session, m *Message)

// Server is a fake MCP server. The zero value answers initialize (echoing
// the client's protocol version), ping, tools/list (Tools) and tools/call
// (ToolFuncs), and -32601 for any other request.
type Server struct {
	Name            string                                   // serverInfo.name; "" means "fake"
	ProtocolVersion string                                   // initialize answers this; "" echoes the client's
	Instructions    string                                   // sent in the initialize result
	Tools           []json.RawMessage                        // tools/list; nil means DefaultTools
	PageSize        int                                      // tools/list page size; 0 means one page
	ToolFuncs       map[string]func(args map[string]any) any // tools/call results; nil means DefaultToolFuncs
	Handlers        map[string]Handler                       // per-method overrides
	OnMessage       func(m *Message)                         // sees every incoming message first
	Noise           bool                                     // write a log line on stdout before and after each message

	// Capabilities are the server's capabilities; nil means tools only.
	Capabilities map[string]any

	// Versions are the protocol versions the server speaks. Nil means a
	// legacy server (initialize only; server/discover is an unknown
	// method). With a modern version (2026-07-28) it answers
	// server/discover, and a request whose _meta names no version it
	// speaks gets an UnsupportedProtocolVersionError; with legacy versions
	// too it is dual-era; with modern ones only, initialize is refused.
	Versions []string
}

// Modern is the version list of a modern-only server.
var Modern = []string{"2026-07-28"}

// DualEra is the version list of a server of both eras.
var DualEra = []string{"2026-07-28", "2025-11-25"}

// modern reports whether the server speaks a modern version, and legacy
// whether it speaks a legacy one.
func (srv *Server) modern() bool {
	for _, v := range srv.Versions {
		if v >= "2026-07-28" {
			return true
		}
	}
	return false
}

func (srv *Server) legacy() bool {
	if srv.Versions == nil {
		return true
	}
	for _, v := range srv.Versions {
		if v < "2026-07-28" {
			return true
		}
	}
	return false
}

// RequestVersion returns the protocol version in the _meta of a request's
// params, or "".
func RequestVersion(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	return p.Meta.Version
}

// DefaultTools are the tools of a zero Server: echo and add.
var DefaultTools = []json.RawMessage{
	json.RawMessage(`{"name":"echo","description":"Echo the text back.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}`),
	json.RawMessage(`{"name":"add","description":"Add two numbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}`),
}

// DefaultToolFuncs implement DefaultTools.
var DefaultToolFuncs = map[string]func(args map[string]any) any{
	"echo": func(args map[string]any) any { return TextResult(fmt.Sprint(args["text"])) },
	"add": func(args map[string]any) any {
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		return TextResult(fmt.Sprint(a + b))
	},
}

// TextResult is a tools/call result with one text block.
func TextResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

// Session is one client connection to a Server.
type Session struct {
	srv *Server
	mu  sync.Mutex
	w   io.Writer
}

// Send writes v as one line.
func (s *Session) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.WriteRaw(string(b) + "\n")
}

// WriteRaw writes text to the client as is.
func (s *Session) WriteRaw(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := io.WriteString(s.w, text)
	return err
}

// Close ends the session as a server that goes away would (the in-memory
// transport's pipe closes).
func (s *Session) Close() error {
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Reply sends a result for id.
func (s *Session) Reply(id json.RawMessage, result any) error {
	return s.Send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// ReplyError sends an error for id.
func (s *Session) ReplyError(id json.RawMessage, code int, message string) error {
	return s.Send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
}

// Notify sends a notification.
func (s *Session) Notify(method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return s.Send(m)
}

// Request sends a request with the given id.
func (s *Session) Request(id any, method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return s.Send(m)
}

// Serve reads messages from r and answers on w until r ends.
func (srv *Server) Serve(r io.Reader, w io.Writer) error {
	s := &Session{srv: srv, w: w}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var m Message
			if json.Unmarshal([]byte(line), &m) == nil {
				if srv.Noise {
					s.WriteRaw("log: received " + m.Method + "\n")
				}
				srv.handle(s, &m)
				if srv.Noise {
					s.WriteRaw("log: handled " + m.Method + "\n")
				}
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func (srv *Server) handle(s *Session, m *Message) {
	if srv.OnMessage != nil {
		srv.OnMessage(m)
	}
	if h, ok := srv.Handlers[m.Method]; ok {
		h(s, m)
		return
	}
	if !m.IsRequest() {
		return
	}
	if srv.modern() && m.Method != "initialize" {
		if v := RequestVersion(m.Params); v != "" || !srv.legacy() {
			if !slices.Contains(srv.Versions, v) {
				s.Send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
					"code": -32022, "message": "Unsupported protocol version",
					"data": map[string]any{"supported": srv.Versions, "requested": v}}})
				return
			}
		}
	}
	switch m.Method {
	case "server/discover":
		if !srv.modern() {
			s.ReplyError(m.ID, -32601, "method not found")
			return
		}
		info := map[string]any{"name": srv.name(), "version": "1.0.0"}
		res := map[string]any{
			"resultType":        "complete",
			"supportedVersions": srv.Versions,
			"capabilities":      srv.caps(),
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": info},
		}
		if srv.Instructions != "" {
			res["instructions"] = srv.Instructions
		}
		s.Reply(m.ID, res)
		return
	case "initialize":
		if !srv.legacy() {
			s.ReplyError(m.ID, -32601, fmt.Sprintf("initialize is not supported: this server speaks %v", srv.Versions))
			return
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Params, &p)
		version := srv.ProtocolVersion
		if version == "" {
			version = p.ProtocolVersion
		}
		res := map[string]any{
			"protocolVersion": version,
			"capabilities":    srv.caps(),
			"serverInfo":      map[string]any{"name": srv.name(), "version": "1.0.0"},
		}
		if srv.Instructions != "" {
			res["instructions"] = srv.Instructions
		}
		s.Reply(m.ID, res)
	case "ping":
		s.Reply(m.ID, map[string]any{})
	case "tools/list":
		s.Reply(m.ID, srv.toolsPage(m.Params))
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p)
		funcs := srv.ToolFuncs
		if funcs == nil {
			funcs = DefaultToolFuncs
		}
		f, ok := funcs[p.Name]
		if !ok {
			s.ReplyError(m.ID, -32602, "unknown tool: "+p.Name)
			return
		}
		s.Reply(m.ID, f(p.Arguments))
	default:
		s.ReplyError(m.ID, -32601, "method not found")
	}
}

func (srv *Server) caps() map[string]any {
	if srv.Capabilities != nil {
		return srv.Capabilities
	}
	return map[string]any{"tools": map[string]any{"listChanged": true}}
}

func (srv *Server) name() string {
	if srv.Name == "" {
		return "fake"
	}
	return srv.Name
}

func (srv *Server) toolsPage(params json.RawMessage) map[string]any {
	tools := srv.listedTools()
	if srv.PageSize <= 0 {
		return map[string]any{"tools": tools}
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	start := 0
	fmt.Sscanf(p.Cursor, "page-%d", &start)
	end := min(start+srv.PageSize, len(tools))
	res := map[string]any{"tools": tools[start:end]}
	if end < len(tools) {
		res["nextCursor"] = fmt.Sprintf("page-%d", end)
	}
	return res
}

// listedTools is Tools, or else a tool for each of ToolFuncs (with the
// definition from DefaultTools where the name matches).
func (srv *Server) listedTools() []json.RawMessage {
	if srv.Tools != nil {
		return srv.Tools
	}
	if srv.ToolFuncs == nil {
		return DefaultTools
	}
	names := slices.Sorted(maps.Keys(srv.ToolFuncs))
	var out []json.RawMessage
	for _, n := range names {
		def := Raw(map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
		for _, d := range DefaultTools {
			var t struct{ Name string }
			json.Unmarshal(d, &t)
			if t.Name == n {
				def = d
			}
		}
		out = append(out, def)
	}
	return out
}

// Transport returns a Transport to this server running in-process over
// net.Pipe. The server's goroutine ends when the client closes the stream.
func (srv *Server) Transport() mcp.Transport {
	return mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		client, server := net.Pipe()
		go func() {
			srv.Serve(server, server)
			server.Close()
		}()
		return mcp.NewStream(client), nil
	})
}
