package mcptest

import (
	"context"
	"slices"

	"github.com/mcplug/mcplug/mcp"
)

// PromptHandler serves prompts/get for one prompt; Bind decodes the
// prompt's arguments (a map of strings). It runs in its own goroutine, as
// a ToolHandler does; an error becomes a JSON-RPC error (an *mcp.Error
// keeps its code; another error is an internal error).
type PromptHandler func(ctx context.Context, req *Request) (*mcp.GetPromptResult, error)

type prompt struct {
	def     mcp.Prompt
	handler PromptHandler
}

// AddPrompt adds a prompt, or replaces the one of the same name, and tells
// the clients connected over a stream that the prompts changed. It panics
// if h is nil.
func (srv *Server) AddPrompt(p mcp.Prompt, h PromptHandler) {
	if h == nil {
		panic("mcptest: AddPrompt with a nil handler")
	}
	srv.mu.Lock()
	srv.prompts = slices.DeleteFunc(srv.prompts, func(x *prompt) bool { return x.def.Name == p.Name })
	srv.prompts = append(srv.prompts, &prompt{def: p, handler: h})
	srv.mu.Unlock()
	srv.Notify("notifications/prompts/list_changed", nil)
}

func (srv *Server) listPrompts() []mcp.Prompt {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out := []mcp.Prompt{}
	for _, p := range srv.prompts {
		out = append(out, p.def)
	}
	return out
}

// getPrompt serves prompts/get; an unknown prompt is an invalid-params
// error.
func (srv *Server) getPrompt(s *Session, m *Message) {
	name := newRequest(s, m).Name
	var h PromptHandler
	srv.mu.Lock()
	if i := slices.IndexFunc(srv.prompts, func(x *prompt) bool { return x.def.Name == name }); i >= 0 {
		h = srv.prompts[i].handler
	}
	srv.mu.Unlock()
	if h == nil {
		s.ReplyError(m.ID, mcp.CodeInvalidParams, "unknown prompt: "+name)
		return
	}
	srv.serve(s, m, func(ctx context.Context, r *Request) (any, error) { return h(ctx, r) }, nil)
}
