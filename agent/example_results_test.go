package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
)

// A result past MaxResultTokens is kept whole in a file of the agent's
// own: the model gets its head, the path, and the read_tool_result tool
// to read the rest. Close removes the files. Here the model is scripted
// and the bound low; the default is 25,000 tokens.
func ExampleAgent_Close() {
	logs := agent.Func{Tool: mcp.Tool{Name: "logs", Description: "The server's logs."},
		Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return agent.Text(strings.Repeat("GET /index.html 200\n", 10_000)), nil
		}}
	model := &script{replies: []*agent.Response{call("logs", `{}`), answer("The logs are long.")}}
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{agent.Funcs{logs}}, MaxResultTokens: 1000}
	defer a.Close() // removes the files the agent kept
	if _, err := a.Chat(context.Background(), "What do the logs say?"); err != nil {
		log.Fatal(err)
	}
	got := model.requests[1].Messages[2].Content[0].Content[0].Text
	fmt.Println(strings.SplitN(got, " in the file", 2)[0])
	fmt.Println(model.requests[1].Tools[1].Name)
	// Output:
	// [This result is 200,000 bytes in 10,000 lines, about 50,000 tokens: more than the 1,000 tokens a tool result may take, so it is kept whole
	// read_tool_result
}
