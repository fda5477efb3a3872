package mcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// One Connection for both eras: Connect finds out which a server speaks,
// and every method works the same.
func ExampleConnect_eras() {
	ctx := context.Background()
	for _, server := range []*mcptest.Server{
		{Name: "modern", Versions: mcptest.Modern}, // 2026-07-28 only
		{Name: "dual", Versions: mcptest.DualEra},  // both
		{Name: "legacy"}, // 2025-11-25 and earlier
	} {
		c, err := mcp.Connect(ctx, server.Transport(), nil)
		if err != nil {
			log.Fatal(err)
		}
		res, err := c.CallTool(ctx, "add", map[string]int{"a": 17, "b": 25})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.InitializeResult().ServerInfo.Name, c.InitializeResult().ProtocolVersion, c.Modern(), res.Text())
		c.Close()
	}
	// Output:
	// modern 2026-07-28 true 42
	// dual 2026-07-28 true 42
	// legacy 2025-11-25 false 42
}

// Decode a tool's structuredContent into a Go type.
func ExampleCallToolAs() {
	ctx := context.Background()
	server := &mcptest.Server{ToolFuncs: map[string]func(map[string]any) any{
		"weather": func(map[string]any) any {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "21.5 °C in Lyon"}},
				"structuredContent": map[string]any{"city": "Lyon", "celsius": 21.5}}
		},
	}}
	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	type Weather struct {
		City    string  `json:"city"`
		Celsius float64 `json:"celsius"`
	}
	w, _, err := mcp.CallToolAs[Weather](ctx, c, "weather", map[string]string{"city": "Lyon"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.1f\n", w.City, w.Celsius)
	// Output:
	// Lyon: 21.5
}
