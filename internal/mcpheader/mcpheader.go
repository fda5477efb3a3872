// Package mcpheader mirrors parts of a request into the headers of
// Streamable HTTP (2026-07-28): Mcp-Method, Mcp-Name (the tool, prompt or
// resource), and Mcp-Param-{Name} for each tool parameter whose schema
// carries "x-mcp-header".
package mcpheader

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// Param is a tool parameter mirrored into a header.
type Param struct {
	path []string // the chain of "properties" keys leading to it
	name string   // the x-mcp-header value: the header is Mcp-Param-{name}
	typ  string   // "string", "integer" or "boolean"
}

// maxSafeInteger is the largest integer a header may carry (JavaScript's
// safe range).
const maxSafeInteger = 1<<53 - 1

// ForTool returns the parameters of a tool's inputSchema that are
// mirrored into headers, or an error when an x-mcp-header annotation breaks
// the spec's rules: not empty, a token, unique regardless of case, on a
// string, integer or boolean property that is reached from the root
// through "properties" alone.
func ForTool(schema json.RawMessage) ([]Param, error) {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []Param
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		switch n := node.(type) {
		case []any:
			for _, v := range n {
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if h, ok := n["x-mcp-header"]; ok {
				name, _ := h.(string)
				switch {
				case !reachable || len(path) == 0:
					return fmt.Errorf("x-mcp-header %q is not on a property reached through properties alone", name)
				case !isToken(name):
					return fmt.Errorf("x-mcp-header %q is not an HTTP header token", name)
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header %q is used twice", name)
				}
				typ, _ := n["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("x-mcp-header %q is on a property of type %v, not string, integer or boolean", name, n["type"])
				}
				seen[strings.ToLower(name)] = true
				out = append(out, Param{path: append([]string(nil), path...), name: name, typ: typ})
			}
			for k, v := range n {
				switch {
				case k == "properties":
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					for pk, pv := range props {
						if err := walk(pv, append(path, pk), reachable); err != nil {
							return err
						}
					}
				case k == "enum" || k == "const" || k == "default" || k == "examples":
				default:
					if err := walk(v, path, false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

// isToken reports whether s is an HTTP field-name token (RFC 9110 tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Values returns the Mcp-Param headers of a call with the
// encoded arguments args. A parameter that is absent or null has none; one
// whose value is not of its declared type is an error.
func Values(hs []Param, args json.RawMessage) (http.Header, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	h := http.Header{}
	for _, p := range hs {
		var v any = root
		for _, k := range p.path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		var s string
		switch x := v.(type) {
		case nil:
			continue
		case string:
			if p.typ != "string" {
				return nil, wrongType(p)
			}
			s = x
		case bool:
			if p.typ != "boolean" {
				return nil, wrongType(p)
			}
			s = strconv.FormatBool(x)
		case json.Number:
			if p.typ != "integer" {
				return nil, wrongType(p)
			}
			n, err := strconv.ParseInt(x.String(), 10, 64)
			if err != nil {
				f, ferr := x.Float64()
				if ferr != nil || f != float64(int64(f)) {
					return nil, fmt.Errorf("parameter %s (x-mcp-header %s) is not an integer: %s", strings.Join(p.path, "."), p.name, x)
				}
				n = int64(f)
			}
			if n > maxSafeInteger || n < -maxSafeInteger {
				return nil, fmt.Errorf("parameter %s (x-mcp-header %s) is outside the safe integer range", strings.Join(p.path, "."), p.name)
			}
			s = strconv.FormatInt(n, 10)
		default:
			return nil, wrongType(p)
		}
		h["Mcp-Param-"+p.name] = []string{headerValue(s)}
	}
	return h, nil
}

// wrongType is the error of a parameter whose value is not of its
// declared type.
func wrongType(p Param) error {
	return fmt.Errorf("parameter %s (x-mcp-header %s) is not of type %s", strings.Join(p.path, "."), p.name, p.typ)
}

// headerValue encodes s for a header: as it is when it is plain visible
// ASCII (inner spaces and tabs allowed), else as =?base64?…?= of its UTF-8,
// as is a value that looks like that encoding itself.
func headerValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t'
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c == ' ' || c == '\t' || (c >= 0x21 && c <= 0x7e)
	}
	if s == "" {
		plain = true
	}
	if plain && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// SetStandard sets Mcp-Method in h and, for the methods that name a
// tool, prompt or resource, Mcp-Name. method is the JSON string of the
// request's method. Only the member named is decoded, not the rest of the
// params (the arguments of a tool call, say).
func SetStandard(h http.Header, method, params []byte) {
	var m string
	value, known := []string(nil), false
	if inner, ok := plainJSONString(method); ok {
		if value, known = methodHeaders[string(inner)]; known {
			m = value[0]
		} else {
			m = string(inner)
		}
	} else if json.Unmarshal(method, &m) != nil {
		return
	}
	if !known {
		value = []string{m}
	}
	h["Mcp-Method"] = value
	var key string
	switch m {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		key = "taskId" // routes the request to the server instance that holds the task
	default:
		return
	}
	ndjson.Members(params, func(k, v []byte) bool {
		if string(k) != key {
			return true
		}
		var name string
		if inner, ok := plainJSONString(v); ok {
			name = string(inner)
		} else if json.Unmarshal(v, &name) != nil {
			return false
		}
		h["Mcp-Name"] = []string{headerValue(name)}
		return false
	})
}

// plainJSONString returns the inside of b when b is a JSON string without
// escapes (most are): it needs no decoding.
func plainJSONString(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' || bytes.IndexByte(b, '\\') >= 0 {
		return nil, false
	}
	inner := b[1 : len(b)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' {
			return nil, false
		}
	}
	return inner, true
}

// methodHeaders are the Mcp-Method values of the common methods, shared by
// the requests.
var methodHeaders = func() map[string][]string {
	m := map[string][]string{}
	for _, name := range []string{"tools/call", "tools/list", "resources/read", "resources/list", "prompts/get", "prompts/list", "ping", "tasks/get", "tasks/update", "tasks/cancel", "server/discover", "completion/complete"} {
		m[name] = []string{name}
	}
	return m
}()
