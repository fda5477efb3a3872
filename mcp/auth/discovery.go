package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/internal/origin"
	"github.com/mcplug/mcplug/internal/redact"
)

// maxMetadata bounds a metadata document or a token endpoint answer.
const maxMetadata = 1 << 20

// resourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414) or
// an OpenID Provider configuration.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	DPoPSigningAlgValuesSupported     []string `json:"dpop_signing_alg_values_supported"`
	TokenEndpointAuthSigningAlgValues []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	// SubjectTypesSupported and IDTokenSigningAlgValues are required of an
	// OpenID provider's discovery document: they tell one.
	SubjectTypesSupported   []string `json:"subject_types_supported"`
	IDTokenSigningAlgValues []string `json:"id_token_signing_alg_values_supported"`
	legacyDefaults          bool     // no metadata: the 2025-03-26 default endpoints
}

// getJSON fetches u and decodes a JSON document of at most maxMetadata
// bytes; found is false for a 4xx answer (the document is not there).
func (c *Client) getJSON(ctx context.Context, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		return false, redact.Err(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 4 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("mcp: auth: GET %s: %s", redact.URL(u), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return false, err
	}
	if len(b) > maxMetadata {
		return false, fmt.Errorf("mcp: auth: GET %s: more than %d bytes", redact.URL(u), maxMetadata)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("mcp: auth: GET %s: %w", redact.URL(u), err)
	}
	return true, nil
}

// discoverResource finds the server's protected resource metadata: at the
// challenge's resource_metadata URL, else at the path-based well-known
// URL, else at the root one. It returns nil and no error when there is
// none (a server of the 2025-03-26 revision). Metadata whose resource is
// not this server is an error.
func (c *Client) discoverResource(ctx context.Context, ch challenge) (*resourceMetadata, error) {
	server, err := url.Parse(c.cfg.ServerURL)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: server URL: %w", err)
	}
	var candidates []string
	if ch.resourceMetadata != "" {
		u, err := server.Parse(ch.resourceMetadata)
		if err != nil || originOf(u) != originOf(server) {
			// The server's own metadata is on its origin; a challenge
			// pointing elsewhere is not followed.
			c.logger().Warn("mcp: auth: resource_metadata on another origin; not followed", "url", redact.URL(ch.resourceMetadata))
		} else {
			candidates = append(candidates, u.String())
		}
	}
	root := server.Scheme + "://" + server.Host + "/.well-known/oauth-protected-resource"
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, root+p)
	}
	candidates = append(candidates, root)
	for _, u := range candidates {
		var md resourceMetadata
		found, err := c.getJSON(ctx, u, &md)
		if err != nil || !found {
			if err != nil {
				c.logger().Debug("mcp: auth: protected resource metadata", "url", redact.URL(u), "err", err)
			}
			continue
		}
		if !covers(md.Resource, server) {
			return nil, &ResourceMismatchError{Resource: md.Resource, ServerURL: c.cfg.ServerURL}
		}
		return &md, nil
	}
	return nil, nil
}

// covers reports whether resource identifies the server at u: the same
// scheme, host and port, and a path that is u's or a parent of it.
func covers(resource string, u *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" || r.Scheme == "" || r.Host == "" {
		return false
	}
	if originOf(r) != originOf(u) {
		return false
	}
	rp, up := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(u.Path, "/")
	return rp == "" || rp == up || strings.HasPrefix(up, rp+"/")
}

// originOf is u's origin (scheme, host and port).
func originOf(u *url.URL) string { return origin.Of(u) }

// discoverServer fetches the metadata of the authorization server issuer,
// at the well-known URLs in the order the spec gives, and keeps the first
// document whose issuer is issuer exactly. With fallback set (a server
// without protected resource metadata, 2025-03-26), an issuer without
// metadata gets the default endpoints /authorize, /token and /register.
func (c *Client) discoverServer(ctx context.Context, issuer string, fallback bool) (*serverMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("mcp: auth: authorization server %q is not a URL", redact.URL(issuer))
	}
	if err := c.secureServer(issuer); err != nil {
		return nil, err
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	var candidates []string
	if path == "" {
		candidates = []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	} else {
		candidates = []string{
			origin + "/.well-known/oauth-authorization-server" + path,
			origin + "/.well-known/openid-configuration" + path,
			origin + path + "/.well-known/openid-configuration",
		}
	}
	var mismatch error
	for _, cand := range candidates {
		var md serverMetadata
		found, err := c.getJSON(ctx, cand, &md)
		if err != nil || !found {
			if err != nil {
				c.logger().Debug("mcp: auth: authorization server metadata", "url", redact.URL(cand), "err", err)
			}
			continue
		}
		if md.Issuer != issuer {
			mismatch = &IssuerMismatchError{Where: "authorization server metadata", Want: issuer, Got: md.Issuer}
			c.logger().Warn("mcp: auth: authorization server metadata names another issuer; not used", "url", redact.URL(cand), "issuer", redact.URL(md.Issuer), "expected", redact.URL(issuer))
			continue
		}
		if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" {
			continue
		}
		for _, e := range []string{md.AuthorizationEndpoint, md.TokenEndpoint, md.RegistrationEndpoint} {
			if e == "" {
				continue
			}
			if err := c.secureServer(e); err != nil {
				return nil, err
			}
		}
		return &md, nil
	}
	if mismatch != nil {
		return nil, mismatch
	}
	if fallback {
		return &serverMetadata{
			Issuer:                        issuer,
			AuthorizationEndpoint:         origin + "/authorize",
			TokenEndpoint:                 origin + "/token",
			RegistrationEndpoint:          origin + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
			legacyDefaults:                true,
		}, nil
	}
	return nil, fmt.Errorf("%w for %s", ErrNoMetadata, redact.URL(issuer))
}

// secure refuses an authorization URL that is not https, unless it is on
// this machine (localhost or a loopback address), where http is allowed.
func secure(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: %q is not an absolute URL", ErrInsecure, redact.URL(raw))
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%w: %s is not https", ErrInsecure, redact.URL(raw))
}

// secureServer is secure for a URL the MCP server's metadata led to: a
// server that is not on this machine cannot send the client (and a
// client secret) to plain http or to this machine's own services.
func (c *Client) secureServer(raw string) error {
	if err := secure(raw); err != nil {
		return err
	}
	server, _ := url.Parse(c.cfg.ServerURL)
	u, _ := url.Parse(raw)
	if server != nil && !loopback(server.Hostname()) && loopback(u.Hostname()) {
		return fmt.Errorf("%w: the remote server %s names %s on this machine", ErrInsecure, redact.URL(c.cfg.ServerURL), redact.URL(raw))
	}
	return nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openID reports whether the authorization server is an OpenID provider,
// which grants offline_access only with prompt=consent (OpenID Connect
// Core 1.0, section 11).
func (md *serverMetadata) openID() bool {
	return len(md.SubjectTypesSupported) > 0 || len(md.IDTokenSigningAlgValues) > 0
}

// checkPKCE refuses an authorization server without S256.
func (md *serverMetadata) checkPKCE() error {
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return ErrNoPKCE
	}
	return nil
}
