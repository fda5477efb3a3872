package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/mcplug/mcplug/internal/httpstream"
	"github.com/mcplug/mcplug/internal/latelog"
	"github.com/mcplug/mcplug/internal/origin"
	"github.com/mcplug/mcplug/internal/redact"
)

// newHTTPConfig fills in the defaults (the origin's shared client, see
// acquireClient, and slog.Default()), sends the client's requests through
// auth when it is set, and makes the client follow redirects only within
// rawURL's origin. The config's Release gives the shared client back.
func newHTTPConfig(rawURL string, client *http.Client, auth Authorizer, headers http.Header, headerFunc func(context.Context) (http.Header, error), logger *slog.Logger, max int) httpstream.Config {
	var late *latelog.Target
	if logger == nil {
		logger, late = latelog.New()
	}
	o := ""
	u, err := parseURL(rawURL)
	if err == nil {
		o = originOf(u)
	} else {
		u = nil
	}
	var streams *http.Client
	var direct *http.Transport
	var release func()
	switch {
	case client == nil && auth == nil:
		var oc *originClient
		oc, release = acquireClient(o)
		client, streams, direct = oc.samePosts, oc.sameStreams, oc.posts.Transport.(*http.Transport)
	case client == nil:
		var oc *originClient
		oc, release = acquireClient(o)
		client = sameOriginClient(withAuthorizer(oc.posts, auth), o)
		streams = sameOriginClient(withAuthorizer(oc.streams, auth), o)
	case auth != nil:
		client = sameOriginClient(withAuthorizer(client, auth), o)
	default:
		client = sameOriginClient(client, o)
	}
	return httpstream.Config{
		URL: rawURL, Parsed: u, Client: client, Direct: direct, StreamClient: streams, Release: release,
		Headers: headers, HeaderFunc: headerFunc, Logger: logger, Late: late, MaxMessageSize: max, Errors: &httpErrors,
	}
}

// parsedURLs are the servers' URLs parsed, shared by the connections to
// each (nobody writes to them): at most maxParsedURLs are kept.
var parsedURLs struct {
	sync.Mutex
	m map[string]*url.URL
}

const maxParsedURLs = 256

// parseURL is url.Parse, of a URL parsed once for all the connections to
// it.
func parseURL(raw string) (*url.URL, error) {
	parsedURLs.Lock()
	defer parsedURLs.Unlock()
	if u, ok := parsedURLs.m[raw]; ok {
		return u, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if parsedURLs.m == nil || len(parsedURLs.m) >= maxParsedURLs {
		parsedURLs.m = map[string]*url.URL{}
	}
	parsedURLs.m[raw] = u
	return u, nil
}

// httpErrors are this package's errors, as the HTTP streams report them.
var httpErrors = httpstream.Errors{
	Closed:    ErrClosed,
	BadResult: ErrBadResult,
	TooLarge:  func(size int64, max int) error { return &MessageTooLargeError{Size: size, Max: max} },
	Status: func(resp *http.Response, body []byte) error {
		return &HTTPStatusError{StatusCode: resp.StatusCode, Body: string(body), Header: resp.Header.Clone()}
	},
}

// sameOriginClient returns a copy of c that refuses redirects leaving
// origin: a redirect to another origin would carry the config's headers,
// the session id and the message body (tool arguments) to a stranger. The
// caller's own redirect policy still applies within the origin.
func sameOriginClient(c *http.Client, origin string) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if o := originOf(req.URL); o != origin {
			return &RedirectError{From: redact.URL(via[len(via)-1].URL.String()), To: redact.URL(req.URL.String())}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("mcp: stopped after 10 redirects")
		}
		return nil
	}
	return &cc
}

// RedirectError reports a redirect the HTTP transports refused to follow
// because it leaves the server's origin (scheme, host and port). URLs are
// redacted.
type RedirectError struct {
	From, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("mcp: refused a redirect from %s to another origin (%s)", e.From, e.To)
}

// originOf is u's origin (scheme, host and port).
func originOf(u *url.URL) string { return origin.Of(u) }

// urlPeer describes the server at a URL: tcp, its host (an IP in its
// canonical form) and port (the scheme's when the URL has none).
func urlPeer(raw string) (network, address string, port int) {
	network = "tcp"
	if u, err := url.Parse(raw); err == nil {
		address = u.Hostname()
		if p, err := strconv.Atoi(u.Port()); err == nil {
			port = p
		} else if u.Scheme == "https" {
			port = 443
		} else if u.Scheme == "http" {
			port = 80
		}
		if ip := net.ParseIP(address); ip != nil {
			address = ip.String()
		}
	}
	return network, address, port
}
