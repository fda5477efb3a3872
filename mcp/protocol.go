package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/mcplug/mcplug/internal/jsonrpc"
	"github.com/mcplug/mcplug/internal/ndjson"
)

// Protocol versions: the newest Connect speaks, and the one it offers in
// initialize to a legacy server. Modern versions (2026-07-28 and later)
// carry version, capabilities and client info in every request's _meta;
// legacy ones (2025-11-25 and earlier) open with initialize.
const (
	LatestProtocolVersion = "2026-07-28"
	LatestLegacyVersion   = "2025-11-25"
)

// supportedVersions lists the versions Connect speaks, newest first.
var supportedVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Version is this module's version, sent in clientInfo by default.
const Version = "0.1.0"

// Implementation names a client or server (clientInfo, serverInfo).
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is an image a server offers for itself, a tool, a prompt or a resource.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            json.RawMessage    `json:"_meta,omitempty"`
}

// ServerCapabilities says which features the server offers. A nil field
// means the server does not offer that feature.
type ServerCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Logging      json.RawMessage            `json:"logging,omitempty"`
	Completions  json.RawMessage            `json:"completions,omitempty"`
	Prompts      *ListChangedCapability     `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListChangedCapability     `json:"tools,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"` // 2026-07-28, by identifier (ExtensionTasks, say)
}

// ListChangedCapability is a capability that may announce list changes.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the server's resources capability.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// Tool is a tool the server offers. Schemas are kept as the server sent
// them, byte for byte.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Execution    json.RawMessage  `json:"execution,omitempty"`
	Meta         json.RawMessage  `json:"_meta,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour. Nil means unset.
// Fields this package does not know are kept in Extra and written back.
type ToolAnnotations struct {
	Title           string                     `json:"title,omitempty"`
	ReadOnlyHint    *bool                      `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool                      `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool                      `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool                      `json:"openWorldHint,omitempty"`
	Extra           map[string]json.RawMessage `json:"-"`
}

type plainAnnotations ToolAnnotations

// UnmarshalJSON keeps unknown fields in Extra.
func (a *ToolAnnotations) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*plainAnnotations)(a)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
		delete(all, k)
	}
	a.Extra = nil
	if len(all) > 0 {
		a.Extra = all
	}
	return nil
}

// MarshalJSON writes the known fields and Extra.
func (a ToolAnnotations) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(plainAnnotations(a))
	if err != nil || len(a.Extra) == 0 {
		return b, err
	}
	all := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range a.Extra {
		if _, known := all[k]; !known {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// CallToolResult is the result of tools/call. A tool that failed reports
// IsError with its message in Content; that is data, not a Go error.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// Text returns the text of the result's text blocks, joined by newlines.
func (r *CallToolResult) Text() string {
	var out []byte
	for _, c := range r.Content {
		if c.Type == ContentText {
			if len(out) > 0 {
				out = append(out, '\n')
			}
			out = append(out, c.Text...)
		}
	}
	return string(out)
}

// Content types of a content block.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// Content is one content block of a tool result or a prompt message. Type
// says which fields are set:
//   - "text": Text
//   - "image", "audio": Data (base64) and MimeType
//   - "resource_link": URI, Name, and optionally Title, Description,
//     MimeType, Size
//   - "resource": Resource (an embedded resource's contents)
//
// Sampling messages add "tool_use" and "tool_result" blocks.
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`

	// Sampling content only: "tool_use" (ID, Name, Input) and
	// "tool_result" (ToolUseID, Content, StructuredContent, IsError).
	ID                string          `json:"id,omitempty"`
	Input             json.RawMessage `json:"input,omitempty"`
	ToolUseID         string          `json:"toolUseId,omitempty"`
	Content           []Content       `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// ResourceContents is the contents of a resource: Text for a text
// resource, Blob (base64) for a binary one.
type ResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

func preview(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// Wire shapes of requests the Connection sends.
type (
	initializeParams struct {
		ProtocolVersion string             `json:"protocolVersion"`
		Capabilities    clientCapabilities `json:"capabilities"`
		ClientInfo      Implementation     `json:"clientInfo"`
	}
	// taskCallParams is a tools/call asking a 2025-11-25 server for a
	// task: a type of its own, so that the common call stays small.
	taskCallParams struct {
		Name         string          `json:"name"`
		Arguments    json.RawMessage `json:"arguments"`
		Augmentation taskRequest     `json:"task"` // the task asked for (a task-augmented request)
	}
	cancelledParams struct {
		RequestID uint64 `json:"requestId"`
		Reason    string `json:"reason,omitempty"`
	}
)

// clientCapabilities says which server requests this client serves. The
// Connection fills it from the handlers set in Options.
type clientCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Roots        *ListChangedCapability     `json:"roots,omitempty"`
	Sampling     json.RawMessage            `json:"sampling,omitempty"`
	Elicitation  json.RawMessage            `json:"elicitation,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`      // 2025-11-25: requests the client runs as tasks
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"` // 2026-07-28: io.modelcontextprotocol/tasks
}

// LoggingLevel is a syslog severity, as MCP uses them.
type LoggingLevel string

// LoggingMessage is a notifications/message from the server.
type LoggingMessage struct {
	Level  LoggingLevel    `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// Root is a directory or file the client lets the server work in.
type Root struct {
	URI  string          `json:"uri"` // a file:// URI
	Name string          `json:"name,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SubscribeParams are the parameters of resources/subscribe and
// resources/unsubscribe.
type SubscribeParams struct {
	URI string `json:"uri"`
}

// ElicitRequest is a server's elicitation/create: it asks the user for
// input. In form mode (Mode "form" or "") RequestedSchema describes the
// fields; in URL mode (Mode "url") the user is sent to URL, and the server
// later sends notifications/elicitation/complete with ElicitationID.
type ElicitRequest struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// ElicitResult is the user's answer: Action is "accept", "decline" or
// "cancel"; Content holds the form's values when accepted.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

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

// CreateMessageResult is the client's reply to sampling/createMessage.
type CreateMessageResult struct {
	Role       string    // "assistant"
	Content    []Content // sent as one block when there is one, else as an array
	Model      string    // the model that answered
	StopReason string    // "endTurn", "stopSequence", "maxTokens", "toolUse", …
}

// Wire shapes of the task requests.
type (
	taskRequest struct {
		TTL *int64 `json:"ttl,omitempty"`
	}
	taskParams struct {
		TaskID string `json:"taskId"`
	}
	taskUpdateParams struct {
		TaskID         string         `json:"taskId"`
		InputResponses map[string]any `json:"inputResponses"`
	}
)

// ModelPreferences are the server's hints for choosing a model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
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

// ModelHint names a model, or part of a name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ExtensionTasks names the tasks extension of the 2026-07-28 revision.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Slog returns the slog level a logging level maps to.
func (l LoggingLevel) Slog() slog.Level {
	switch l {
	case LevelDebug:
		return slog.LevelDebug
	case LevelInfo, LevelNotice:
		return slog.LevelInfo
	case LevelWarning:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// The logging levels, least severe first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// encodeArguments encodes a tool call's arguments, appending to dst when
// it encodes them itself (dst may be nil).
func encodeArguments(dst []byte, args any) (json.RawMessage, error) {
	var b []byte
	trusted := false // encoding/json's output needs no second check
	switch a := args.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		b = a
	case []byte:
		b = a
	default:
		if enc, ok := jsonrpc.AppendArgs(dst, args); ok {
			return enc, nil
		}
		var err error
		if b, err = json.Marshal(args); err != nil {
			return nil, fmt.Errorf("mcp: encode tool arguments: %w", err)
		}
		trusted = true
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' || (!trusted && !json.Valid(b)) {
		return nil, fmt.Errorf("mcp: tool arguments must be a JSON object, got %s", preview(b))
	}
	return b, nil
}

// memberIs reports whether the top-level member key of the object raw is
// the JSON value want, byte for byte. It allocates nothing.
func memberIs(raw []byte, key string, want []byte) bool {
	found := false
	ndjson.Members(raw, func(k, v []byte) bool {
		if string(k) == key {
			found = bytes.Equal(v, want)
			return false
		}
		return true
	})
	return found
}

// TaskStatus is the state of a task.
type TaskStatus string

// Task states. Completed, failed and cancelled are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the task has ended.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}
