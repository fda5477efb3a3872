package mcp

import (
	"context"
	"encoding/json"
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

// Resources returns every page of resources/list.
func (c *Connection) Resources(ctx context.Context) ([]Resource, error) {
	return collect(c.AllResources(ctx))
}

// AllResources yields the resources of resources/list, fetching each page
// only when the loop reaches it: a loop that stops early (the first
// screen of a server with 100,000 resources) fetches no more pages. An
// error ends the sequence.
func (c *Connection) AllResources(ctx context.Context) iter.Seq2[Resource, error] {
	return seq[Resource](ctx, c.pager(), "resources/list", "resources")
}

// ResourceTemplates returns every page of resources/templates/list.
func (c *Connection) ResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return collect(c.AllResourceTemplates(ctx))
}

// AllResourceTemplates is AllResources for resources/templates/list.
func (c *Connection) AllResourceTemplates(ctx context.Context) iter.Seq2[ResourceTemplate, error] {
	return seq[ResourceTemplate](ctx, c.pager(), "resources/templates/list", "resourceTemplates")
}

// ReadResource reads a resource (resources/read).
func (c *Connection) ReadResource(ctx context.Context, params *ReadResourceParams) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := c.callObject(ctx, "resources/read", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe asks the server for notifications/resources/updated of a
// resource (to Options.ResourceUpdated): resources/subscribe on a legacy
// server; on a modern one, the URI joins the filter of the connection's
// subscriptions/listen.
func (c *Connection) Subscribe(ctx context.Context, params *SubscribeParams) error {
	return c.era().subscribe(ctx, c, params, true)
}

// Unsubscribe cancels a Subscribe: resources/unsubscribe, or on a modern
// server, the URI leaves the listen filter.
func (c *Connection) Unsubscribe(ctx context.Context, params *SubscribeParams) error {
	return c.era().subscribe(ctx, c, params, false)
}
