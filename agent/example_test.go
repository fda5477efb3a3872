package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
)

// An agent with one built-in tool. Here the model is scripted; in real use
// it is anthropic.New() and the tools include an *mcp.Manager.
func ExampleAgent_Chat() {
	add := agent.Func{
		Tool: mcp.Tool{Name: "add", Description: "Add two numbers.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)},
		Fn: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			var in struct{ A, B float64 }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return agent.Text(fmt.Sprint(in.A + in.B)), nil
		},
	}
	model := &script{replies: []*agent.Response{
		call("add", `{"a": 17, "b": 25}`),
		answer("17 + 25 = 42."),
	}}
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{agent.Funcs{add}}, Output: os.Stdout}
	if _, err := a.Chat(context.Background(), "Use the add tool to compute 17 + 25."); err != nil {
		log.Fatal(err)
	}
	// Output:
	//   → add({"a":17,"b":25})
	// 17 + 25 = 42.
}

// With tool search on, the model sees the agent's search tool instead of
// the tools' definitions; what it finds joins the next turn. Here the model
// is scripted; ParseToolSearch reads Claude Code's ENABLE_TOOL_SEARCH.
func ExampleToolSearch() {
	tools := agent.Funcs{
		{Tool: mcp.Tool{Name: "mcp__github__create_pull_request", Description: "Create a pull request."},
			Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return agent.Text("opened #7"), nil
			}},
		{Tool: mcp.Tool{Name: "mcp__slack__post_message", Description: "Post a message to a channel."},
			Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return agent.Text("posted"), nil }},
	}
	model := &script{replies: []*agent.Response{
		call(agent.SearchToolName, `{"query": "open a pull request"}`),
		call("mcp__github__create_pull_request", `{}`),
		answer("Opened pull request #7."),
	}}
	search, err := agent.ParseToolSearch("true") // "", "auto", "auto:N", "true", "false"
	if err != nil {
		log.Fatal(err)
	}
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{tools}, ToolSearch: search, Output: os.Stdout}
	if _, err := a.Chat(context.Background(), "Open a pull request for my branch."); err != nil {
		log.Fatal(err)
	}
	for i, req := range model.requests {
		var names []string
		for _, t := range req.Tools {
			names = append(names, t.Name)
		}
		fmt.Printf("turn %d offered %v\n", i+1, names)
	}
	// Output:
	//   → tool_search({"query":"open a pull request"})
	//   → mcp__github__create_pull_request({})
	// Opened pull request #7.
	// turn 1 offered [tool_search]
	// turn 2 offered [mcp__github__create_pull_request tool_search]
	// turn 3 offered [mcp__github__create_pull_request tool_search]
}
