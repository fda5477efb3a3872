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
// A [Transport] opens a [Stream] of JSON-RPC messages to one server:
// [CommandTransport] (a child process, newline-delimited JSON over its
// stdin and stdout), [StreamableHTTPTransport] and [SSETransport] (remote
// servers; [NewHTTPTransport] picks between them), [NewInMemoryTransports]
// and [NewStream] (any io.ReadWriteCloser). A custom transport is a
// [TransportFunc] returning a value with ReadObject, WriteObject and Close
// (every github.com/sourcegraph/jsonrpc2 ObjectStream qualifies).
//
// [Connect] returns a ready [*Connection]. It probes with server/discover
// and speaks the modern protocol (2026-07-28: version and capabilities in
// every request's _meta, input asked for with input_required results) or
// the legacy one (the initialize handshake); every method works the same
// in both. Methods have one shape, (ctx, params) (result, error);
// [Connection.Call] and [Connection.Notify] send any other method. A tool
// call answered with a task is followed to its end; [Connection.StartToolTask]
// hands the [Task] to the program. A [Manager] owns many named servers,
// usually from config ([LoadConfig]), exposes their tools as
// mcp__<server>__<tool>, and brings a lost server back with bounded
// backoff. An [Authorizer] (package github.com/mcplug/mcplug/mcp/auth)
// signs the requests of a remote server behind OAuth; package
// github.com/mcplug/mcplug/mcp/mcptest is a fake server for tests.
//
// # Lifecycle and errors
//
// The ctx given to Connect bounds the handshake only: a Connection lives
// until [Connection.Close] or until the server goes away; [Connection.Done]
// is closed then and [Connection.Err] says why. Close shuts a child
// process down as the spec says and returns once it is reaped and every
// goroutine the Connection started has ended. A Connection is safe for
// concurrent use; when a call's ctx ends, the call returns at once and the
// server is sent notifications/cancelled.
//
// A JSON-RPC error from the server is an [*Error]; an ended connection
// gives errors matching [ErrClosed] (a server that exited: an [*ExitError]
// inside, with the tail of its stderr); a result of the wrong shape
// matches [ErrBadResult]. A tool that ran and failed is not a Go error but
// a [CallToolResult] with IsError set.
//
// A server is not trusted: everything it can make the client hold or do
// is bounded (a message: 64 MiB, [*MessageTooLargeError]; its requests at
// once: 16, [CodeServerBusy]; a schema's work: [*SchemaTooComplexError]),
// with a typed error past the bound and the rest of the connection
// unharmed. Project servers from [LoadConfig] run only once the user
// approved them ([config.Approval]) in a workspace the user trusts ([config.Workspace]).
// The package logs through log/slog (Options.Logger) and never prints.
package mcp
