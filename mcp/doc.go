// Package mcp is the client side of the Model Context Protocol (MCP): it
// starts or dials MCP servers, agrees on a protocol version with each, and
// lets a Go program list and call their tools, read their resources and
// get their prompts.
//
// # Start here
//
// Three things cover most programs:
//
//   - [Connection], one server: [Connect] starts or dials it through a
//     [Transport] and returns it ready. Its methods ([Connection.Tools],
//     [Connection.CallTool], [Connection.ReadResource],
//     [Connection.GetPrompt], …) take a ctx and return a result and an
//     error; [Connection.Close] ends it.
//   - [Manager], many servers, usually from the config files Claude Code
//     reads ([LoadConfig], then [NewManager]): one tool list named
//     mcp__<server>__<tool> ([Manager.Tools]), calls routed back
//     ([Manager.CallTool]), each server's state ([Manager.Status]), a lost
//     server brought back. [Manager.Add] adds a server of the program's
//     own, through a Transport that can connect again (a [TransportFunc]).
//   - The transports: [CommandTransport] (a child process, over stdio),
//     [StreamableHTTPTransport] and [SSETransport] ([NewHTTPTransport]
//     picks between them), [NewInMemoryTransports], and [TransportFunc]
//     with [NewStream] for a transport of the program's own.
//
// One server:
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
// Many servers, from the config files Claude Code reads:
//
//	cfg, err := mcp.LoadConfig(".")
//	m := mcp.NewManager(cfg, nil)
//	defer m.Close()
//	tools, err := m.Tools(ctx) // starts them, in parallel
//	res, err := m.CallTool(ctx, "mcp__calc__add", args)
//
// The rest of this page, which godoc lists in alphabetical order, is for
// programs that go further: a host that answers a server's requests
// (Options: [SamplingHandler], [ElicitHandler], roots), long-running tools
// as tasks ([Connection.StartToolTask], [Task]), typed results
// ([CallToolAs]), the views of MCP Apps ([Manager.View], [UIExtension]),
// remote servers' authorization ([Authorizer]; package mcp/auth) and
// tracing ([Observer]; package mcp/otelmcp). Packages mcp/config (the
// config files, and writing them), mcp/mcptest (a fake server for tests)
// and the guides of the repository's docs folder go further still.
//
// # How the pieces fit
//
// A [Transport] opens a [Stream] of JSON-RPC messages to one server; any
// jsonrpc2 ObjectStream is a Stream. [Connect] returns a ready
// [*Connection], speaking the modern protocol (2026-07-28) or the legacy
// one (initialize) as the server does; every method works the same in
// both, and [Connection.Call] sends any other method. A tool call
// answered with a task is followed to its end. A [Manager] owns many
// named servers, each with its own Connection, which it starts, watches
// and starts again.
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
// through log/slog and never prints; a failure it returns or shows in
// Manager.Status is not also logged above Debug.
package mcp
