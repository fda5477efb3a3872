// Package anthropic is an agent.Model backed by the Anthropic Messages API,
// through the official Go SDK, with streaming.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
)

// DefaultModel is the model used when $MINI_MODEL is not set.
const DefaultModel = "claude-sonnet-4-5-20250929"

// Model is an agent.Model that talks to the Messages API. It searches
// deferred tools itself (agent.SearchingModel): they go with
// "defer_loading": true beside the API's tool search tool, which loads
// those it finds.
type Model struct {
	client    sdk.Client
	name      string
	maxTokens int64
	// Regex picks the regex variant of the tool search tool (the model
	// writes patterns); the default is BM25 (the model writes words).
	Regex bool
}

// New returns a Model. The key and base URL come from the environment
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) unless opts set them, and the
// model name from $MINI_MODEL, else DefaultModel.
func New(opts ...option.RequestOption) *Model {
	name := os.Getenv("MINI_MODEL")
	if name == "" {
		name = DefaultModel
	}
	return &Model{client: sdk.NewClient(opts...), name: name, maxTokens: 4096}
}

// Name returns the model name sent with each request.
func (m *Model) Name() string { return m.name }

// AcceptsImages reports true: tool results may carry images.
func (m *Model) AcceptsImages() bool { return true }

// SearchesTools reports true: deferred tools are found by the API's tool
// search tool.
func (m *Model) SearchesTools() bool { return true }

var (
	_ agent.ImageModel     = (*Model)(nil)
	_ agent.SearchingModel = (*Model)(nil)
	_ agent.TokenCounter   = (*Model)(nil)
)

// CountTokens counts the tokens of text as the Messages API counts them
// for this model (POST /v1/messages/count_tokens, text as one user
// message): an Agent asks it whether a tool result is past its cap.
func (m *Model) CountTokens(ctx context.Context, text string) (int, error) {
	res, err := m.client.Messages.CountTokens(ctx, sdk.MessageCountTokensParams{
		Model:    sdk.Model(m.name),
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(text))},
	})
	if err != nil {
		return 0, fmt.Errorf("anthropic: count tokens: %w", err)
	}
	return int(res.InputTokens), nil
}

// Generate streams one reply.
func (m *Model) Generate(ctx context.Context, req *agent.Request, onText func(string)) (*agent.Response, error) {
	params := sdk.MessageNewParams{
		Model:     sdk.Model(m.name),
		MaxTokens: m.maxTokens,
		Messages:  messages(req.Messages),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for _, s := range req.Sections {
		params.System = append(params.System, sdk.TextBlockParam{Text: s.String()})
	}
	for _, t := range req.Tools {
		tp, err := toolParam(t)
		if err != nil {
			return nil, err
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	if len(req.Deferred) > 0 {
		if m.Regex {
			params.Tools = append(params.Tools, sdk.ToolUnionParam{OfToolSearchToolRegex20251119: &sdk.ToolSearchToolRegex20251119Param{Type: "tool_search_tool_regex_20251119"}})
		} else {
			params.Tools = append(params.Tools, sdk.ToolUnionParam{OfToolSearchToolBm25_20251119: &sdk.ToolSearchToolBm25_20251119Param{Type: "tool_search_tool_bm25_20251119"}})
		}
		for _, t := range req.Deferred {
			tp, err := toolParam(t)
			if err != nil {
				return nil, err
			}
			tp.DeferLoading = sdk.Bool(true)
			params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: tp})
		}
	}
	stream := m.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg sdk.Message
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && onText != nil {
			onText(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	resp := &agent.Response{StopReason: string(msg.StopReason)}
	for _, c := range msg.Content {
		switch c.Type {
		case "text":
			resp.Content = append(resp.Content, agent.Block{Type: agent.BlockText, Text: c.Text})
		case "tool_use":
			resp.Content = append(resp.Content, agent.Block{Type: agent.BlockToolUse, ID: c.ID, Name: c.Name, Input: c.Input})
		case "server_tool_use":
			resp.Content = append(resp.Content, agent.Block{Type: agent.BlockServerToolUse, ID: c.ID, Name: c.Name, Input: c.Input})
		case "tool_search_tool_result":
			r := c.AsToolSearchToolResult()
			b := agent.Block{Type: agent.BlockToolSearchResult, ToolUseID: r.ToolUseID}
			if r.Content.ErrorCode != "" {
				b.IsError, b.Text = true, string(r.Content.ErrorCode)
			}
			for _, ref := range r.Content.ToolReferences {
				b.ToolNames = append(b.ToolNames, ref.ToolName)
			}
			resp.Content = append(resp.Content, b)
		}
	}
	return resp, nil
}

// toolParam turns an MCP tool into an API tool definition, keeping the
// schema's properties, required list and every other keyword.
func toolParam(t mcp.Tool) (*sdk.ToolParam, error) {
	var schema map[string]any
	if len(t.InputSchema) > 0 {
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("anthropic: tool %q: input schema: %w", t.Name, err)
		}
	}
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"]}
	if in.Properties == nil {
		// A zero input schema is left out of the request, and the API
		// refuses a tool without one: {"type":"object"} is sent whole.
		in.Properties = map[string]any{}
	}
	if req, ok := schema["required"].([]any); ok {
		in.Required = make([]string, 0, len(req)) // an empty list is sent as one
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range schema {
		switch k {
		case "properties", "required", "type":
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	tp := &sdk.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tp.Description = sdk.String(t.Description)
	}
	return tp, nil
}

func messages(history []agent.Message) []sdk.MessageParam {
	out := make([]sdk.MessageParam, 0, len(history))
	for _, m := range history {
		var blocks []sdk.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b.Type {
			case agent.BlockText:
				if b.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(b.Text))
				}
			case agent.BlockImage:
				blocks = append(blocks, sdk.NewImageBlockBase64(b.MediaType, b.Data))
			case agent.BlockToolUse:
				var input any = json.RawMessage(b.Input)
				if len(b.Input) == 0 {
					input = map[string]any{}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(b.ID, input, b.Name))
			case agent.BlockServerToolUse:
				var input any = json.RawMessage(b.Input)
				if len(b.Input) == 0 {
					input = map[string]any{}
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfServerToolUse: &sdk.ServerToolUseBlockParam{ID: b.ID, Name: sdk.ServerToolUseBlockParamName(b.Name), Input: input}})
			case agent.BlockToolSearchResult:
				if b.IsError {
					blocks = append(blocks, sdk.NewToolSearchToolResultBlock(sdk.ToolSearchToolResultErrorParam{ErrorCode: sdk.ToolSearchToolResultErrorCode(b.Text)}, b.ToolUseID))
					continue
				}
				refs := make([]sdk.ToolReferenceBlockParam, 0, len(b.ToolNames))
				for _, n := range b.ToolNames {
					refs = append(refs, sdk.ToolReferenceBlockParam{ToolName: n})
				}
				blocks = append(blocks, sdk.NewToolSearchToolResultBlock(sdk.ToolSearchToolSearchResultBlockParam{ToolReferences: refs}, b.ToolUseID))
			case agent.BlockToolResult:
				tr := sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
				if b.IsError {
					tr.IsError = sdk.Bool(true)
				}
				for _, c := range b.Content {
					switch c.Type {
					case agent.BlockText:
						tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
					case agent.BlockImage:
						tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
							Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
								Data: c.Data, MediaType: sdk.Base64ImageSourceMediaType(c.MediaType)}}}})
					}
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: &tr})
			}
		}
		if m.Role == agent.RoleAssistant {
			out = append(out, sdk.NewAssistantMessage(blocks...))
		} else {
			out = append(out, sdk.NewUserMessage(blocks...))
		}
	}
	return out
}
