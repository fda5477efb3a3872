// Package mcptest is a fake MCP server for tests of code that uses mcplug:
// an in-process server that a test scripts in a few lines and connects to
// in memory, over stdio as a real child process, or over Streamable HTTP.
//
// Add tools, resources, resource templates and prompts with Go handlers:
//
//	srv := &mcptest.Server{}
//	srv.AddTool(mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
//		var in struct{ A, B float64 }
//		if err := req.Bind(&in); err != nil {
//			return nil, err
//		}
//		return mcptest.TextResult(fmt.Sprint(in.A + in.B)), nil
//	})
//
// or with Go types: AddTool (a function, as methods cannot be generic)
// makes the input schema from the arguments' struct and checks every
// call's arguments against it before the handler runs, a mismatch being a
// tool error the model can read.
//
// Connect with one of three transports:
//
//   - in memory: mcp.Connect(ctx, srv.Transport(), nil);
//   - Streamable HTTP: httptest.NewServer(srv), then an
//     mcp.StreamableHTTPTransport with its URL;
//   - stdio: Main in TestMain names the servers the test binary can run,
//     and Command starts the binary again as one of them, for an
//     mcp.CommandTransport or a config entry.
//
// A handler asks the client for input with its Request (Sample, Elicit,
// Roots) and reports progress; this works in both protocol eras (see
// Request). Versions makes the server legacy (the default), modern
// (2026-07-28) or dual-era.
//
// To test failure paths, InjectFault fails the next request of a method
// (Hang, Disconnect, ErrorReply, Garbage, and Exit: the server's process
// exits with a status, for a server run as a child process; in memory,
// where the test binary must go on, the request is answered with an error
// that says so); at a lower level, Handlers
// replace the server's answer to a method with a function that writes what
// it likes through the Session, raw text included.
//
// # Concurrency
//
// A Server may serve any number of clients at once. Handlers added with
// AddTool, AddResource, AddResourceTemplate and AddPrompt run in their own
// goroutine per request, on a ctx that ends when the client cancels the
// request or its session ends; a session waits for them before it ends.
// Handlers (the field) and OnMessage run on the session's read loop. Set
// the exported fields before the server serves; the Add methods,
// InjectFault and Notify may be called at any time.
package mcptest
