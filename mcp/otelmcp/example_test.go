package otelmcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/mcplug/mcplug/mcp/otelmcp"
)

// Tracing every server of a Manager: one Observer, on the global
// TracerProvider, MeterProvider and propagator (the program installs the
// SDK and its exporters with otel.SetTracerProvider and its kin; without
// them, the global ones do nothing). An agent.Agent takes the same
// Observer in its Observer field, so that its tool calls are the parents
// of the MCP requests.
func ExampleNew() {
	obs := otelmcp.New(nil)
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Observer: obs})
	defer m.Close()
	if err := m.Add("calc", (&mcptest.Server{}).Transport()); err != nil {
		log.Fatal(err)
	}
	res, err := m.CallTool(context.Background(), "mcp__calc__add", map[string]any{"a": 17, "b": 25})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output: 42
}

// One Observer for the Manager and the agent (docs/observability.md): the
// agent's tool calls are the parents of the MCP requests.
func ExampleNew_agent() {
	var cfg *mcp.Config
	var model agent.Model

	obs := otelmcp.New(nil)
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Observer: obs})
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{m}, Observer: obs}

	defer m.Close()
	_, _ = a.Chat(context.Background(), "17 + 25?")
}
