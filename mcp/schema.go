package mcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/mcplug/mcplug/internal/schemawork"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// OutputSchemaError reports a tool result whose structuredContent does not
// match (or lacks) the outputSchema the tool declared: the server answered,
// with the wrong shape.
type OutputSchemaError struct {
	Tool   string
	Err    error           // the validator's detail
	Result *CallToolResult // the result refused
}

func (e *OutputSchemaError) Error() string {
	return fmt.Sprintf("mcp: tool %q: structuredContent does not match its outputSchema: %v", e.Tool, e.Err)
}

func (e *OutputSchemaError) Unwrap() error { return e.Err }

// compileSchema compiles a JSON Schema (2020-12 unless it says otherwise).
// Only the schema itself is read: no $ref is fetched from anywhere. A
// schema whose work (see internal/schemawork) passes schemawork.MaxSchemaWork is refused with
// a *SchemaTooComplexError.
func compileSchema(name string, schema []byte) (*boundedSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	url := "mcp:///" + name
	work := schemawork.Of(doc, url, schemawork.MaxSchemaWork)
	if work > schemawork.MaxSchemaWork {
		return nil, &SchemaTooComplexError{Work: work, Max: schemawork.MaxSchemaWork}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &boundedSchema{Schema: s, work: work}, nil
}

// boundedSchema is a compiled schema and its work.
type boundedSchema struct {
	*jsonschema.Schema
	work int
}

// SchemaTooComplexError reports a server's JSON Schema that could cost
// too much to apply, which is not used: one value may visit Work
// subschemas (each $ref followed), past Max.
type SchemaTooComplexError struct {
	Work, Max int
}

func (e *SchemaTooComplexError) Error() string {
	if e.Max == 0 {
		return "mcp: schema too costly to apply to this value"
	}
	return fmt.Sprintf("mcp: schema too complex: applying it may visit more than %d subschemas per value", e.Max)
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("mcp: schema refers to %s; only references within the schema are followed", url)
}

// validateJSON checks a JSON document against a compiled schema. Its work
// is bounded: the schema's work times the values in the document must stay
// under schemawork.MaxValidationWork.
func validateJSON(ctx context.Context, s *boundedSchema, doc []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	if n := countValues(v); s.work*n > schemawork.MaxValidationWork {
		return &SchemaTooComplexError{Work: s.work * n}
	}
	return s.Validate(v)
}

// countValues counts the JSON values in v, v included.
func countValues(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 1
		for _, e := range x {
			n += countValues(e)
		}
		return n
	case []any:
		n := 1
		for _, e := range x {
			n += countValues(e)
		}
		return n
	}
	return 1
}

// schemaCache holds the compiled outputSchemas of the tools last listed.
// A schema is compiled when a listing brings a new one, never per call.
type schemaCache struct {
	mu     sync.Mutex // serializes add
	byTool sync.Map   // tool name → toolSchema; read without a lock by every call
}

type toolSchema struct {
	raw    []byte
	schema *boundedSchema // nil when the schema cannot be used
	err    error          // why not: it does not compile, refers outside itself, or costs too much
}

func (c *schemaCache) add(tools []Tool, logger *slog.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tools {
		if len(t.OutputSchema) == 0 {
			c.byTool.Delete(t.Name)
			continue
		}
		if old, ok := c.byTool.Load(t.Name); ok && bytes.Equal(old.(toolSchema).raw, t.OutputSchema) {
			continue
		}
		s, err := compileSchema("tools/"+t.Name+"/outputSchema", t.OutputSchema)
		if err != nil {
			logger.Warn("mcp: tool's outputSchema cannot be used; its results are refused", "tool", t.Name, "err", err)
		}
		c.byTool.Store(t.Name, toolSchema{raw: slices.Clone(t.OutputSchema), schema: s, err: err})
	}
}

// validate checks a result of tool against its outputSchema, if it has one.
func (c *schemaCache) validate(ctx context.Context, tool string, res *CallToolResult) error {
	v, ok := c.byTool.Load(tool)
	if !ok || res.IsError {
		return nil
	}
	ts := v.(toolSchema)
	if ts.err != nil { // never taken as permissive (SEP-2106)
		return &OutputSchemaError{Tool: tool, Err: ts.err, Result: res}
	}
	if len(res.StructuredContent) == 0 {
		return &OutputSchemaError{Tool: tool, Err: fmt.Errorf("the result has no structuredContent"), Result: res}
	}
	if err := validateJSON(ctx, ts.schema, res.StructuredContent); err != nil {
		return &OutputSchemaError{Tool: tool, Err: err, Result: res}
	}
	return nil
}
