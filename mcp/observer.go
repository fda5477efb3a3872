package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// An Observer sees what a Connection sends and what it serves, for
// tracing and metrics: package otelmcp implements one with OpenTelemetry
// (spans and metrics as its semantic conventions for MCP name them, trace
// context carried in _meta). Set it in Options.Observer, or in
// ManagerOptions.Observer for every server of a Manager, which names the
// server in each Operation. With none set, nothing is built or called.
//
// The methods run on the goroutine of the call they observe and must be
// safe for concurrent use; the functions they return are called exactly
// once.
type Observer interface {
	// StartOperation is called before a request or a notification is
	// sent. It returns the ctx the operation runs under, the members to
	// add to the message's _meta (trace context: traceparent, tracestate,
	// baggage; nil for none), and end, called with the outcome once the
	// answer has come (or the request has failed, or the notification has
	// been written). Each round of a multi round-trip request and each
	// request about a task (tasks/get, tasks/update, …) is an operation of
	// its own, under the caller's ctx.
	StartOperation(ctx context.Context, op *Operation) (context.Context, map[string]string, func(Outcome))

	// StartHandler is called when the server sends a request the
	// Connection serves with a handler (sampling, elicitation, a task's
	// result). meta holds the unprefixed string members of the request's
	// _meta (trace context; at most 16, of at most 8 KiB each); the ctx
	// returned is the handler's.
	StartHandler(ctx context.Context, op *Operation, meta map[string]string) (context.Context, func(Outcome))

	// StartSession is called once the handshake has succeeded; end is
	// called when the connection ends, with nil after Close, else with an
	// error matching ErrClosed that wraps the cause (the server went
	// away).
	StartSession(op *Operation) (end func(error))
}

// Operation describes an MCP message for an Observer.
type Operation struct {
	Method string
	// RequestID is a request's JSON-RPC id; "" for a notification (and in
	// StartSession).
	RequestID string
	// Tool is the tool of tools/call, Prompt the prompt of prompts/get,
	// ResourceURI the resource of resources/read, subscribe and
	// unsubscribe, TaskID the task of a tasks/ request.
	Tool, Prompt, ResourceURI, TaskID string

	// Server is the Manager's name of the server; "" outside a Manager.
	Server string
	// ProtocolVersion is the version agreed (the one asked for, during the
	// handshake).
	ProtocolVersion string
	// SessionID is the Mcp-Session-Id of a Streamable HTTP session.
	SessionID string
	// Transport is "pipe" for a server run as a command (stdio), "tcp" for
	// HTTP, "" for a transport of the program's own; Address and Port are
	// an HTTP server's.
	Transport string
	Address   string
	Port      int
}

// Outcome is how an operation ended.
type Outcome struct {
	// Err is nil on success; else the server's JSON-RPC *Error, the ctx's
	// error, or a transport failure.
	Err error
	// ToolError reports a tools/call answered with a result whose isError
	// is set (the tool ran and failed).
	ToolError bool
}

// peer is what a Connection's Operations say of its server.
type peer struct {
	transport, address string
	port               int
}

// peerOf describes the server a transport reaches.
func peerOf(t Transport) peer {
	var raw string
	switch t := t.(type) {
	case *CommandTransport:
		return peer{transport: "pipe"}
	case *StreamableHTTPTransport:
		raw = t.URL
	case *SSETransport:
		raw = t.URL
	default:
		return peer{}
	}
	p := peer{transport: "tcp"}
	if u, err := url.Parse(raw); err == nil {
		p.address = u.Hostname()
		if port, err := strconv.Atoi(u.Port()); err == nil {
			p.port = port
		} else if u.Scheme == "https" {
			p.port = 443
		} else if u.Scheme == "http" {
			p.port = 80
		}
		if ip := net.ParseIP(p.address); ip != nil {
			p.address = ip.String()
		}
	}
	return p
}

// sessionIDer is a Stream with a session id (Streamable HTTP).
type sessionIDer interface{ sessionID() string }

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
	if s, ok := c.stream.Stream.(sessionIDer); ok {
		op.SessionID = s.sessionID()
	}
	var name string
	switch p := params.(type) {
	case jsonrpc.ToolCall:
		name = p.Name
	case taskCallParams:
		name = p.Name
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

// maxPeerID bounds a server request's id, in Operation.RequestID (the
// trace context it hands an Observer is bounded by jsonrpc.StringMeta).
const maxPeerID = 128

// peerRequestID is a server request's id as an Operation says it, cut at
// maxPeerID bytes.
func peerRequestID(id string) string {
	if len(id) > maxPeerID {
		return strings.ToValidUTF8(id[:maxPeerID], "")
	}
	return id
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
