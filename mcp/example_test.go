package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
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

// Read the resources a server offers.
func ExampleConnection_Resources() {
	ctx := context.Background()
	server := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"resources/list": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{"resources":[{"uri":"file:///notes.txt","name":"notes","mimeType":"text/plain"}]}`))
		},
		"resources/read": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{"contents":[{"uri":"file:///notes.txt","text":"buy milk"}]}`))
		},
	}}
	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	resources, err := c.Resources(ctx) // every page
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range resources {
		res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (%s): %s\n", r.Name, r.MimeType, *res.Contents[0].Text)
	}
	// Output:
	// notes (text/plain): buy milk
}

// Fill in a prompt template.
func ExampleConnection_GetPrompt() {
	ctx := context.Background()
	server := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"prompts/get": func(s *mcptest.Session, m *mcptest.Message) {
			var p mcp.GetPromptParams
			json.Unmarshal(m.Params, &p)
			s.Reply(m.ID, map[string]any{"messages": []any{map[string]any{
				"role": "user", "content": map[string]any{"type": "text", "text": "Review this " + p.Arguments["lang"] + " code."}}}})
		},
	}}
	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	p, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "Go"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range p.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Content.Text)
	}
	// Output:
	// user: Review this Go code.
}

// Follow a long call's progress, with a timeout that progress extends.
func ExampleWithCallOptions() {
	ctx := context.Background()
	server := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct {
				Meta struct{ ProgressToken any } `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			for i := 1; i <= 3; i++ {
				s.Notify("notifications/progress", map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "total": 3})
			}
			s.Reply(m.ID, mcptest.TextResult("indexed"))
		},
	}}
	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	callCtx := mcp.WithCallOptions(ctx, mcp.CallOptions{
		Progress: func(p mcp.Progress) { fmt.Printf("progress %.0f/%.0f\n", p.Progress, *p.Total) },
		Timeout:  30 * time.Second, ResetOnProgress: true, MaxTimeout: 10 * time.Minute,
	})
	res, err := c.CallTool(callCtx, "index", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// progress 1/3
	// progress 2/3
	// progress 3/3
	// indexed
}

// Let a server ask the client's model for a completion (sampling).
func ExampleSamplingHandler() {
	ctx := context.Background()
	server := &mcptest.Server{Handlers: map[string]mcptest.Handler{}}
	answers := make(chan json.RawMessage, 1)
	server.OnMessage = func(m *mcptest.Message) {
		if m.Method == "" {
			answers <- m.Result // the client's answer to the server's request
		}
	}
	server.Handlers["tools/call"] = func(s *mcptest.Session, m *mcptest.Message) {
		s.Request("s1", "sampling/createMessage", map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Name a colour."}}},
			"maxTokens": 10,
		})
		go func() { s.Reply(m.ID, mcptest.TextResult("model said "+string(<-answers))) }()
	}

	c, err := mcp.Connect(ctx, server.Transport(), &mcp.Options{
		Sampling: func(ctx context.Context, _ *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			// Call a model here; this one always says blue.
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "blue"}}, Model: "tiny", StopReason: "endTurn"}, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "ask_model", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// model said {"role":"assistant","content":{"type":"text","text":"blue"},"model":"tiny","stopReason":"endTurn"}
}

// A host of MCP Apps reads a tool's view, and lets the view call its own
// server's tools that are visible to apps.
func ExampleManager_View() {
	srv := &mcptest.Server{Name: "monitor"}
	srv.AddTool(mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://monitor/view.html"}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("shown"), nil
		})
	srv.AddTool(mcp.Tool{Name: "poll", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("cpu 3%"), nil
		})
	html := "<p>monitor</p>"
	srv.AddResource(mcp.Resource{URI: "ui://monitor/view.html", Name: "view", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &html,
			Meta: json.RawMessage(`{"ui":{"csp":{"connectDomains":["https://api.example"]}}}`)}}}, nil
	})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Extensions: mcp.UIExtension()})
	defer m.Close()
	m.Add("monitor", srv.Transport())
	ctx := context.Background()

	tools, _ := m.Tools(ctx) // what the model sees: not "poll"
	for _, t := range tools {
		fmt.Println("model:", t.Name)
	}
	apps, _ := m.AppTools(ctx)
	v, _ := m.View(ctx, apps[0].Server, apps[0].UI.ResourceURI)
	fmt.Println("view:", v.HTML, v.UI.CSP.ConnectDomains)
	res, _ := m.CallAppTool(ctx, "monitor", "poll", nil)
	fmt.Println("the view polls:", res.Text())
	// Output:
	// model: mcp__monitor__show
	// view: <p>monitor</p> [https://api.example]
	// the view polls: cpu 3%
}
