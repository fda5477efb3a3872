package registry

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/registry/pkg/model"

	"github.com/mcplug/mcplug/mcp/config"
)

// checkURL refuses a remote's URL that is not https, or that carries
// credentials; plain http is taken only for the loopback interface
// (localhost, 127.0.0.0/8, ::1), where nothing crosses a network. A
// reference to a secret may stand in the path or query, never in the
// host.
func checkURL(u string) error {
	p, err := url.Parse(u)
	if err != nil && strings.Contains(u, "${") {
		return unsafef("its URL %q would have a secret in its host", u)
	}
	if err != nil {
		return fmt.Errorf("its URL %q is not a URL", u)
	}
	if p.User != nil {
		return unsafef("its URL %q has credentials in it, which would be sent to it in clear and logged", p.Redacted())
	}
	host := p.Hostname()
	if host == "" || strings.ContainsAny(host, "${}") {
		return unsafef("its URL %q names no host of its own", u)
	}
	switch p.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
		return unsafef("its URL %q is plain http to another host: what is sent to it (a token, the calls) crosses the network in clear; only https is installed", u)
	}
	return fmt.Errorf("its URL %q is not https", u)
}

// useRemote makes the entry of a remote.
func (b *builder) useRemote(t *model.Transport) error {
	var kind string
	switch t.Type {
	case "streamable-http":
		kind = config.TypeHTTP
	case "sse":
		kind = config.TypeSSE
	default:
		return fmt.Errorf("remote %s is of type %q, which is not installed (streamable-http and sse are)", t.URL, t.Type)
	}
	if t.URL == "" {
		return fmt.Errorf("a %s remote has no URL", t.Type)
	}
	what := "remote " + t.URL
	// The URL's {variables} are the transport's.
	ut, err := b.template(what+"'s URL", "variable", "url", model.InputWithVariables{Input: model.Input{Value: t.URL}, Variables: t.Variables})
	if err != nil {
		return err
	}
	// The URL with a value in each variable, a reference for a secret:
	// only the answers are left to check.
	var sample strings.Builder
	for _, p := range ut {
		switch {
		case p.slot == nil:
			sample.WriteString(p.text)
		case p.slot.secret:
			sample.WriteString("${SECRET}")
		default:
			sample.WriteString("x")
		}
	}
	if err := checkURL(sample.String()); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	headers, err := b.keyValues(what, "header", t.Headers, func(n string) bool { return headerToken.MatchString(n) })
	if err != nil {
		return err
	}
	b.source = fmt.Sprintf("remote %s (%s)", t.URL, t.Type)
	b.entry = func() (*config.Server, error) {
		// A value in the URL is escaped as a path segment is (an
		// optional one left empty is ""); a secret's reference is not.
		u, _, _, err := ut.fillEscaped("the URL", true, url.PathEscape)
		if err != nil {
			return nil, err
		}
		if err := checkURL(u); err != nil {
			return nil, &answerError{fmt.Sprintf("the remote's URL: %v", err)}
		}
		h, err := headers()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 {
			h = nil
		}
		return &config.Server{Type: kind, URL: u, Headers: h}, nil
	}
	return nil
}
