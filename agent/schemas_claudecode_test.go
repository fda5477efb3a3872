package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/anthropic"
	"github.com/mcplug/mcplug/internal/claudecode"
	"github.com/mcplug/mcplug/internal/mockllm"
	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCombinatorsAsClaudeCodeFlattensThem gives Claude Code (claude -p,
// against the Messages API mock, tool search off) and an Agent on
// anthropic.Model one server whose tools start with anyOf, oneOf or
// allOf, and checks that the Messages API gets the same tools from both:
// the same names, descriptions and input schemas (as JSON values), and
// the same tools left out. A tool without a description differs in one
// way: the Manager describes it as "MCP tool <tool> from <server>", where
// Claude Code sends none (the note alone, when it was flattened).
func TestCombinatorsAsClaudeCodeFlattensThem(t *testing.T) {
	claude := claudecode.Binary(t)
	home, project := testdir.Scratch(t)
	defs := []mcp.Tool{
		{Name: "plain", Description: "Plain.", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
		{Name: "nodesc", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: "pick", Description: "Pick one.", InputSchema: json.RawMessage(`{"type":"object","oneOf":[{"properties":{"id":{"type":"integer"}},"required":["id"]},{"properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"]}]}`)},
		{Name: "either", InputSchema: json.RawMessage(`{"type":"object","anyOf":[{"$ref":"#/$defs/byName"},{"properties":{"url":{"type":"string"}},"required":["url"]}],"$defs":{"byName":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`)},
		{Name: "both", Description: "Both.", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"allOf":[{"properties":{"y":{"type":"string"}},"required":["y","nowhere"]},{"properties":{"x":{"type":"string"},"z":{"type":"boolean"}}}]}`)},
		{Name: "twice", InputSchema: json.RawMessage(`{"type":"object","oneOf":[{"$ref":"#/definitions/a"},{"$ref":"#/definitions/a"},{"properties":{"k":{"type":"string"}},"required":["k"]}],"definitions":{"a":{"properties":{"k":{"type":"string"},"v":{}},"required":["k","v"]}}}`)},
		{Name: "numbers", InputSchema: json.RawMessage(`{"type":"object","anyOf":[{"properties":{"b":{"type":"string"},"10":{"type":"string"},"2":{"type":"string"},"bad name":{"type":"string"}}}]}`)},
		{Name: "kept", Description: "Tool.", InputSchema: json.RawMessage(`{"type":"object","title":"T","description":"D","additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema","anyOf":[true,{"properties":{"a":{"type":"string"}},"required":["a"]}],"allOf":[{"required":["a"]}]}`)},
		{Name: "groups", InputSchema: json.RawMessage(`{"type":"object","oneOf":[{"type":"object"},{"type":"object","minProperties":1}]}`)},
		{Name: "suspect", InputSchema: json.RawMessage(`{"type":"object","oneOf":[{"properties":{"id":{"type":"integer"}},"required":["id"]},{"properties":{"id":{"type":"string"}},"required":["id"]}],"$defs":{"d":{"default":{"required":["b",1]}}}}`)},
		{Name: "deep", InputSchema: json.RawMessage(`{"type":"object","anyOf":[{"properties":{"id":` + nested(70) + `},"required":["id"]},{"properties":{"id":{"type":"string"}},"required":["id"]}]}`)},
		{Name: "notarray", InputSchema: json.RawMessage(`{"type":"object","oneOf":{"a":{}}}`)},
		{Name: "invalid", InputSchema: json.RawMessage(`{"type":"object","anyOf":[{"properties":{"a":{"type":5}}}]}`)},
	}
	raw, err := json.Marshal(defs)
	require.NoError(t, err)
	servers := map[string]any{"s": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{
		testproc.EnvScenario: "named", testproc.EnvToolDefs: string(raw)}}}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	testdir.Write(t, filepath.Join(home, ".claude.json"), string(b))

	requests := claudecode.Print(t, claude, project, "ENABLE_TOOL_SEARCH=false")
	theirs := mcpToolsOf(t, requests[len(requests)-1])

	cfg, _ := mcp.LoadConfig(project)
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: quietLog, ConnectTimeout: 30 * time.Second})
	defer m.Close()
	mock, err := mockllm.Start(mockllm.Turn{Text: "ok"})
	require.NoError(t, err)
	defer mock.Close()
	a := &agent.Agent{Model: anthropic.New(option.WithBaseURL(mock.URL), option.WithAPIKey("k")), Tools: []agent.ToolProvider{m}}
	_, err = a.Chat(context.Background(), "hello")
	require.NoError(t, err)
	ours := mcpToolsOf(t, mock.Requests()[0])

	require.Contains(t, theirs, "mcp__s__plain", "Claude Code listed the server's tools")
	for _, d := range defs {
		name := "mcp__s__" + d.Name
		their, sent := theirs[name]
		our, we := ours[name]
		if !assert.Equal(t, sent, we, "%s: sent by Claude Code %s: %v", d.Name, claudecode.Version, sent) || !sent {
			continue
		}
		want := their.Description
		if d.Description == "" { // the Manager's description of a tool without one, after the note
			want = strings.TrimPrefix(want+"\n\nMCP tool "+d.Name+" from s", "\n\n")
		}
		assert.Equal(t, want, our.Description, d.Name)
		assert.JSONEq(t, string(their.InputSchema), string(our.InputSchema), d.Name)
	}
	for _, gone := range []string{"notarray", "invalid"} {
		assert.NotContains(t, theirs, "mcp__s__"+gone, "Claude Code %s leaves %s out", claudecode.Version, gone)
	}
}

// apiTool is a tool definition as the Messages API gets it.
type apiTool struct {
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// mcpToolsOf is the MCP tools of a Messages API request, by name.
func mcpToolsOf(t *testing.T, request json.RawMessage) map[string]apiTool {
	t.Helper()
	var req struct {
		Tools []struct {
			Name string `json:"name"`
			apiTool
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(request, &req))
	out := map[string]apiTool{}
	for _, tl := range req.Tools {
		if strings.HasPrefix(tl.Name, "mcp__") {
			out[tl.Name] = tl.apiTool
		}
	}
	return out
}
