package mcptest

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/mcp"
)

// ResourceHandler serves resources/read for one resource or template; the
// Request's URI is the URI read. It runs in its own goroutine, as a
// ToolHandler does; an error becomes a JSON-RPC error (an *mcp.Error keeps
// its code; another error is an internal error).
type ResourceHandler func(ctx context.Context, req *Request) (*mcp.ReadResourceResult, error)

type resource struct {
	def     mcp.Resource
	handler ResourceHandler
}

type resourceTemplate struct {
	def     mcp.ResourceTemplate
	match   *regexp.Regexp
	handler ResourceHandler
}

// AddResource adds a resource, or replaces the one of the same URI, and
// tells the clients connected over a stream that the resources changed.
// It panics if h is nil.
func (srv *Server) AddResource(r mcp.Resource, h ResourceHandler) {
	if h == nil {
		panic("mcptest: AddResource with a nil handler")
	}
	srv.mu.Lock()
	srv.resources = slices.DeleteFunc(srv.resources, func(x *resource) bool { return x.def.URI == r.URI })
	srv.resources = append(srv.resources, &resource{def: r, handler: h})
	srv.mu.Unlock()
	srv.Notify("notifications/resources/list_changed", nil)
}

// AddResourceTemplate adds a resource template. A URI read that is not an
// added resource is served by the first template it matches; a template's
// {variable} matches any text without a slash, and {+variable} any text.
// It panics if h is nil.
func (srv *Server) AddResourceTemplate(t mcp.ResourceTemplate, h ResourceHandler) {
	if h == nil {
		panic("mcptest: AddResourceTemplate with a nil handler")
	}
	srv.mu.Lock()
	srv.templates = append(srv.templates, &resourceTemplate{def: t, match: templatePattern(t.URITemplate), handler: h})
	srv.mu.Unlock()
	srv.Notify("notifications/resources/list_changed", nil)
}

// templatePattern turns a URI template (simple and reserved expansion
// only) into a regular expression that matches the whole URI.
func templatePattern(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		b.WriteString(regexp.QuoteMeta(tmpl[:i]))
		if strings.HasPrefix(tmpl[i+1:], "+") {
			b.WriteString(".*")
		} else {
			b.WriteString("[^/]*")
		}
		tmpl = tmpl[i+j+1:]
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func (srv *Server) listResources() []mcp.Resource {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out := []mcp.Resource{}
	for _, r := range srv.resources {
		out = append(out, r.def)
	}
	return out
}

func (srv *Server) listTemplates() []mcp.ResourceTemplate {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out := []mcp.ResourceTemplate{}
	for _, t := range srv.templates {
		out = append(out, t.def)
	}
	return out
}

// readResource serves resources/read: the added resource of the URI, else
// the first template that matches it, else a resource-not-found error.
func (srv *Server) readResource(s *Session, m *Message) {
	uri := newRequest(s, m).URI
	var h ResourceHandler
	srv.mu.Lock()
	if i := slices.IndexFunc(srv.resources, func(x *resource) bool { return x.def.URI == uri }); i >= 0 {
		h = srv.resources[i].handler
	} else if i := slices.IndexFunc(srv.templates, func(x *resourceTemplate) bool { return x.match.MatchString(uri) }); i >= 0 {
		h = srv.templates[i].handler
	}
	srv.mu.Unlock()
	if h == nil {
		if content, ok := srv.skillFile(uri); ok {
			h = func(context.Context, *Request) (*mcp.ReadResourceResult, error) {
				return skillContents(uri, content), nil
			}
		}
	}
	if h == nil {
		s.Send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
			"code": mcp.CodeResourceNotFound, "message": "resource not found", "data": map[string]any{"uri": uri}}})
		return
	}
	srv.serve(s, m, func(ctx context.Context, r *Request) (any, error) { return h(ctx, r) }, nil)
}

// TextResource is a resources/read result with one text content.
func TextResource(uri, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, MimeType: "text/plain", Text: &text}}}
}
