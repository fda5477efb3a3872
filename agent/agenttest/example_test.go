package agenttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/agenttest"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// A test of an agent built on a Manager: the model is scripted (it calls
// the add tool, then answers), the tool is a fake MCP server in memory,
// and the test reads what the agent sent the model.
func Example() {
	ctx := context.Background()
	m := mcp.NewManager(nil, nil)
	defer m.Close()
	m.Add("calc", (&mcptest.Server{}).Transport()) // tools echo and add

	model := agenttest.New(
		agenttest.Call("mcp__calc__add", map[string]int{"a": 17, "b": 25}),
		agenttest.Text("17 + 25 = 42."),
	)
	a := &agent.Agent{Model: model, System: "Use the tools.", Tools: []agent.ToolProvider{m}}
	answer, err := a.Chat(ctx, "What is 17 + 25?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)

	first := model.Request(0)
	fmt.Println(first.System, agenttest.ToolNames(first))
	result := agenttest.ToolResults(model.Request(1))[0]
	fmt.Println(agenttest.ResultText(result), result.IsError)
	// Output:
	// 17 + 25 = 42.
	// Use the tools. [mcp__calc__echo mcp__calc__add]
	// 42 false
}

// With tool search on, the first request offers the search tool alone,
// and a section names the tools the model can search for.
func ExampleSectionText() {
	tools := agent.Funcs{
		{Tool: mcp.Tool{Name: "mcp__github__create_pull_request", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		{Tool: mcp.Tool{Name: "mcp__github__list_issues", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	model := agenttest.New(agenttest.Text("I can open a pull request."))
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{tools}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
	if _, err := a.Chat(context.Background(), "What can you do?"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(agenttest.ToolNames(model.Request(0)))
	text, _ := agenttest.SectionText(model.Request(0), agent.DeferredSectionTitle)
	fmt.Println(text)
	// Output:
	// [tool_search]
	// These tools are available, but their definitions are not loaded. Load one with tool_search before you call it: query "select:<name>[,<name>...]" for tools named below, or a few words for what it should do. The tools are:
	// mcp__github__create_pull_request
	// mcp__github__list_issues
}

// A scripted search: the model calls tool_search with a query (a few
// words, or "select:name1,name2"), the tools it finds are offered from the
// next request on, and the model calls one of them.
func ExampleCall_toolSearch() {
	m := mcp.NewManager(nil, nil)
	defer m.Close()
	m.Add("calc", (&mcptest.Server{}).Transport()) // tools echo and add

	model := agenttest.New(
		agenttest.Call(agent.SearchToolName, map[string]any{"query": "select:mcp__calc__add"}),
		agenttest.Call("mcp__calc__add", map[string]int{"a": 17, "b": 25}),
		agenttest.Text("17 + 25 = 42."),
	)
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{m}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
	if _, err := a.Chat(context.Background(), "What is 17 + 25?"); err != nil {
		log.Fatal(err)
	}
	found := agenttest.ToolResults(model.Request(1))[0]
	fmt.Println(agenttest.ResultText(found))
	fmt.Println(agenttest.ToolNames(model.Request(1)))
	fmt.Println(agenttest.ResultText(agenttest.ToolResults(model.Request(2))[0]))
	// Output:
	// Found 1 tool; it can be called from now on:
	// - mcp__calc__add: Add two numbers.
	//
	// [mcp__calc__add tool_search]
	// 42
}
