package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/mcplug/mcplug/internal/mcptest"
	"github.com/mcplug/mcplug/mcp"
)

// Connect to a server, list its tools and call one. Here the server runs in
// process; a real one is usually a child process:
//
//	t := &mcp.CommandTransport{Command: exec.Command("npx", "-y", "some-mcp-server")}
func Example() {
	ctx := context.Background()
	server := &mcptest.Server{Name: "demo"} // offers "echo" and "add"

	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println("server:", c.InitializeResult().ServerInfo.Name)

	tools, err := c.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Printf("tool %s: %s\n", t.Name, t.Description)
	}

	res, err := c.CallTool(ctx, "add", map[string]int{"a": 17, "b": 25})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("17 + 25 =", res.Text(), "error:", res.IsError)
	// Output:
	// server: demo
	// tool echo: Echo the text back.
	// tool add: Add two numbers.
	// 17 + 25 = 42 error: false
}

// A custom transport: MCP over a TCP connection, framed like stdio. Any
// io.ReadWriteCloser becomes a Stream with NewStream.
func ExampleTransportFunc() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() { // the server side
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		(&mcptest.Server{Name: "tcp-server"}).Serve(conn, conn)
	}()

	tcp := mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			return nil, err
		}
		return mcp.NewStream(conn), nil
	})

	ctx := context.Background()
	c, err := mcp.Connect(ctx, tcp, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "over TCP"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.InitializeResult().ServerInfo.Name, "says:", res.Text())
	// Output:
	// tcp-server says: over TCP
}
