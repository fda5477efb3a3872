package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcplug/mcplug/mcp"
)

// ToolHandler serves tools/call for one tool. It runs in its own goroutine;
// ctx ends when the client cancels the call or the session ends. An error
// becomes a tool error (a result with IsError set and the error's text),
// except ErrInputRequired (see Request) and an *mcp.Error returned as is
// (not wrapped), which becomes a JSON-RPC error with its code.
type ToolHandler func(ctx context.Context, req *Request) (*mcp.CallToolResult, error)

type tool struct {
	def     json.RawMessage
	name    string
	handler ToolHandler
}

// AddTool adds a tool, or replaces the one of the same name, and tells the
// clients connected over a stream that the tools changed. A nil
// InputSchema means an object with any properties. It panics if h is nil.
func (srv *Server) AddTool(t mcp.Tool, h ToolHandler) {
	if h == nil {
		panic("mcptest: AddTool with a nil handler")
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	added := &tool{def: Raw(t), name: t.Name, handler: h}
	srv.mu.Lock()
	i := slices.IndexFunc(srv.tools, func(x *tool) bool { return x.name == t.Name })
	if i >= 0 {
		srv.tools[i] = added
	} else {
		srv.tools = append(srv.tools, added)
	}
	srv.mu.Unlock()
	srv.Notify("notifications/tools/list_changed", nil)
}

// RemoveTool removes an added tool and tells the clients connected over a
// stream that the tools changed.
func (srv *Server) RemoveTool(name string) {
	srv.mu.Lock()
	srv.tools = slices.DeleteFunc(srv.tools, func(x *tool) bool { return x.name == name })
	srv.mu.Unlock()
	srv.Notify("notifications/tools/list_changed", nil)
}

// defaults reports whether nothing was added to or set on the server, so
// that it serves DefaultTools.
func (srv *Server) defaults() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.Tools == nil && srv.ToolFuncs == nil &&
		len(srv.tools)+len(srv.resources)+len(srv.templates)+len(srv.prompts) == 0
}

// toolsPage answers tools/list, in pages of PageSize when it is set.
func (srv *Server) toolsPage(params json.RawMessage) map[string]any {
	tools := srv.listedTools()
	if srv.PageSize <= 0 {
		return map[string]any{"tools": tools}
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	start := 0
	fmt.Sscanf(p.Cursor, "page-%d", &start)
	start = min(max(start, 0), len(tools))
	end := min(start+srv.PageSize, len(tools))
	res := map[string]any{"tools": tools[start:end]}
	if end < len(tools) {
		res["nextCursor"] = fmt.Sprintf("page-%d", end)
	}
	return res
}

// listedTools is Tools if set; else the added tools and one for each of
// ToolFuncs (with the definition from DefaultTools where the name
// matches); else DefaultTools.
func (srv *Server) listedTools() []json.RawMessage {
	if srv.Tools != nil {
		return srv.Tools
	}
	if srv.defaults() {
		return DefaultTools
	}
	out := []json.RawMessage{}
	srv.mu.Lock()
	for _, t := range srv.tools {
		out = append(out, t.def)
	}
	srv.mu.Unlock()
	for _, n := range slices.Sorted(maps.Keys(srv.ToolFuncs)) {
		def := Raw(map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
		for _, d := range DefaultTools {
			var t struct{ Name string }
			json.Unmarshal(d, &t)
			if t.Name == n {
				def = d
			}
		}
		out = append(out, def)
	}
	return out
}

// callTool serves tools/call: an added tool's handler, else ToolFuncs (or
// DefaultToolFuncs when ToolFuncs is nil).
func (srv *Server) callTool(s *Session, m *Message) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	json.Unmarshal(m.Params, &p)
	srv.mu.Lock()
	i := slices.IndexFunc(srv.tools, func(x *tool) bool { return x.name == p.Name })
	var added *tool
	if i >= 0 {
		added = srv.tools[i]
	}
	srv.mu.Unlock()
	if added != nil {
		srv.serve(s, m, func(ctx context.Context, r *Request) (any, error) {
			return added.handler(ctx, r)
		}, func(err error) any {
			res := TextResult(err.Error())
			res.IsError = true
			return res
		})
		return
	}
	funcs := srv.ToolFuncs
	if funcs == nil {
		funcs = DefaultToolFuncs // no tool was added either
	}
	f, ok := funcs[p.Name]
	if !ok {
		s.ReplyError(m.ID, mcp.CodeInvalidParams, "unknown tool: "+p.Name)
		return
	}
	s.Reply(m.ID, f(p.Arguments))
}
