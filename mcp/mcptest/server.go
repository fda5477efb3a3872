package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// Server is a fake MCP server. Its zero value is ready: it answers
// initialize (echoing the client's protocol version), ping, and the
// methods of whatever was added to it (AddTool, AddResource,
// AddResourceTemplate, AddPrompt), and -32601 for any other request. A
// Server to which nothing was added serves DefaultTools (echo and add).
//
// The exported fields script it at a lower level, for tests that need a
// server to misbehave; set them before the server serves. Add methods and
// InjectFault may be called at any time, from any goroutine.
type Server struct {
	Name            string                                   // serverInfo.name; "" means "fake"
	ProtocolVersion string                                   // initialize answers this; "" echoes the client's
	Instructions    string                                   // sent in the initialize result
	Tools           []json.RawMessage                        // tools/list as is, replacing the added tools
	PageSize        int                                      // tools/list page size; 0 means one page
	ToolFuncs       map[string]func(args map[string]any) any // tools/call results, beside the added tools
	Handlers        map[string]Handler                       // per-method overrides, run on the read loop
	OnMessage       func(m *Message)                         // sees every incoming message first
	Noise           bool                                     // stdio: write a log line on stdout before and after each message

	// Skills (AddSkills): SkillsPageSize is the skills/list page size (0
	// means one page); SkillsTTLMs the ttlMs of a modern skills/list or
	// skills/get result; DirectoryRead declares and serves
	// resources/directory/read.
	SkillsPageSize int
	SkillsTTLMs    int64
	DirectoryRead  bool

	// Capabilities are the server's capabilities; nil means those of what
	// was added (tools always, resources and prompts when there are some).
	Capabilities map[string]any

	// Versions are the protocol versions the server speaks. Nil means a
	// legacy server (initialize only; server/discover is an unknown
	// method). With a modern version (2026-07-28) it answers
	// server/discover, and a request whose _meta names no version it
	// speaks gets an UnsupportedProtocolVersionError; with legacy versions
	// too it is dual-era; with modern ones only, initialize is refused.
	Versions []string

	mu        sync.Mutex
	tools     []*tool
	resources []*resource
	templates []*resourceTemplate
	prompts   []*prompt
	skills    []*servedSkill
	faults    map[string][]Fault
	sessions  map[*Session]struct{}
	pending   map[string]chan *Message // server requests waiting for their answers, by raw id
	inflight  map[inflightKey]context.CancelCauseFunc
	lastID    int64
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
func TextResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: mcp.ContentText, Text: text}}}
}

// Serve serves one client: it reads messages from r and answers on w until
// r ends, then cancels the requests still running and waits for their
// handlers to return.
func (srv *Server) Serve(r io.Reader, w io.Writer) error {
	return srv.serveStream(r, w, false)
}

// serveStream is Serve; process says that r and w are the stdio of a child
// process that Main runs.
func (srv *Server) serveStream(r io.Reader, w io.Writer, process bool) error {
	s := srv.newSession(context.Background(), w)
	s.process = process
	srv.track(s)
	defer func() {
		srv.untrack(s)
		s.end()
	}()
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

// handle serves one incoming message: a fault injected for it, a Handlers
// override, an answer to a request of the server, a cancellation, or a
// request of the protocol.
func (srv *Server) handle(s *Session, m *Message) {
	if srv.OnMessage != nil {
		srv.OnMessage(m)
	}
	if m.IsRequest() {
		if f, ok := srv.takeFault(m.Method); ok {
			f.apply(s, m)
			return
		}
	}
	if h, ok := srv.Handlers[m.Method]; ok {
		h(s, m)
		return
	}
	switch {
	case m.Method == "" && m.ID != nil:
		srv.deliver(m)
		return
	case m.Method == "notifications/cancelled":
		srv.cancel(s, m.Params)
		return
	case !m.IsRequest():
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
			s.ReplyError(m.ID, mcp.CodeMethodNotFound, "method not found")
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
	case "initialize":
		if !srv.legacy() {
			s.ReplyError(m.ID, mcp.CodeMethodNotFound, fmt.Sprintf("initialize is not supported: this server speaks %v", srv.Versions))
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
		s.Reply(m.ID, complete(m, map[string]any{}))
	case "tools/list":
		s.Reply(m.ID, complete(m, srv.toolsPage(m.Params)))
	case "tools/call":
		srv.callTool(s, m)
	case "resources/list":
		s.Reply(m.ID, complete(m, map[string]any{"resources": srv.listResources()}))
	case "resources/templates/list":
		s.Reply(m.ID, complete(m, map[string]any{"resourceTemplates": srv.listTemplates()}))
	case "resources/read":
		srv.readResource(s, m)
	case "prompts/list":
		s.Reply(m.ID, complete(m, map[string]any{"prompts": srv.listPrompts()}))
	case "prompts/get":
		srv.getPrompt(s, m)
	case "skills/list", "skills/get", "resources/directory/read":
		srv.serveSkills(s, m)
	default:
		s.ReplyError(m.ID, mcp.CodeMethodNotFound, "method not found")
	}
}

// complete marks the result of a modern request as complete, as the
// 2026-07-28 revision asks of every result.
func complete(m *Message, res map[string]any) map[string]any {
	if RequestVersion(m.Params) >= mcp.LatestProtocolVersion {
		res["resultType"] = "complete"
	}
	return res
}

func (srv *Server) caps() map[string]any {
	if srv.Capabilities != nil {
		return srv.Capabilities
	}
	caps := map[string]any{"tools": map[string]any{"listChanged": true}}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.resources)+len(srv.templates) > 0 {
		caps["resources"] = map[string]any{"listChanged": true}
	}
	if len(srv.prompts) > 0 {
		caps["prompts"] = map[string]any{"listChanged": true}
	}
	srv.skillsCaps(caps)
	return caps
}

func (srv *Server) name() string {
	if srv.Name == "" {
		return "fake"
	}
	return srv.Name
}

// Transport returns a Transport to this server running in-process over
// net.Pipe: each Connect is a new session, served by a goroutine that ends
// when the client closes the stream.
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

// Raw returns v encoded as JSON, for Server.Tools; it panics if v cannot
// be encoded.
func Raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
