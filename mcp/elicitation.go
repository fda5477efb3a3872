package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// formSchema is the restricted schema of a form-mode request: an object of
// primitive properties.
type formSchema struct {
	Type       string                    `json:"type"`
	Properties map[string]map[string]any `json:"properties"`
	Required   []string                  `json:"required"`
}

// The keywords the restricted schema of form mode allows: at the top, for a
// property, for the items of a multi-select, and for a titled option.
// Anything else (composition, $ref, $defs) is refused: a form is a flat
// list of fields, and a schema a server chose must stay cheap to apply.
var (
	formTopKeys    = keySet("$schema", "type", "properties", "required", "title", "description", "additionalProperties")
	formFieldKeys  = keySet("type", "title", "description", "default", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "enum", "enumNames", "oneOf", "anyOf", "minItems", "maxItems", "items")
	formItemsKeys  = keySet("type", "enum", "anyOf", "oneOf")
	formOptionKeys = keySet("const", "title", "description")
)

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// checkKeys refuses a keyword of m that allowed lacks.
func checkKeys(where string, m map[string]any, allowed map[string]bool) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !allowed[k] {
			return fmt.Errorf("%s: keyword %q is not allowed in a form (only primitive fields)", where, k)
		}
	}
	return nil
}

// checkOptions checks the titled options of an enum: objects of const and
// title.
func checkOptions(where string, v any) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: options must be an array", where)
	}
	for _, o := range list {
		om, ok := o.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: an option must be an object of const and title", where)
		}
		if err := checkKeys(where, om, formOptionKeys); err != nil {
			return err
		}
	}
	return nil
}

// checkFormSchema checks that a requested schema is what form mode allows
// (an object whose properties are strings, numbers, integers, booleans or
// enums, single or multi-select, with the keywords of the spec's
// PrimitiveSchemaDefinition and nothing else) and compiles it.
func checkFormSchema(raw json.RawMessage) (*formSchema, error) {
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, fmt.Errorf("requestedSchema is not an object")
	}
	if err := checkKeys("requestedSchema", top, formTopKeys); err != nil {
		return nil, err
	}
	if ap, ok := top["additionalProperties"]; ok {
		if _, isBool := ap.(bool); !isBool {
			return nil, errors.New(`requestedSchema: "additionalProperties" may only be true or false`)
		}
	}
	var fs formSchema
	if err := json.Unmarshal(raw, &fs); err != nil {
		return nil, fmt.Errorf("requestedSchema is not an object: %w", err)
	}
	if fs.Type != "object" {
		return nil, fmt.Errorf(`requestedSchema must have "type": "object", has %q`, fs.Type)
	}
	for _, name := range slices.Sorted(maps.Keys(fs.Properties)) {
		prop := fs.Properties[name]
		where := fmt.Sprintf("property %q", name)
		if err := checkKeys(where, prop, formFieldKeys); err != nil {
			return nil, err
		}
		for _, k := range []string{"oneOf", "anyOf"} {
			if err := checkOptions(where, prop[k]); err != nil {
				return nil, err
			}
		}
		switch t, _ := prop["type"].(string); t {
		case "string", "number", "integer", "boolean":
			if prop["items"] != nil {
				return nil, fmt.Errorf("%s: only an array has items", where)
			}
		case "array":
			items, _ := prop["items"].(map[string]any)
			if items == nil || (items["enum"] == nil && items["anyOf"] == nil && items["oneOf"] == nil) {
				return nil, fmt.Errorf("%s: an array must be a multi-select enum", where)
			}
			if err := checkKeys(where+" items", items, formItemsKeys); err != nil {
				return nil, err
			}
			for _, k := range []string{"oneOf", "anyOf"} {
				if err := checkOptions(where+" items", items[k]); err != nil {
					return nil, err
				}
			}
		default:
			return nil, fmt.Errorf("%s: type %q is not a primitive form field", where, t)
		}
	}
	for _, r := range fs.Required {
		if _, ok := fs.Properties[r]; !ok {
			return nil, fmt.Errorf("required property %q is not defined", r)
		}
	}
	return &fs, nil
}

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
		fs, err := checkFormSchema(req.RequestedSchema)
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
		content := maps.Clone(res.Content)
		if content == nil {
			content = map[string]any{}
		}
		for name, prop := range fs.Properties {
			if def, ok := prop["default"]; ok {
				if _, set := content[name]; !set {
					content[name] = def
				}
			}
		}
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
