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
// [CommandTransport] (stdio), [StreamableHTTPTransport] and [SSETransport]
// ([NewHTTPTransport] picks between them), [NewInMemoryTransports] and
// [NewStream] (any io.ReadWriteCloser); any jsonrpc2 ObjectStream is a
// Stream. [Connect] returns a ready [*Connection], speaking the modern
// protocol (2026-07-28) or the legacy one (initialize) as the server
// does; every method works the same in both, and [Connection.Call] sends
// any other method. A tool call answered with a task is followed to its
// end. A [Manager] owns many named servers, usually from config, exposes
// their tools as mcp__<server>__<tool>, and brings a lost server back.
// Packages mcp/auth (OAuth for remote servers), mcp/config (the config
// files), mcp/mcptest (a fake server) and mcp/otelmcp (OpenTelemetry) go
// with it.
//
// # Lifecycle and errors
//
// The ctx given to Connect bounds the handshake only: a Connection lives
// until Close or until the server goes away (Done, Err). Close shuts a
// child process down as the spec says and returns once it is reaped and
// every goroutine of the Connection has ended. A Connection is safe for
// concurrent use; a call whose ctx ends returns at once, and the server
// is sent notifications/cancelled.
//
// A JSON-RPC error from the server is an [*Error]; an ended connection
// gives errors matching [ErrClosed] (an [*ExitError] inside, with the tail
// of the server's stderr); a malformed result matches [ErrBadResult]. A
// tool that ran and failed is not a Go error but a [CallToolResult] with
// IsError set.
//
// A server is not trusted: everything it can make the client hold or do
// is bounded (a message: 64 MiB, [*MessageTooLargeError]; its requests at
// once: 16, [CodeServerBusy]; a schema's work: [*SchemaTooComplexError]),
// with a typed error past the bound and the connection unharmed. Project
// servers from [LoadConfig] run only once the user approved them, in a
// workspace the user trusts (see package mcp/config). The package logs
// through log/slog and never prints.
package mcp
