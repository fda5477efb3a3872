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
