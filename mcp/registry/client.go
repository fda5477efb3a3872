package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"

	"github.com/mcplug/mcplug/internal/redact"
)

// Client reads a registry's v0.1 API.
type Client struct {
	// BaseURL is the registry's; empty means DefaultURL.
	BaseURL string
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each request, its answer read whole (a registry
	// that sends its answer a byte at a time is given up at the same
	// moment), within the caller's ctx; zero means DefaultTimeout.
	Timeout time.Duration
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	base := c.BaseURL
	if base == "" {
		base = DefaultURL
	}
	u := strings.TrimSuffix(base, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("registry: %w", redact.Err(err))
	}
	req.Header.Set("Accept", "application/json")
	hc := noDowngrade(c.HTTPClient)
	// late names the caller's or the timeout's end, whichever came.
	late := func(err error) error {
		if ctx.Err() == nil {
			return err
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("registry: %s: no whole answer within %s: %w", redact.URL(u), timeout, ctx.Err())
		}
		return fmt.Errorf("registry: %s: %w", redact.URL(u), ctx.Err())
	}
	res, err := hc.Do(req)
	if err != nil {
		return late(fmt.Errorf("registry: %w", redact.Err(err)))
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("registry: %s: %s", redact.URL(u), res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxResponseSize+1))
	if err != nil {
		return late(fmt.Errorf("registry: %s: %w", redact.URL(u), err))
	}
	if len(b) > MaxResponseSize {
		return fmt.Errorf("registry: %s: the answer is larger than %d bytes", redact.URL(u), MaxResponseSize)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("registry: %s: %w", redact.URL(u), err)
	}
	return nil
}

// ErrDowngrade is matched by the error of a request that a registry
// reached over https redirected to plain http: what the answer says
// decides what runs, so it is not taken from a channel anyone on the path
// can rewrite.
var ErrDowngrade = errors.New("registry: a redirect from https to plain http is not followed")

// noDowngrade is hc (nil: http.DefaultClient) refusing a redirect from
// https to http; its own redirect policy applies to the rest.
func noDowngrade(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	check := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("%w (to %s)", ErrDowngrade, redact.URL(req.URL.String()))
		}
		if check != nil {
			return check(req, via)
		}
		if len(via) >= 10 {
			return errors.New("registry: stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// Search returns the latest version of the servers whose names match
// query (GET /v0.1/servers?search=), at most limit of them; each page is
// one request, bounded by the Client's Timeout.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]v0.ServerResponse, error) {
	var out []v0.ServerResponse
	cursor := ""
	for len(out) < limit {
		q := url.Values{"search": {query}, "version": {"latest"}, "limit": {fmt.Sprint(min(limit-len(out), 100))}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page v0.ServerListResponse
		if err := c.get(ctx, "/v0.1/servers", q, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Servers...)
		if page.Metadata.NextCursor == "" || page.Metadata.NextCursor == cursor || len(page.Servers) == 0 {
			break
		}
		cursor = page.Metadata.NextCursor
	}
	return out[:min(len(out), limit)], nil
}

// Get returns the server.json of a server's version ("latest" or "" for
// the latest): GET /v0.1/servers/{name}/versions/{version}.
func (c *Client) Get(ctx context.Context, name, version string) (*v0.ServerJSON, error) {
	if version == "" {
		version = "latest"
	}
	var res v0.ServerResponse
	err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &res)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w %s@%s", ErrNotFound, name, version)
	}
	if err != nil {
		return nil, err
	}
	if res.Server.Name != name {
		return nil, fmt.Errorf("registry: asked for %s, the registry answered %q", name, res.Server.Name)
	}
	return &res.Server, nil
}
