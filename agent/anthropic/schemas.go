package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/internal/schemawork"
	"github.com/mcplug/mcplug/mcp"
)

var _ agent.ToolChecker = (*Model)(nil)

// propertyKey is what the Messages API takes as the name of a property
// of a tool's input schema.
var propertyKey = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// draft2020 is the JSON Schema draft the Messages API reads tool schemas
// by.
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// CheckTool reports why the Messages API would refuse the tool's
// definition, or nil: an input schema that is not a JSON object, whose
// type is not "object", that starts with anyOf, oneOf or allOf, that
// names a property otherwise than ^[a-zA-Z0-9_.-]{1,64}$, or that is not
// a valid JSON Schema (draft 2020-12; a schema that names another draft
// in $schema is not checked against it). A schema without "type" is
// sent as an object. These are the checks of Claude Code's; the agent
// flattens a refused schema that starts with a combinator, as Claude Code
// does, and checks the result (see agent.ToolSchemaOptions).
func (m *Model) CheckTool(t mcp.Tool) error { return CheckSchema(t.InputSchema) }

// CheckSchema is CheckTool for an input schema alone.
func CheckSchema(schema json.RawMessage) error {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil
	}
	if !json.Valid(schema) {
		return errors.New("its input schema is not JSON")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil || top == nil {
		return errors.New("its input schema is not a JSON object")
	}
	if raw, ok := top["type"]; ok {
		var typ string
		if json.Unmarshal(raw, &typ) != nil || typ != "object" {
			return fmt.Errorf(`its input schema's type is %s, where the Anthropic API takes only "object"`, short(string(raw)))
		}
	}
	var combinators []string
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if _, ok := top[k]; ok {
			combinators = append(combinators, k)
		}
	}
	if len(combinators) > 0 {
		return fmt.Errorf("its input schema uses top-level %s, which the Anthropic API does not accept", strings.Join(combinators, "/"))
	}
	if raw, ok := top["properties"]; ok {
		var props map[string]json.RawMessage
		if json.Unmarshal(raw, &props) == nil {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if !propertyKey.MatchString(k) {
					return fmt.Errorf("property key %s does not match %s", short(fmt.Sprintf("%q", k)), propertyKey)
				}
			}
		}
	}
	if raw, ok := top["$schema"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil || (s != draft2020 && s != draft2020+"#") {
			return nil // another draft: the API's check of it is not this one
		}
	}
	return validSchema(schema)
}

// validSchema reports whether schema is a valid JSON Schema of draft
// 2020-12, within the work a stranger's schema may cost.
func validSchema(schema json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return errors.New("its input schema is not JSON")
	}
	const url = "mcp:///input-schema"
	if schemawork.Of(doc, url, schemawork.MaxSchemaWork) > schemawork.MaxSchemaWork {
		return fmt.Errorf("its input schema is too complex to check (over %d subschemas to apply)", schemawork.MaxSchemaWork)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("its input schema is invalid: %s", short(err.Error()))
	}
	if _, err := c.Compile(url); err != nil {
		return fmt.Errorf("its input schema is invalid: %s", short(oneLine(err.Error())))
	}
	return nil
}

// noLoader loads nothing: a $ref outside the schema is not followed.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not loaded", url)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// short bounds a server's text quoted in a reason.
func short(s string) string {
	if len(s) <= 200 {
		return s
	}
	cut := 200
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
