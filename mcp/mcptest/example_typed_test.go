package mcptest_test

import (
	"context"
	"fmt"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// A tool whose arguments and result are Go types: the input schema is
// made from the struct, and arguments that do not match it are a tool
// error the model can read; the handler never sees them.
func ExampleAddTool() {
	type addIn struct {
		A int `json:"a" jsonschema:"description=the first number"`
		B int `json:"b" jsonschema_description:"the second, added to a"` // a comma would end description=
	}
	type addOut struct {
		Sum int `json:"sum"`
	}
	srv := &mcptest.Server{}
	mcptest.AddTool(srv, mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcptest.Request, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	})

	ctx := context.Background()
	c, err := mcp.Connect(ctx, srv.Transport(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	tools, _ := c.Tools(ctx)
	fmt.Println(string(tools[0].InputSchema))
	res, _ := c.CallTool(ctx, "add", map[string]any{"a": 17, "b": 25})
	fmt.Println(res.Text())
	res, _ = c.CallTool(ctx, "add", map[string]any{"a": "17"})
	fmt.Println(res.IsError, res.Text())
	// Output:
	// {"properties":{"a":{"type":"integer","description":"the first number"},"b":{"type":"integer","description":"the second, added to a"}},"additionalProperties":false,"type":"object","required":["a","b"]}
	// {"sum":42}
	// true invalid arguments for tool add: at /: missing property 'b'; at /a: got string, want integer
}

// A server that crashes: run as a child process (mcptest.Main and
// mcptest.Command), its process exits with the status when the request
// comes, and the client sees an *mcp.ExitError. In memory, as here, the
// test binary must not exit: the request is answered with an error that
// says so.
func ExampleExit() {
	srv := &mcptest.Server{}
	srv.InjectFault("tools/call", mcptest.Exit(2))
	ctx := context.Background()
	c, err := mcp.Connect(ctx, srv.Transport(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	fmt.Println(err)
	// Output:
	// mcp: server error -32603: mcptest: the Exit(2) fault injected for tools/call is refused: this server runs inside the test binary (in memory or over HTTP), which must not exit; run it as a child process (mcptest.Main and mcptest.Command) to see it exit
}
