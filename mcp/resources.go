package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
)

// Resource is a resource a server offers (resources/list).
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceTemplate describes resources by a URI template
// (resources/templates/list).
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ListResourcesResult is one page of resources/list.
type ListResourcesResult struct {
	Resources  []Resource
	NextCursor string
	CacheHints // ttlMs and cacheScope, from a 2026-07-28 server
}

// ListResourceTemplatesResult is one page of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate
	NextCursor        string
	CacheHints        // ttlMs and cacheScope, from a 2026-07-28 server
}

// ReadResourceParams are the parameters of resources/read.
type ReadResourceParams struct {
	URI  string          `json:"uri"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read: text contents (Text
// set) and binary ones (Blob set, base64).
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     json.RawMessage    `json:"_meta,omitempty"`
	CacheHints
}

// SubscribeParams are the parameters of resources/subscribe and
// resources/unsubscribe.
type SubscribeParams struct {
	URI string `json:"uri"`
}

// ListResources fetches one page of resources/list.
func (c *Connection) ListResources(ctx context.Context, params *ListParams) (*ListResourcesResult, error) {
	p, err := listPage[Resource](ctx, c, "resources/list", "resources", params)
	if err != nil {
		return nil, err
	}
	return &ListResourcesResult{Resources: p.Items, NextCursor: p.NextCursor, CacheHints: p.CacheHints}, nil
}

// ResourcesSeq yields every resource, fetching pages as it goes.
func (c *Connection) ResourcesSeq(ctx context.Context) iter.Seq2[Resource, error] {
	return seq[Resource](ctx, c, "resources/list", "resources")
}

// Resources returns every page of resources/list.
func (c *Connection) Resources(ctx context.Context) ([]Resource, error) {
	return collect(c.ResourcesSeq(ctx))
}

// ListResourceTemplates fetches one page of resources/templates/list.
func (c *Connection) ListResourceTemplates(ctx context.Context, params *ListParams) (*ListResourceTemplatesResult, error) {
	p, err := listPage[ResourceTemplate](ctx, c, "resources/templates/list", "resourceTemplates", params)
	if err != nil {
		return nil, err
	}
	return &ListResourceTemplatesResult{ResourceTemplates: p.Items, NextCursor: p.NextCursor, CacheHints: p.CacheHints}, nil
}

// ResourceTemplatesSeq yields every resource template.
func (c *Connection) ResourceTemplatesSeq(ctx context.Context) iter.Seq2[ResourceTemplate, error] {
	return seq[ResourceTemplate](ctx, c, "resources/templates/list", "resourceTemplates")
}

// ResourceTemplates returns every page of resources/templates/list.
func (c *Connection) ResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return collect(c.ResourceTemplatesSeq(ctx))
}

// ReadResource reads a resource (resources/read).
func (c *Connection) ReadResource(ctx context.Context, params *ReadResourceParams) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := c.callObject(ctx, "resources/read", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe asks the server to send notifications/resources/updated for
// a resource; Options.ResourceUpdated receives them. A legacy server is
// sent resources/subscribe; on a modern one, which removed it, the URI
// joins the filter of the Connection's subscriptions/listen, which is
// opened again with it.
func (c *Connection) Subscribe(ctx context.Context, params *SubscribeParams) error {
	return c.era().subscribe(ctx, c, params, true)
}

// Unsubscribe cancels a Subscribe: resources/unsubscribe, or on a modern
// server, the URI leaves the listen filter.
func (c *Connection) Unsubscribe(ctx context.Context, params *SubscribeParams) error {
	return c.era().subscribe(ctx, c, params, false)
}

func (c *Connection) subscribe(ctx context.Context, params *SubscribeParams, on bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if params == nil || params.URI == "" {
		return errors.New("mcp: Subscribe needs a URI")
	}
	if c.ended() {
		return &closedError{cause: c.getCause()}
	}
	c.listen.mu.Lock()
	if c.listen.uris == nil {
		c.listen.uris = map[string]bool{}
	}
	if on {
		c.listen.uris[params.URI] = true
	} else {
		delete(c.listen.uris, params.URI)
	}
	c.listen.mu.Unlock()
	c.era().listen(c)
	return nil
}
