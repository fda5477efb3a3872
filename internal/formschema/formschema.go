// Package formschema checks the requested schema of a form-mode
// elicitation: the restricted schema the spec allows (an object of
// primitive fields), and nothing a server could make costly to apply.
package formschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Schema is the restricted schema of a form-mode request: an object of
// primitive properties.
type Schema struct {
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

// Check checks that a requested schema is what form mode allows
// (an object whose properties are strings, numbers, integers, booleans or
// enums, single or multi-select, with the keywords of the spec's
// PrimitiveSchemaDefinition and nothing else) and compiles it.
func Check(raw json.RawMessage) (*Schema, error) {
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
	var fs Schema
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

// WithDefaults returns content with the default of every property it
// lacks; content itself is not changed.
func (s *Schema) WithDefaults(content map[string]any) map[string]any {
	out := maps.Clone(content)
	if out == nil {
		out = map[string]any{}
	}
	for name, prop := range s.Properties {
		if def, ok := prop["default"]; ok {
			if _, set := out[name]; !set {
				out[name] = def
			}
		}
	}
	return out
}
