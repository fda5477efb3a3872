package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcplug/mcplug/mcp"
)

// ResourceProvider has resources to offer a model: a *mcp.Manager.
type ResourceProvider interface {
	Resources(ctx context.Context) ([]mcp.ServerResource, error)
	ReadResource(ctx context.Context, ref string) (*mcp.ReadResourceResult, error)
}

// ResourceTools offers a provider's resources to the model through two
// tools, as Claude Code does: list_mcp_resources (each resource's ref,
// name, type and description) and read_mcp_resource (a ref's contents).
// Add them to Agent.Tools to turn them on; they are off unless added.
func ResourceTools(p ResourceProvider) Funcs {
	return Funcs{
		{
			Tool: mcp.Tool{Name: "list_mcp_resources", Description: "List the resources the MCP servers offer: ref, name, MIME type and description of each. Read one with read_mcp_resource.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
			Fn: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				resources, err := p.Resources(ctx)
				if err != nil {
					return nil, err
				}
				if len(resources) == 0 {
					return Text("no resources"), nil
				}
				var b strings.Builder
				for _, r := range resources {
					fmt.Fprintf(&b, "%s\t%s", r.Ref, r.Name)
					if r.MimeType != "" {
						fmt.Fprintf(&b, "\t%s", r.MimeType)
					}
					if r.Description != "" {
						fmt.Fprintf(&b, "\t%s", r.Description)
					}
					b.WriteByte('\n')
				}
				return Text(b.String()), nil
			},
		},
		{
			Tool: mcp.Tool{Name: "read_mcp_resource", Description: "Read a resource an MCP server offers, by the ref list_mcp_resources gives (@<server>:<uri>).",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"ref":{"type":"string","description":"@<server>:<uri>"}},"required":["ref"]}`)},
			Fn: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				var in struct {
					Ref string `json:"ref"`
				}
				if err := json.Unmarshal(args, &in); err != nil || in.Ref == "" {
					return nil, fmt.Errorf("read_mcp_resource needs a ref")
				}
				read, err := p.ReadResource(ctx, in.Ref)
				if err != nil {
					return nil, err
				}
				res := &mcp.CallToolResult{}
				for _, c := range read.Contents {
					c := c
					res.Content = append(res.Content, mcp.Content{Type: mcp.ContentResource, Resource: &c})
				}
				return res, nil
			},
		},
	}
}
