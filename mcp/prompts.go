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

// ListPromptsResult is one page of prompts/list.
type ListPromptsResult struct {
	Prompts    []Prompt
	NextCursor string
	CacheHints // ttlMs and cacheScope, from a 2026-07-28 server
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

// ListPrompts fetches one page of prompts/list.
func (c *Connection) ListPrompts(ctx context.Context, params *ListParams) (*ListPromptsResult, error) {
	p, err := listPage[Prompt](ctx, c, "prompts/list", "prompts", params)
	if err != nil {
		return nil, err
	}
	return &ListPromptsResult{Prompts: p.Items, NextCursor: p.NextCursor, CacheHints: p.CacheHints}, nil
}

// PromptsSeq yields every prompt, fetching pages as it goes.
func (c *Connection) PromptsSeq(ctx context.Context) iter.Seq2[Prompt, error] {
	return seq[Prompt](ctx, c, "prompts/list", "prompts")
}

// Prompts returns every page of prompts/list.
func (c *Connection) Prompts(ctx context.Context) ([]Prompt, error) {
	return collect(c.PromptsSeq(ctx))
}

// GetPrompt fills in a prompt (prompts/get).
func (c *Connection) GetPrompt(ctx context.Context, params *GetPromptParams) (*GetPromptResult, error) {
	var res GetPromptResult
	if err := c.callObject(ctx, "prompts/get", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
