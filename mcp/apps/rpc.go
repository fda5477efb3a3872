package apps

// A view's requests that the host page cannot answer alone, served here:
// tools/call and resources/read on the view's own server, ui/message and
// ui/update-model-context for the program.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcplug/mcplug/mcp"
)

// rpcMessage is a view's JSON-RPC request.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpc answers a view's request with a JSON-RPC response for the page to
// hand back; whatever the view sent, the HTTP answer is a response (or
// 4xx when the page itself is wrong).
func (h *Host) rpc(w http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.session(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	var m rpcMessage
	fail := func(id json.RawMessage, code int, format string, a ...any) (any, error) {
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		return &rpcAnswer{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: fmt.Sprintf(format, a...)}}, nil
	}
	if err := jsonv2.Unmarshal(body, &m); err != nil {
		return fail(nil, CodeParseError, "apps: not a JSON-RPC message: %v", err)
	}
	if m.JSONRPC != "2.0" || m.Method == "" || !validID(m.ID) {
		return fail(m.ID, CodeInvalidRequest, "apps: not a JSON-RPC 2.0 request")
	}
	if !s.limiter.Allow() {
		return fail(m.ID, CodeBusy, "apps: too many requests from the view (at most %d a second)", MessageRate)
	}
	select {
	case s.inFlight <- struct{}{}:
		defer func() { <-s.inFlight }()
	default:
		return fail(m.ID, CodeBusy, "apps: too many requests from the view at once (at most %d)", MaxInFlight)
	}
	ctx := r.Context()
	ok := func(v any) (any, error) { return &rpcAnswer{JSONRPC: "2.0", ID: m.ID, Result: v}, nil }
	switch m.Method {
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := jsonv2.Unmarshal(m.Params, &p); err != nil || p.Name == "" {
			return fail(m.ID, CodeInvalidParams, "apps: tools/call needs a tool name")
		}
		var args any
		if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
			args = p.Arguments
		}
		res, err := h.m.CallAppTool(ctx, s.info.Server, p.Name, args)
		switch {
		case errors.Is(err, mcp.ErrNotForApps), errors.Is(err, mcp.ErrUnknownTool):
			h.logger.Warn("apps: a view called a tool it may not", "server", s.info.Server, "view", s.info.URI, "tool", logged(p.Name))
			return fail(m.ID, CodeNotAllowed, "%v", err)
		case err != nil:
			return fail(m.ID, CodeInternalError, "%v", err)
		}
		return ok(res)
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		if err := jsonv2.Unmarshal(m.Params, &p); err != nil || p.URI == "" {
			return fail(m.ID, CodeInvalidParams, "apps: resources/read needs a URI")
		}
		res, err := h.m.ReadAppResource(ctx, s.info.Server, p.URI)
		if err != nil {
			return fail(m.ID, CodeInternalError, "%v", err)
		}
		return ok(res)
	case "ui/message":
		var p struct {
			Role    string        `json:"role"`
			Content []mcp.Content `json:"content"`
		}
		if err := jsonv2.Unmarshal(m.Params, &p); err != nil || p.Role != "user" {
			return fail(m.ID, CodeInvalidParams, "apps: ui/message needs role \"user\" and content")
		}
		if h.opts.Message == nil {
			return ok(map[string]any{"isError": true})
		}
		if t, bad := h.undeclared(p.Content); bad {
			return fail(m.ID, CodeInvalidParams, "apps: ui/message: content of type %q, which the host did not declare (it takes %s)", logged(t), h.declared())
		}
		if err := h.opts.Message(ctx, &s.info, p.Content); err != nil {
			return ok(map[string]any{"isError": true})
		}
		return ok(struct{}{})
	case "ui/update-model-context":
		var p struct {
			Content           []mcp.Content   `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := jsonv2.Unmarshal(m.Params, &p); err != nil {
			return fail(m.ID, CodeInvalidParams, "apps: ui/update-model-context: %v", err)
		}
		if h.opts.UpdateModelContext == nil {
			return fail(m.ID, CodeMethodNotFound, "apps: the host takes no model context")
		}
		if t, bad := h.undeclared(p.Content); bad {
			return fail(m.ID, CodeInvalidParams, "apps: ui/update-model-context: content of type %q, which the host did not declare (it takes %s)", logged(t), h.declared())
		}
		if err := h.opts.UpdateModelContext(ctx, &s.info, p.Content, p.StructuredContent); err != nil {
			return fail(m.ID, CodeInternalError, "%v", err)
		}
		return ok(struct{}{})
	}
	return fail(m.ID, CodeMethodNotFound, "apps: method %q is not served to views", m.Method)
}

// modalities are the content types a host may declare to views, by the
// name the extension gives each in its capabilities.
var modalities = map[string]string{
	"text":          "text",
	"image":         "image",
	"audio":         "audio",
	"resource":      "resource",
	"resource_link": "resourceLink",
}

// contentTypes checks Options.ContentTypes; nil is text alone.
func contentTypes(types []string) (map[string]bool, error) {
	if types == nil {
		types = []string{"text"}
	}
	out := map[string]bool{}
	for _, t := range types {
		if modalities[t] == "" {
			return nil, fmt.Errorf("apps: ContentTypes: %q is not a content type (text, image, audio, resource, resource_link)", t)
		}
		out[t] = true
	}
	return out, nil
}

// undeclared returns the first type of content the host did not declare.
func (h *Host) undeclared(content []mcp.Content) (string, bool) {
	for _, c := range content {
		if !h.types[c.Type] {
			return c.Type, true
		}
	}
	return "", false
}

// declared lists the content types the host declared.
func (h *Host) declared() string {
	var out []string
	for t := range h.types {
		out = append(out, t)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// capabilities are the host capabilities of what the Go host serves:
// ui/message and ui/update-model-context, with the content types it
// takes; neither when the program takes none.
func (h *Host) capabilities() map[string]any {
	kinds := map[string]any{}
	for t := range h.types {
		kinds[modalities[t]] = struct{}{}
	}
	caps := map[string]any{}
	if h.opts.Message != nil {
		caps["message"] = kinds
	}
	if h.opts.UpdateModelContext != nil {
		ctx := maps.Clone(kinds)
		ctx["structuredContent"] = struct{}{}
		caps["updateModelContext"] = ctx
	}
	return caps
}

// validID reports whether id is a JSON-RPC request id: a string or a
// number.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// logged is a string a view or a server chose, cut for a log line.
func logged(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
