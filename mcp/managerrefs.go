package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The prompts and resources of a Manager's servers are named the way
// Claude Code shows them: a prompt as mcp__<server>__<prompt> (the rules of
// ExposedName), a resource or resource template as @<server>:<uri>. The
// Manager routes GetPrompt, ReadResource, Subscribe and Complete by these
// names to the right server, with the server's own name or URI.

// ServerPrompt is a prompt of one of a Manager's servers.
type ServerPrompt struct {
	Prompt        // with Name as the server names it
	Server string // the server's name in the Manager
	Ref    string // mcp__<server>__<prompt>, what GetPrompt takes
}

// ServerResource is a resource of one of a Manager's servers.
type ServerResource struct {
	Resource
	Server string
	Ref    string // @<server>:<uri>, what ReadResource and Subscribe take
}

// ServerResourceTemplate is a resource template of one of a Manager's
// servers.
type ServerResourceTemplate struct {
	ResourceTemplate
	Server string
	Ref    string // @<server>:<uriTemplate>, what Complete takes
}

// ExposedResource is how a Manager names the resource uri of server, as
// Claude Code shows it: @<server>:<uri>, with ':' and '%' of the server's
// name written %3A and %25, so that the first ':' ends it (resource
// "repo:notes" of server "gh" is @gh:repo:notes; "notes" of "gh:repo" is
// @gh%3Arepo:notes).
func ExposedResource(server, uri string) string { return "@" + refEscaper.Replace(server) + ":" + uri }

var (
	refEscaper   = strings.NewReplacer("%", "%25", ":", "%3A")
	refUnescaper = strings.NewReplacer("%25", "%", "%3A", ":", "%3a", ":")
)

// connected returns the servers the Manager has connected, after
// connecting those not tried yet.
func (m *Manager) connected(ctx context.Context) ([]*server, error) {
	if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
		return nil, err
	}
	m.mu.Lock()
	servers := m.sorted()
	m.mu.Unlock()
	var out []*server
	for _, s := range servers {
		s.mu.Lock()
		ok := s.state == StateConnected && s.conn != nil
		s.mu.Unlock()
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// Prompts returns the prompts of every connected server that offers
// prompts. A server whose listing fails contributes none (it is logged).
func (m *Manager) Prompts(ctx context.Context) ([]ServerPrompt, error) {
	servers, err := m.connected(ctx)
	if err != nil {
		return nil, err
	}
	var out []ServerPrompt
	for _, s := range servers {
		c, err := m.wait(ctx, s)
		if err != nil || c.InitializeResult().Capabilities.Prompts == nil {
			continue
		}
		prompts, err := c.Prompts(ctx)
		if err != nil {
			m.logger.Warn("mcp: could not list prompts", "server", s.name, "err", err)
			continue
		}
		seen := map[string]bool{}
		for _, p := range prompts {
			if seen[p.Name] { // listed twice: the first counts
				continue
			}
			seen[p.Name] = true
			out = append(out, ServerPrompt{Prompt: p, Server: s.name, Ref: ExposedName(s.name, p.Name)})
		}
	}
	// Names that collide (servers "my_server" and "my server", say) are
	// all disambiguated, as tool names are.
	count := map[string]int{}
	for _, p := range out {
		count[p.Ref]++
	}
	taken := map[string]bool{}
	for i, p := range out {
		if count[p.Ref] > 1 {
			out[i].Ref = disambiguate(p.Server, p.Name, func(n string) bool { return taken[n] })
		}
		taken[out[i].Ref] = true
	}
	return out, ctx.Err()
}

// Resources returns the resources of every connected server that offers
// resources.
func (m *Manager) Resources(ctx context.Context) ([]ServerResource, error) {
	servers, err := m.connected(ctx)
	if err != nil {
		return nil, err
	}
	var out []ServerResource
	for _, s := range servers {
		c, err := m.wait(ctx, s)
		if err != nil || c.InitializeResult().Capabilities.Resources == nil {
			continue
		}
		resources, err := c.Resources(ctx)
		if err != nil {
			m.logger.Warn("mcp: could not list resources", "server", s.name, "err", err)
			continue
		}
		for _, r := range resources {
			out = append(out, ServerResource{Resource: r, Server: s.name, Ref: ExposedResource(s.name, r.URI)})
		}
	}
	return out, ctx.Err()
}

// ResourceTemplates returns the resource templates of every connected
// server that offers resources.
func (m *Manager) ResourceTemplates(ctx context.Context) ([]ServerResourceTemplate, error) {
	servers, err := m.connected(ctx)
	if err != nil {
		return nil, err
	}
	var out []ServerResourceTemplate
	for _, s := range servers {
		c, err := m.wait(ctx, s)
		if err != nil || c.InitializeResult().Capabilities.Resources == nil {
			continue
		}
		templates, err := c.ResourceTemplates(ctx)
		if err != nil {
			m.logger.Warn("mcp: could not list resource templates", "server", s.name, "err", err)
			continue
		}
		for _, t := range templates {
			out = append(out, ServerResourceTemplate{ResourceTemplate: t, Server: s.name, Ref: ExposedResource(s.name, t.URITemplate)})
		}
	}
	return out, ctx.Err()
}

// GetPrompt fills in the prompt named ref (mcp__<server>__<prompt>, as
// Prompts gives it) with args, on its server.
func (m *Manager) GetPrompt(ctx context.Context, ref string, args map[string]string) (*GetPromptResult, error) {
	c, name, err := m.promptRoute(ctx, ref)
	if err != nil {
		return nil, err
	}
	return c.GetPrompt(ctx, &GetPromptParams{Name: name, Arguments: args})
}

// ReadResource reads the resource named ref (@<server>:<uri>) on its
// server.
func (m *Manager) ReadResource(ctx context.Context, ref string) (*ReadResourceResult, error) {
	c, uri, err := m.resourceRoute(ctx, ref)
	if err != nil {
		return nil, err
	}
	return c.ReadResource(ctx, &ReadResourceParams{URI: uri})
}

// Subscribe and Unsubscribe ask the server of the resource ref
// (@<server>:<uri>) for its updates (see Connection.Subscribe); they reach
// the ResourceUpdated handler of that server's Options.
func (m *Manager) Subscribe(ctx context.Context, ref string) error {
	c, uri, err := m.resourceRoute(ctx, ref)
	if err != nil {
		return err
	}
	return c.Subscribe(ctx, &SubscribeParams{URI: uri})
}

// Unsubscribe: see Subscribe.
func (m *Manager) Unsubscribe(ctx context.Context, ref string) error {
	c, uri, err := m.resourceRoute(ctx, ref)
	if err != nil {
		return err
	}
	return c.Unsubscribe(ctx, &SubscribeParams{URI: uri})
}

// Complete asks for completions of an argument of a prompt or resource
// template named as the Manager names them: params.Ref is
// PromptRef("mcp__<server>__<prompt>") or
// ResourceTemplateRef("@<server>:<uriTemplate>").
func (m *Manager) Complete(ctx context.Context, params *CompleteParams) (*CompleteResult, error) {
	if params == nil {
		return nil, errors.New("mcp: Complete needs params")
	}
	p := *params
	var c *Connection
	var err error
	switch p.Ref.Type {
	case "ref/prompt":
		c, p.Ref.Name, err = m.promptRoute(ctx, p.Ref.Name)
	case "ref/resource":
		c, p.Ref.URI, err = m.resourceRoute(ctx, p.Ref.URI)
	default:
		return nil, fmt.Errorf("mcp: unknown completion reference type %q", p.Ref.Type)
	}
	if err != nil {
		return nil, err
	}
	return c.Complete(ctx, &p)
}

// promptRoute finds the server and the prompt's own name of ref.
func (m *Manager) promptRoute(ctx context.Context, ref string) (*Connection, string, error) {
	prompts, err := m.Prompts(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, p := range prompts {
		if p.Ref == ref {
			c, err := m.Connection(ctx, p.Server)
			return c, p.Name, err
		}
	}
	return nil, "", fmt.Errorf("%w: prompt %q (list them with Prompts)", ErrUnknownRef, ref)
}

// resourceRoute finds the server and the URI of ref (@<server>:<uri>, as
// ExposedResource writes it): the server's name ends at the first ':'.
func (m *Manager) resourceRoute(ctx context.Context, ref string) (*Connection, string, error) {
	key, uri, ok := strings.Cut(strings.TrimPrefix(ref, "@"), ":")
	if !strings.HasPrefix(ref, "@") || !ok {
		return nil, "", fmt.Errorf("%w: %q is not @<server>:<uri>", ErrUnknownRef, ref)
	}
	name := refUnescaper.Replace(key)
	m.mu.Lock()
	_, found := m.servers[name]
	m.mu.Unlock()
	if !found {
		return nil, "", fmt.Errorf("%w: no server %q for %q", ErrUnknownRef, name, ref)
	}
	c, err := m.Connection(ctx, name)
	return c, uri, err
}
