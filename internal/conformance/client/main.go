// Command client is the mcplug client for the official MCP conformance
// suite (@modelcontextprotocol/conformance). The suite starts it once per
// scenario with the scenario's name in MCP_CONFORMANCE_SCENARIO, optional
// context (JSON) in MCP_CONFORMANCE_CONTEXT, and the server's URL as the last
// argument. internal/conformance/run.sh drives it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mcplug/mcplug/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url>  (scenario in $MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := run(scenario, url, logger); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

func run(scenario, url string, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	t := mcp.NewHTTPTransport(url, nil)
	t.Logger = logger
	c, err := mcp.Connect(ctx, t, &mcp.Options{
		Logger:     logger,
		ClientInfo: &mcp.Implementation{Name: "mcplug-conformance", Version: mcp.Version},
		// Accept every form; the library completes it with the schema's defaults.
		ElicitForm: func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
		Sampling: func(_ context.Context, _ *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "sampled"}}, Model: "conformance", StopReason: "endTurn"}, nil
		},
		Roots: []mcp.Root{},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if scenario == "initialize" {
		return nil
	}
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	switch scenario {
	case "json-schema-ref-no-deref": // listing is the test: no $ref may be fetched
		return nil
	case "http-custom-headers":
		// Values of every kind the x-mcp-header rules treat apart: plain,
		// integer, boolean, and strings that need the Base64 form.
		if err := call(ctx, c, "test_custom_headers", map[string]any{
			"region": "us-west1", "priority": 7, "verbose": true, "debug": false, "query": "SELECT 1",
			"non_ascii_val": "Hello, 世界", "whitespace_val": " padded ", "leading_space_val": " lead",
			"trailing_space_val": "trail ", "internal_space_val": "a b c", "control_char_val": "bell\u0007",
			"crlf_val": "line1\r\nline2", "tab_val": "\tindented", "float_val": 1.5,
		}); err != nil {
			return err
		}
		return call(ctx, c, "test_custom_headers_null", map[string]any{"region": "eu", "priority": 1, "verbose": nil, "query": "q"})
	case "tools_call":
		return call(ctx, c, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "json-schema-2020-12-preservation":
		// Send the focal tool's inputSchema back, as received, to the echo tool.
		var focal, echo *mcp.Tool
		for i := range tools {
			if strings.HasPrefix(tools[i].Description, "Echoes") {
				echo = &tools[i]
			} else {
				focal = &tools[i]
			}
		}
		if focal == nil || echo == nil {
			return fmt.Errorf("expected a focal tool and an echo tool, got %d tools", len(tools))
		}
		return call(ctx, c, echo.Name, map[string]json.RawMessage{"schema": focal.InputSchema})
	default:
		for _, tool := range tools {
			if err := call(ctx, c, tool.Name, nil); err != nil {
				return err
			}
		}
		return nil
	}
}

func call(ctx context.Context, c *mcp.Connection, name string, args any) error {
	res, err := c.CallTool(ctx, name, args)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", name, err)
	}
	fmt.Printf("%s: %s\n", name, res.Text())
	return nil
}
