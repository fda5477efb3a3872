// Package mcp is the client side of the Model Context Protocol (MCP): it
// starts or dials MCP servers, performs the handshake, and lets a Go program
// list and call their tools.
//
//	t := &mcp.CommandTransport{Command: exec.Command("my-server")}
//	c, err := mcp.Connect(ctx, t, nil) // spawn, agree on a protocol version
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	tools, err := c.Tools(ctx)
//	res, err := c.CallTool(ctx, "add", map[string]int{"a": 17, "b": 25})
//	fmt.Println(res.Text()) // 42
//
// Many servers from the config files Claude Code reads:
//
//	cfg, err := mcp.LoadConfig(".")
//	m := mcp.NewManager(cfg, nil)
//	defer m.Close()
//	res, err := m.CallTool(ctx, "mcp__calc__add", args)
//
// The guides of the repository's docs folder go further.
//
// # How the pieces fit
//
// A [Transport] opens a [Stream] of JSON-RPC messages to one server.
// [CommandTransport] runs the server as a child process and speaks
// newline-delimited JSON over its stdin and stdout; [NewStream] frames any
// io.ReadWriteCloser the same way; [NewInMemoryTransports] connects two
// in-process ends; [StreamableHTTPTransport] and [SSETransport] reach remote
// servers, and [NewHTTPTransport] picks between them. A custom transport is a [TransportFunc] returning any
// value with ReadObject, WriteObject and Close (every
// github.com/sourcegraph/jsonrpc2 ObjectStream qualifies).
//
// [Connect] agrees on a protocol version over a Transport and returns a
// ready [*Connection]: with a modern server (2026-07-28) every request
// carries the version, capabilities and client info in its _meta, and
// input the server needs comes as an input_required result that the
// Connection answers and retries (multi round-trip requests); with a
// legacy one (2025-11-25 and earlier) it runs the initialize handshake and
// serves the server's own requests. Connect probes with server/discover to
// tell which; Options.ProtocolVersion pins one. Every method works the same
// in both eras. Its methods follow one shape, (ctx, params) (result,
// error): [Connection.Tools] lists every page of tools/list,
// [Connection.CallTool] calls one tool, and [Connection.Call] and
// [Connection.Notify] send any other method. A [Manager] owns many named
// servers, usually from config ([LoadConfig]), and exposes their tools as one
// list named mcp__<server>__<tool>; it owns their connections and brings a
// lost server back with bounded backoff until it is closed.
//
// A tool call that the server answers with a task (2025-11-25 tasks/*, or
// the 2026-07-28 tasks extension) is followed to its end by CallTool;
// [Connection.StartToolTask] and [Task] give the task to the program. A
// remote server behind OAuth takes an [Authorizer] in the Auth field of its
// transport: package github.com/mcplug/mcplug/mcp/auth is one. Package
// github.com/mcplug/mcplug/mcp/mcptest is a fake server for tests.
//
// # Lifecycle
//
// The ctx given to Connect bounds the handshake only, like
// net.Dialer.DialContext: a Connection lives until [Connection.Close] or
// until the server goes away, whichever is first; [Connection.Done] is
// closed then and [Connection.Err] says why. A server process that exits
// fails every pending call at once with an error matching [ErrClosed] that
// wraps an [*ExitError] carrying the exit status and the tail of the
// server's stderr.
//
// Close shuts a child process down as the spec says (close stdin, wait,
// SIGTERM, wait, SIGKILL to its process group) and returns only once the
// process is reaped and every goroutine the Connection started has ended.
//
// # Errors
//
// A JSON-RPC error from the server is an [*Error] (errors.As). A connection
// that has ended gives errors matching [ErrClosed] (errors.Is). A result of
// the wrong shape matches [ErrBadResult]. A response larger than the maximum
// message size fails its call with a [*MessageTooLargeError] and the
// connection goes on. A tool that ran and failed is not a Go error: it is a
// [CallToolResult] with IsError set.
//
// # Concurrency
//
// A Connection is safe for concurrent use; calls from many goroutines share
// one stream and their responses may arrive in any order. Requests are
// encoded by the Connection and their responses matched to them as they are
// read, before github.com/sourcegraph/jsonrpc2 (which serves the server's
// own requests and notifications) sees the stream; a result is copied at
// most once and, for tools/call, decoded by a walk that unescapes strings
// in place.
//
// One goroutine at a time reads the stream. Over stdio and in memory, a
// call that finds nobody reading reads itself until its response arrives,
// delivering what else it reads on the way; otherwise the Connection's
// background reader (jsonrpc2's read goroutine) reads, and also between
// calls. Likewise a call over stdio writes its own request when no other
// write is in progress, as far as the pipe takes it at once; the rest, and
// writes that meet a write in progress, go out from one writer goroutine
// per stream. Over Streamable HTTP each call POSTs its request and reads
// the answer in its own goroutine; notifications and answers to the server
// go out from one sender goroutine per stream, and the server's own
// messages reach the background reader. So a call made alone costs no
// hand-off between goroutines, concurrent calls share system calls (stdio)
// or pooled connections (HTTP), and a server that stops reading cannot
// block a caller past its ctx. Messages from the server (requests
// such as ping, and notifications) are served in order by one dispatcher
// goroutine per Connection, never on a goroutine that reads.
//
// When a call's ctx ends first, the call returns ctx.Err() at once, the
// server is sent notifications/cancelled for it, and a late response is
// dropped.
//
// # Trust and limits
//
// A server is not trusted. Everything it can make the client hold or do is
// bounded, with a typed error past the bound and the rest of the
// connection unharmed: one message (64 MiB, MaxMessageSize; the call fails
// with a [*MessageTooLargeError]); the server's requests served or waiting
// at once (16, [Options].MaxServerRequests; the excess is answered with
// [CodeServerBusy]) and the size of one (4 MiB, MaxServerRequestSize);
// notifications waiting for the dispatcher (1024; the excess is dropped
// and counted, and Close never waits for a backlog); bytes waiting to be
// written to a server that stopped reading (64 MiB; then the connection
// fails); the work of a JSON Schema the server chose (an outputSchema that
// may visit more than 20,000 subschemas per value is not used, and a
// validation that would cost more than 50,000,000 steps is a
// [*SchemaTooComplexError]; an elicitation form takes only the spec's
// primitive fields); pages of a list (10,000, cursors remembered by
// digest); how often a GET stream is reopened (250 ms at least, backing off
// to 30 s). A message pretty-printed over several lines is gathered into
// one, and a batch is unpacked into its messages.
//
// Over HTTP, no redirect leaves the server's origin ([*RedirectError]),
// and an answer that is empty, not JSON or for another id fails only its
// call. Errors, logs and [ServerStatus] never repeat URL credentials, query
// values, header or env values from a config. Project servers from
// [LoadConfig] run only once the user approved them (see [Approval]), and
// nothing inside a workspace decides anything until the user trusts it
// (see [Workspace]).
//
// The package logs through log/slog (Options.Logger) and never prints.
package mcp
