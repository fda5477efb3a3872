package mcp

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// An Observer sees what a Connection sends and serves, for tracing and
// metrics (package otelmcp: OpenTelemetry, with trace context in _meta).
// With none set, nothing is built or called. Its methods run on the
// goroutine of what they observe and must be safe for concurrent use; the
// functions they return are called exactly once.
type Observer interface {
	// StartOperation is called before a request or notification is sent
	// (each round of a multi round-trip request, and each tasks/ request,
	// is one). It returns the operation's ctx, members for the message's
	// _meta (trace context; nil for none), and end, called once the answer
	// came, the request failed, or the notification was written.
	StartOperation(ctx context.Context, op *Operation) (context.Context, map[string]string, func(Outcome))

	// StartHandler is called for a server request the Connection serves
	// (sampling, elicitation, a task's result); meta holds the string
	// members of its _meta (at most 16, 8 KiB each). The ctx returned is
	// the handler's.
	StartHandler(ctx context.Context, op *Operation, meta map[string]string) (context.Context, func(Outcome))

	// StartSession is called once the handshake succeeded; end gets nil
	// after Close, else an error matching ErrClosed that wraps the cause.
	StartSession(op *Operation) (end func(error))
}

// Operation describes an MCP message for an Observer. RequestID is ""
// for a notification and a session; Tool, Prompt, ResourceURI and TaskID
// are the message's subject, when it has one; Server is the Manager's
// name of the server; ProtocolVersion the one agreed (asked for, in the
// handshake). Transport is "pipe" (stdio), "tcp" (HTTP, with
// Address and Port) or "" (a transport of the program's own).
type Operation struct {
	Method, RequestID                 string
	Tool, Prompt, ResourceURI, TaskID string
	Server, ProtocolVersion           string
	SessionID                         string // Mcp-Session-Id
	Transport, Address                string
	Port                              int
	// Probe marks a request of the era probe (server/discover, and the
	// ping that races it on a stream without per-request answers): its
	// refusal (method not found) or its being let go once the era is
	// known is expected, not a failure.
	Probe bool
	// NetworkProtocol and NetworkProtocolVersion are "http" and the
	// version of the server's last response ("1.1", "2"; "" before the
	// first) over HTTP, "" otherwise.
	NetworkProtocol, NetworkProtocolVersion string
}

// Outcome is how an operation ended: Err is nil, the server's *Error, the
// ctx's error or a transport failure; ToolError reports a tools/call
// result with isError set.
type Outcome struct {
	Err       error
	ToolError bool
}

// peer is what a Connection's Operations say of its server.
type peer struct {
	transport, address string
	port               int
}

// TransportDescriber is a Transport that says what it reaches, for the
// Operations an Observer sees: the network transport ("pipe" for a child
// process, "tcp"), and for a network peer its address and port. Every
// transport of this package is one; a program's own may be.
type TransportDescriber interface {
	DescribeTransport() (network, address string, port int)
}

// peerOf describes the server a transport reaches.
func peerOf(t Transport) peer {
	d, ok := t.(TransportDescriber)
	if !ok {
		return peer{}
	}
	var p peer
	p.transport, p.address, p.port = d.DescribeTransport()
	return p
}

// httpVersioner is a Stream over HTTP: the version of its last response.
type httpVersioner interface{ httpVersion() string }

// operation describes a message of the Connection's for its Observer.
func (c *Connection) operation(method string, id uint64, params any) *Operation {
	op := &Operation{Method: method, Transport: c.peer.transport, Address: c.peer.address, Port: c.peer.port}
	if id != 0 {
		op.RequestID = strconv.FormatUint(id, 10)
	}
	op.ProtocolVersion = c.InitializeResult().ProtocolVersion
	if op.ProtocolVersion == "" {
		op.ProtocolVersion = c.opts.ProtocolVersion
	}
	if m := c.meta.Load(); op.ProtocolVersion == "" && m != nil {
		op.ProtocolVersion = m.version // the modern version the handshake's requests carry
	}
	if s, ok := c.stream.Stream.(sessionIDer); ok {
		op.SessionID = s.sessionID()
	}
	if s, ok := c.stream.Stream.(httpVersioner); ok {
		op.NetworkProtocol, op.NetworkProtocolVersion = "http", s.httpVersion()
	}
	var name string
	switch p := params.(type) {
	case jsonrpc.ToolCall:
		name = p.Name
	case *jsonrpc.ToolCall:
		if p != nil {
			name = p.Name
		}
	case taskCallParams:
		name = p.Name
	case initializeParams:
		if op.ProtocolVersion == "" { // the handshake asks for a version before one is agreed
			op.ProtocolVersion = p.ProtocolVersion
		}
	case taskParams:
		op.TaskID = p.TaskID
	case taskUpdateParams:
		op.TaskID = p.TaskID
	case nil:
	default:
		// The other requests' params, read for their name, URI or task.
		b, ok := p.(json.RawMessage)
		if !ok {
			b, _ = json.Marshal(p)
		}
		var named struct {
			Name   string `json:"name"`
			URI    string `json:"uri"`
			TaskID string `json:"taskId"`
		}
		json.Unmarshal(b, &named)
		name, op.ResourceURI, op.TaskID = named.Name, named.URI, named.TaskID
	}
	switch method {
	case "tools/call":
		op.Tool = name
	case "prompts/get":
		op.Prompt = name
	}
	return op
}

// isToolError reports whether a raw tools/call result has isError set.
func isToolError(raw []byte) bool { return memberIs(raw, "isError", trueValue) }

var trueValue = []byte("true")

// namedObserver is a Manager's Observer for one server: it names the
// server in every Operation.
type namedObserver struct {
	Observer
	name string
}

func (n namedObserver) named(op *Operation) *Operation {
	op.Server = n.name
	return op
}

func (n namedObserver) StartOperation(ctx context.Context, op *Operation) (context.Context, map[string]string, func(Outcome)) {
	return n.Observer.StartOperation(ctx, n.named(op))
}

func (n namedObserver) StartHandler(ctx context.Context, op *Operation, meta map[string]string) (context.Context, func(Outcome)) {
	return n.Observer.StartHandler(ctx, n.named(op), meta)
}

func (n namedObserver) StartSession(op *Operation) func(error) {
	return n.Observer.StartSession(n.named(op))
}
