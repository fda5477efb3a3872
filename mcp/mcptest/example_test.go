package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// A test of code that calls an MCP tool: the fake server's tool is a Go
// function, and the client connects to it in memory.
func Example() {
	ctx := context.Background()

	srv := &mcptest.Server{} // legacy; Versions: mcptest.Modern or mcptest.DualEra for the others
	srv.AddTool(mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		var in struct{ A, B int }
		if err := req.Bind(&in); err != nil {
			return nil, err // a plain error is a tool error (isError)
		}
		return mcptest.TextResult(fmt.Sprint(in.A + in.B)), nil
	})
	c, err := mcp.Connect(ctx, srv.Transport(), nil) // in memory

	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "add", map[string]any{"a": 17, "b": 25})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	// Output: 42
}

// The same server over Streamable HTTP: a Server is an http.Handler.
func ExampleServer_ServeHTTP() {
	ts := httptest.NewServer(newCalc())
	defer ts.Close()

	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: ts.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	// Output: 5
}

// The server as a real child process: TestMain calls mcptest.Main with the
// servers the test binary can run (here "calc"), and Command starts the
// binary again as one of them.
func ExampleCommand() {
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.CommandTransport{Command: mcptest.Command("calc")}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(c.InitializeResult().ServerInfo.Name)
	// Output: calc
}

// A tool that asks the user to confirm, on a server of the 2026-07-28
// revision: the handler is written once, and works in both eras.
func ExampleRequest_Elicit() {
	srv := &mcptest.Server{Versions: mcptest.Modern}
	srv.AddTool(mcp.Tool{Name: "delete"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		answer, err := req.Elicit(ctx, &mcp.ElicitRequest{
			Message:         "Delete everything?",
			RequestedSchema: []byte(`{"type":"object","properties":{"sure":{"type":"boolean"}}}`),
		})
		if err != nil {
			return nil, err // ErrInputRequired included: the client answers and calls again
		}
		if answer.Action != "accept" || answer.Content["sure"] != true {
			return mcptest.TextResult("kept"), nil
		}
		return mcptest.TextResult("deleted"), nil
	})

	ctx := context.Background()
	c, err := mcp.Connect(ctx, srv.Transport(), &mcp.Options{
		ElicitForm: func(ctx context.Context, c *mcp.Connection, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", req.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"sure": false}}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "delete", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	// Output:
	// asked: Delete everything?
	// kept
}

// Testing a failure path: the next tools/call is answered with an error.
func ExampleServer_InjectFault() {
	srv := newCalc()
	ctx := context.Background()
	c, err := mcp.Connect(ctx, srv.Transport(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	srv.InjectFault("tools/call", mcptest.ErrorReply(-32001, "overloaded"))
	_, err = c.CallTool(ctx, "add", map[string]any{"a": 1, "b": 1})
	var rpcErr *mcp.Error
	fmt.Println(errors.As(err, &rpcErr), rpcErr.Code, rpcErr.Message)
	// Output: true -32001 overloaded
}
