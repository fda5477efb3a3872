package mcp

import (
	"bytes"
	"context"
	"encoding/json"
)

// CreateMessageRequest is a server's sampling/createMessage: it asks the
// client's model for a reply. With Tools (when the client offers
// Options.SamplingTools), the model may answer with tool_use content, and
// later requests carry tool_result content.
type CreateMessageRequest struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	Tools            []Tool            `json:"tools,omitempty"`
	ToolChoice       json.RawMessage   `json:"toolChoice,omitempty"`
	Meta             json.RawMessage   `json:"_meta,omitempty"`
}

// ModelPreferences are the server's hints for choosing a model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model, or part of a name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// SamplingMessage is one message of a sampling conversation. Its content
// is text, image, audio, tool_use (ID, Name, Input) or tool_result
// (ToolUseID, Content, StructuredContent, IsError) blocks; on the wire a
// single block may stand alone or in an array.
type SamplingMessage struct {
	Role    string          `json:"role"`
	Content []Content       `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnmarshalJSON accepts content as one block or an array of blocks.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    json.RawMessage `json:"_meta,omitempty"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m.Role, m.Meta, m.Content = w.Role, w.Meta, nil
	return unmarshalBlocks(w.Content, &m.Content)
}

func unmarshalBlocks(raw json.RawMessage, out *[]Content) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '[' {
		return json.Unmarshal(raw, out)
	}
	var one Content
	if err := json.Unmarshal(raw, &one); err != nil {
		return err
	}
	*out = []Content{one}
	return nil
}

// CreateMessageResult is the client's reply to sampling/createMessage.
type CreateMessageResult struct {
	Role       string    // "assistant"
	Content    []Content // sent as one block when there is one, else as an array
	Model      string    // the model that answered
	StopReason string    // "endTurn", "stopSequence", "maxTokens", "toolUse", …
}

// MarshalJSON writes a single content block as an object, as servers of
// every revision accept, and several as an array.
func (r CreateMessageResult) MarshalJSON() ([]byte, error) {
	var content any = r.Content
	if len(r.Content) == 1 {
		content = r.Content[0]
	}
	role := r.Role
	if role == "" {
		role = "assistant"
	}
	return json.Marshal(struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
	}{role, content, r.Model, r.StopReason})
}

// SamplingHandler answers sampling/createMessage. It runs in its own
// goroutine; ctx ends when the server cancels the request or the
// connection closes. It may call the Connection.
type SamplingHandler func(ctx context.Context, c *Connection, req *CreateMessageRequest) (*CreateMessageResult, error)

// sample serves sampling/createMessage with the Sampling handler.
func (c *Connection) sample(ctx context.Context, params json.RawMessage) (any, *Error) {
	if c.opts.Sampling == nil {
		return nil, &Error{Code: CodeMethodNotFound, Message: "this client does not offer sampling"}
	}
	var p CreateMessageRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid sampling/createMessage params: " + err.Error()}
	}
	if len(p.Tools) > 0 && !c.opts.SamplingTools {
		return nil, &Error{Code: CodeInvalidParams, Message: "this client does not offer tool use in sampling"}
	}
	res, err := c.opts.Sampling(ctx, c, &p)
	if err != nil {
		return nil, handlerError(err)
	}
	if res == nil {
		return nil, &Error{Code: CodeInternalError, Message: "sampling handler returned no result"}
	}
	return res, nil
}
