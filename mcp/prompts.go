package mcp

import (
	"context"
	"encoding/json"
	"iter"
)

// Prompt is a prompt template a server offers (prompts/list).
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// PromptArgument is an argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// GetPromptParams are the parameters of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      json.RawMessage   `json:"_meta,omitempty"`
}

// GetPromptResult is a prompt filled in: messages of text, image, audio,
// resource link or embedded resource content.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Prompts returns every page of prompts/list.
func (c *Connection) Prompts(ctx context.Context) ([]Prompt, error) {
	return collect(c.AllPrompts(ctx))
}

// AllPrompts is AllResources for prompts/list.
func (c *Connection) AllPrompts(ctx context.Context) iter.Seq2[Prompt, error] {
	return seq[Prompt](ctx, c.pager(), "prompts/list", "prompts")
}

// GetPrompt fills in a prompt (prompts/get).
func (c *Connection) GetPrompt(ctx context.Context, params *GetPromptParams) (*GetPromptResult, error) {
	var res GetPromptResult
	if err := c.callObject(ctx, "prompts/get", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
