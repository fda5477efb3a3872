package mcp

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// OutputSchemaError reports a tool result whose structuredContent does not
// match the outputSchema the tool declared (or is missing). It is not a
// transport error: the server answered, with the wrong shape. Match it with
// errors.As.
type OutputSchemaError struct {
	Tool string
	Err  error // the validator's detail
}

func (e *OutputSchemaError) Error() string {
	return fmt.Sprintf("mcp: tool %q: structuredContent does not match its outputSchema: %v", e.Tool, e.Err)
}

func (e *OutputSchemaError) Unwrap() error { return e.Err }

// compileSchema compiles a JSON Schema (2020-12 unless it says otherwise).
// Only the schema itself is read: no $ref is fetched from anywhere.
func compileSchema(name string, schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "mcp:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("mcp: schema refers to %s; only references within the schema are followed", url)
}

// validateJSON checks a JSON document against a compiled schema.
func validateJSON(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// schemaCache holds the compiled outputSchemas of the tools last listed.
// A schema is compiled when a listing brings a new one, never per call.
type schemaCache struct {
	mu     sync.Mutex
	byTool map[string]toolSchema
}

type toolSchema struct {
	raw    []byte
	schema *jsonschema.Schema // nil when the schema does not compile
}

func (c *schemaCache) add(tools []Tool, logger *slog.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byTool == nil {
		c.byTool = map[string]toolSchema{}
	}
	for _, t := range tools {
		if len(t.OutputSchema) == 0 {
			delete(c.byTool, t.Name)
			continue
		}
		if old, ok := c.byTool[t.Name]; ok && bytes.Equal(old.raw, t.OutputSchema) {
			continue
		}
		s, err := compileSchema("tools/"+t.Name+"/outputSchema", t.OutputSchema)
		if err != nil {
			logger.Warn("mcp: tool's outputSchema does not compile; its results are not validated", "tool", t.Name, "err", err)
		}
		c.byTool[t.Name] = toolSchema{raw: slices.Clone(t.OutputSchema), schema: s}
	}
}

// validate checks a result of tool against its outputSchema, if it has one.
func (c *schemaCache) validate(tool string, res *CallToolResult) error {
	c.mu.Lock()
	ts, ok := c.byTool[tool]
	c.mu.Unlock()
	if !ok || ts.schema == nil || res.IsError {
		return nil
	}
	if len(res.StructuredContent) == 0 {
		return &OutputSchemaError{Tool: tool, Err: fmt.Errorf("the result has no structuredContent")}
	}
	if err := validateJSON(ts.schema, res.StructuredContent); err != nil {
		return &OutputSchemaError{Tool: tool, Err: err}
	}
	return nil
}

// toolCache is a Connection's last full tool list, kept while the server
// promises to announce changes.
type toolCache struct {
	mu    sync.Mutex
	tools []Tool
	valid bool
	gen   uint64
}

func (c *toolCache) get() ([]Tool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools), c.valid
}

func (c *toolCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// set stores tools listed at generation gen, unless a change was announced
// since.
func (c *toolCache) set(tools []Tool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.tools, c.valid = slices.Clone(tools), true
	}
}

func (c *toolCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.tools, c.valid = nil, false
}
