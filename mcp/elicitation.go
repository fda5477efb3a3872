package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcplug/mcplug/internal/formschema"
)

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

// ElicitHandler answers elicitation/create. It runs in its own goroutine;
// ctx ends when the server cancels the request or the connection closes.
// It may call the Connection.
type ElicitHandler func(ctx context.Context, c *Connection, req *ElicitRequest) (*ElicitResult, error)

// elicit serves elicitation/create: it checks the request against the
// modes offered, runs the handler, and for an accepted form applies the
// schema's defaults and validates the answer before it is sent.
func (c *Connection) elicit(ctx context.Context, params json.RawMessage) (any, *Error) {
	var req ElicitRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid elicitation/create params: " + err.Error()}
	}
	switch req.Mode {
	case "", "form":
		if c.opts.ElicitForm == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "this client does not support form-mode elicitation"}
		}
		fs, err := formschema.Check(req.RequestedSchema)
		if err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid requestedSchema: " + err.Error()}
		}
		schema, err := compileSchema("elicitation/requestedSchema", req.RequestedSchema)
		if err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid requestedSchema: " + err.Error()}
		}
		res, err := c.opts.ElicitForm(ctx, c, &req)
		if err != nil {
			return nil, handlerError(err)
		}
		if res == nil || res.Action != "accept" {
			return declined(res), nil
		}
		content := fs.WithDefaults(res.Content)
		answer, err := json.Marshal(content)
		if err == nil {
			err = validateJSON(ctx, schema, answer)
		}
		if err != nil {
			c.logger.Warn("mcp: elicitation answer does not match the requested schema; not sent", "err", err)
			return nil, &Error{Code: CodeInvalidParams, Message: "the answer does not match the requested schema: " + err.Error()}
		}
		return &ElicitResult{Action: "accept", Content: content}, nil
	case "url":
		if c.opts.ElicitURL == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "this client does not support url-mode elicitation"}
		}
		if req.URL == "" || (req.ElicitationID == "" && c.era().elicitationIDs()) { // 2026-07-28 dropped elicitationId
			return nil, &Error{Code: CodeInvalidParams, Message: "url-mode elicitation needs url and elicitationId"}
		}
		res, err := c.opts.ElicitURL(ctx, c, &req)
		if err != nil {
			return nil, handlerError(err)
		}
		if res == nil || res.Action != "accept" {
			return declined(res), nil
		}
		return &ElicitResult{Action: "accept"}, nil
	default:
		return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown elicitation mode %q", req.Mode)}
	}
}

func declined(res *ElicitResult) *ElicitResult {
	if res == nil || (res.Action != "decline" && res.Action != "cancel") {
		return &ElicitResult{Action: "cancel"}
	}
	return &ElicitResult{Action: res.Action}
}
