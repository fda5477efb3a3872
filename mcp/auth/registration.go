package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"

	"github.com/mcplug/mcplug/internal/redact"
)

// registration is a client id at one authorization server, and how it
// authenticates at the token endpoint.
type registration struct {
	Issuer       string `json:"issuer"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"token_endpoint_auth_method"` // client_secret_basic, client_secret_post or none

	dynamic bool // made by dynamic registration (now, or stored from before)
	stored  bool // taken from the Store, not made now
}

func (r *registration) style() oauth2.AuthStyle {
	if r.AuthMethod == "client_secret_basic" {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// secret is the secret sent to the token endpoint: none for a public
// client, whatever the registration returned.
func (r *registration) secret() string {
	if r.AuthMethod == "none" {
		return ""
	}
	return r.ClientSecret
}

// register picks the client id for the authorization server md, in the
// spec's order: the pre-registered client (when it is not bound to another
// issuer), the client ID metadata document (when the server takes them),
// a registration stored for this issuer, a new dynamic registration.
// Credentials are never carried from one issuer to another.
func (c *Client) register(ctx context.Context, md *serverMetadata) (*registration, error) {
	cfg := &c.cfg
	if cfg.ClientID != "" && (cfg.Issuer == "" || cfg.Issuer == md.Issuer) {
		return &registration{Issuer: md.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			AuthMethod: secretMethod(md, cfg.ClientSecret != "")}, nil
	}
	if cfg.ClientIDMetadataURL != "" && md.ClientIDMetadataDocumentSupported {
		return &registration{Issuer: md.Issuer, ClientID: cfg.ClientIDMetadataURL, AuthMethod: "none"}, nil
	}
	key := "client " + md.Issuer
	if b, err := cfg.Store.Load(ctx, key); err == nil && b != nil {
		var r registration
		if json.Unmarshal(b, &r) == nil && r.ClientID != "" && r.Issuer == md.Issuer {
			r.dynamic, r.stored = true, true
			return &r, nil
		}
	}
	if md.RegistrationEndpoint != "" {
		r, err := c.registerDynamically(ctx, md)
		if err != nil {
			return nil, err
		}
		r.dynamic = true
		b, _ := json.Marshal(r)
		if err := cfg.Store.Save(ctx, key, b); err != nil {
			c.logger().Warn("mcp: auth: token store", "err", err)
		}
		return r, nil
	}
	if cfg.ClientID != "" {
		return nil, fmt.Errorf("%w: the pre-registered client is for %s, and the server now uses %s", ErrNoRegistration, redact.URL(cfg.Issuer), redact.URL(md.Issuer))
	}
	return nil, fmt.Errorf("%w %s", ErrNoRegistration, redact.URL(md.Issuer))
}

// secretMethod is how a client with or without a secret authenticates at
// md's token endpoint: basic unless the server takes only post.
func secretMethod(md *serverMetadata, hasSecret bool) string {
	methods := md.TokenEndpointAuthMethodsSupported
	switch {
	case !hasSecret:
		return "none"
	case len(methods) == 0 || slices.Contains(methods, "client_secret_basic"):
		return "client_secret_basic"
	case slices.Contains(methods, "client_secret_post"):
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// registerDynamically registers with RFC 7591, as a public client where
// the server allows it.
func (c *Client) registerDynamically(ctx context.Context, md *serverMetadata) (*registration, error) {
	method := "client_secret_basic"
	switch methods := md.TokenEndpointAuthMethodsSupported; {
	case slices.Contains(methods, "none"):
		method = "none"
	case len(methods) > 0 && !slices.Contains(methods, "client_secret_basic") && slices.Contains(methods, "client_secret_post"):
		method = "client_secret_post"
	}
	name := c.cfg.ClientName
	if name == "" {
		name = "mcplug"
	}
	body := map[string]any{
		"client_name":                name,
		"redirect_uris":              []string{c.cfg.RedirectURL},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           applicationType(c.cfg.RedirectURL),
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: registration: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: registration: %w", redact.Err(err))
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata))
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: registration: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(out, &e) == nil && e.Error != "" {
			return nil, &AuthorizationError{Endpoint: "registration", Code: e.Error, Description: e.Description}
		}
		return nil, fmt.Errorf("mcp: auth: registration: %s", resp.Status)
	}
	var r registration
	if err := json.Unmarshal(out, &r); err != nil || r.ClientID == "" {
		return nil, fmt.Errorf("mcp: auth: registration: no client_id in the answer")
	}
	r.Issuer = md.Issuer
	if r.AuthMethod == "" {
		r.AuthMethod = method
	}
	if r.ClientSecret == "" && r.AuthMethod != "none" {
		r.AuthMethod = "none"
	}
	c.logger().Debug("mcp: auth: registered", "issuer", md.Issuer, "method", r.AuthMethod)
	return &r, nil
}

// applicationType is "native" for a redirect to this machine (a loopback
// address or localhost, or a custom scheme) and "web" otherwise (SEP-837).
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return "native"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "native"
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return "native"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "native"
	}
	return "web"
}

// resourceTransport adds the resource parameter to refresh requests at the
// token endpoint, which golang.org/x/oauth2 sends without it.
type resourceTransport struct {
	base     http.RoundTripper
	tokenURL string
	resource string
}

func (t *resourceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.URL.String() != t.tokenURL || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if form, err := url.ParseQuery(string(b)); err == nil && form.Get("grant_type") == "refresh_token" && form.Get("resource") == "" {
		form.Set("resource", t.resource)
		b = []byte(form.Encode())
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return t.base.RoundTrip(r)
}
