package mcp

import (
	"bytes"
	"encoding/json"
)

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
