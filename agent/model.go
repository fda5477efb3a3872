package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcplug/mcplug/mcp"
)

// Model is a language model that can call tools.
//
// A Request passed to Generate is the Model's to read, for as long as it
// likes: it may keep req (a test's scripted Model records them), and the
// Agent never changes a Request, nor the slices in it (Messages, their
// Blocks, Tools, Deferred, Sections), once it was passed; each request has
// slices of its own. The Model must not change them either. The Response
// it returns is the Agent's from then on: its Content goes into the
// history as it is, so the Model must not change it afterwards.
//
// An Agent calls Generate once at a time; its sub-agents may share the
// Model and call it at the same time.
type Model interface {
	// Generate answers the conversation in req. Text is passed to onText
	// as it arrives (onText may be nil); the returned Response holds the
	// whole reply.
	Generate(ctx context.Context, req *Request, onText func(string)) (*Response, error)
}

// ImageModel is a Model that takes images in tool results. Images are
// summarised as text for models that are not.
type ImageModel interface {
	Model
	AcceptsImages() bool
}

// TokenCounter is a Model that counts a text's tokens as its API does
// (agent/anthropic.Model asks the Messages API's count_tokens). An Agent
// asks it about a tool result that four bytes a token leave in doubt
// (see Agent.MaxResultTokens); an error leaves the estimate to decide.
type TokenCounter interface {
	Model
	CountTokens(ctx context.Context, text string) (int, error)
}

// Request is what a Model is asked.
type Request struct {
	// System is the program's own system prompt (Agent.System).
	System string
	// Sections are the parts of the system prompt that come from
	// elsewhere (servers' instructions, indexes the agent builds), in the
	// order the model is to read them; each is sent apart from System.
	Sections []Section
	Messages []Message
	Tools    []mcp.Tool
	// Deferred are tools a SearchingModel may find with its own search
	// (see ToolSearch): their definitions are to be loaded only once
	// found. Empty for other models, which get the Agent's search tool in
	// Tools instead.
	Deferred []mcp.Tool
}

// Response is a Model's reply.
type Response struct {
	Content []Block
	// StopReason says why the reply ended (StopEndTurn, StopToolUse,
	// StopMaxTokens, StopRefusal, StopPauseTurn, ...; "" for a Model that
	// does not say), and steers the Agent's loop (see Agent.Chat).
	StopReason string
}

// Text returns the reply's text blocks, joined.
func (r *Response) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of the conversation.
type Message struct {
	Role    string
	Content []Block
}

// Block types.
const (
	BlockText       = "text"
	BlockImage      = "image"
	BlockToolUse    = "tool_use"
	BlockToolResult = "tool_result"
	// A SearchingModel's own search: the call (ID, Name, Input) and what
	// it found (ToolUseID, ToolNames; IsError when it failed). They stay
	// in the history as the model gave them.
	BlockServerToolUse    = "server_tool_use"
	BlockToolSearchResult = "tool_search_tool_result"
)

// Block is one content block. Type says which fields are set:
//   - "text": Text
//   - "image": MediaType and Data (base64)
//   - "tool_use": ID, Name, Input
//   - "tool_result": ToolUseID, Content (text and image blocks), IsError
//   - "server_tool_use": ID, Name, Input
//   - "tool_search_tool_result": ToolUseID, ToolNames; when it failed,
//     IsError and Text (the error code)
type Block struct {
	Type      string
	Text      string
	MediaType string
	Data      string
	ID        string
	Name      string
	Input     json.RawMessage
	ToolUseID string
	Content   []Block
	IsError   bool
	ToolNames []string
}
