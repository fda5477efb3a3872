package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkTools refuses, as the Messages API does, a request with a tool
// whose input_schema is not a JSON Schema object: type other than
// "object", a top-level anyOf, oneOf or allOf, a property name outside
// ^[a-zA-Z0-9_.-]{1,64}$, or a schema that is not valid JSON Schema
// (draft 2020-12).
func checkTools(body []byte) error {
	var req struct {
		Tools []struct {
			Name        string          `json:"name"`
			Type        string          `json:"type"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue // a server tool of the API's own
		}
		if err := checkSchema(t.InputSchema); err != nil {
			return fmt.Errorf("tools.%d.custom.input_schema: %w", i, err)
		}
	}
	return nil
}

var apiPropertyKey = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

func checkSchema(raw json.RawMessage) error {
	var s struct {
		Type       *string                    `json:"type"`
		AnyOf      json.RawMessage            `json:"anyOf"`
		OneOf      json.RawMessage            `json:"oneOf"`
		AllOf      json.RawMessage            `json:"allOf"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("input_schema is not a JSON object: %w", err)
	}
	if s.Type == nil || *s.Type != "object" {
		return fmt.Errorf(`input_schema.type: Field required to be "object"`)
	}
	if s.AnyOf != nil || s.OneOf != nil || s.AllOf != nil {
		return fmt.Errorf("input_schema does not support oneOf, allOf, or anyOf at the top level")
	}
	for k := range s.Properties {
		if !apiPropertyKey.MatchString(k) {
			return fmt.Errorf("property keys should match pattern '%s'", apiPropertyKey)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource("mock:///schema.json", doc); err != nil {
		return fmt.Errorf("JSON schema is invalid: %w", err)
	}
	if _, err := c.Compile("mock:///schema.json"); err != nil {
		return fmt.Errorf("JSON schema is invalid: %w", err)
	}
	return nil
}
