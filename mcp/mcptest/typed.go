package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcplug/mcplug/mcp"
)

// TypedHandler serves a tool added with AddTool: in is the call's
// arguments, already checked against the tool's input schema and decoded.
// Its out becomes the result's structuredContent (and, as JSON, its text);
// an error becomes a tool error, as a ToolHandler's does.
type TypedHandler[In, Out any] func(ctx context.Context, req *Request, in In) (Out, error)

// AddTool adds to srv a tool whose arguments are the Go type In and whose
// result is Out, as Server.AddTool adds one (it replaces a tool of the
// same name, and tells the clients).
//
// A nil t.InputSchema is made from In, which must be a struct (or a
// pointer to one) or a map with string keys: its fields by their JSON
// names, those without omitempty or omitzero required, no other property
// allowed (the `jsonschema:"description=…"` tag of
// github.com/invopop/jsonschema describes a field; a comma ends that
// description, and what follows it is read as more of the tag's options,
// so a description with a comma goes in a `jsonschema_description:"…"` tag
// of its own). A nil t.OutputSchema is made from Out the same way when Out
// is a struct. Every call's arguments are checked against the input schema
// before h runs: arguments that do not match, or do not decode into In,
// make a tool error (isError) that says what is wrong, as the model reading
// it needs, and h does not run.
// h's out is the result's structuredContent when it encodes as a JSON
// object, and its text is that JSON (a string out is the text as it is).
//
// AddTool panics for a nil h, an In that is not an object, or a schema
// given in t that does not compile.
func AddTool[In, Out any](srv *Server, t mcp.Tool, h TypedHandler[In, Out]) {
	if h == nil {
		panic("mcptest: AddTool with a nil handler")
	}
	in := reflect.TypeFor[In]()
	if t.InputSchema == nil {
		if !isObject(in) {
			panic(fmt.Sprintf("mcptest: AddTool: the arguments of tool %q are a %s; a tool's arguments are an object: a struct or a map", t.Name, in))
		}
		t.InputSchema = schemaOf(in)
	}
	if out := reflect.TypeFor[Out](); t.OutputSchema == nil && isStruct(out) {
		t.OutputSchema = schemaOf(out)
	}
	check, err := compile(t.Name, t.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("mcptest: AddTool: the input schema of tool %q: %v", t.Name, err))
	}
	srv.AddTool(t, func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
		args := req.Arguments
		if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
			args = json.RawMessage("{}")
		}
		if err := validate(check, args); err != nil {
			return nil, fmt.Errorf("invalid arguments for tool %s: %w", t.Name, err)
		}
		var v In
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, fmt.Errorf("invalid arguments for tool %s: %w", t.Name, err)
		}
		out, err := h(ctx, req, v)
		if err != nil {
			return nil, err
		}
		return typedResult(out)
	})
}

// typedResult is the result of a TypedHandler's out.
func typedResult(out any) (*mcp.CallToolResult, error) {
	if s, ok := out.(string); ok {
		return TextResult(s), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("mcptest: the tool's result does not encode as JSON: %w", err)
	}
	res := TextResult(string(b))
	if len(b) > 0 && b[0] == '{' {
		res.StructuredContent = b
	}
	return res, nil
}

// isObject reports whether values of t encode as JSON objects: structs
// and maps with string keys, or pointers to them.
func isObject(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map && t.Key().Kind() == reflect.String
}

func isStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// schemaOf is the JSON Schema (2020-12) of t's values.
func schemaOf(t reflect.Type) json.RawMessage {
	r := &jsonschema.Reflector{Anonymous: true, ExpandedStruct: true}
	s := r.ReflectFromType(t)
	s.Version = "" // 2020-12 is MCP's default dialect
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcptest: the schema of %s: %v", t, err))
	}
	return b
}

// compile compiles a tool's input schema; it refers to nothing outside
// itself.
func compile(name string, schema json.RawMessage) (*validator.Schema, error) {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	url := "mcptest:///tools/" + name
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s; only references within it are followed", url)
}

var english = message.NewPrinter(language.English)

// validate checks args against s, and says what does not match in one
// line a model can read: where, and what was wanted.
func validate(s *validator.Schema, args json.RawMessage) error {
	v, err := validator.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return err
	}
	err = s.Validate(v)
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var problems []string
	var walk func(e *validator.ValidationError)
	walk = func(e *validator.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			problems = append(problems, fmt.Sprintf("at %s: %s", where, e.ErrorKind.LocalizedString(english)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return errors.New(strings.Join(problems, "; "))
}
