package auth

import (
	"errors"
	"fmt"

	"github.com/mcplug/mcplug/internal/redact"
)

// Errors of the authorization flow; match them with errors.Is.
var (
	// ErrNoBrowser: the server needs a user's sign-in and Config has no
	// Browser to ask for it (Client.SignIn takes one). It has an
	// AuthorizationRequired method, by which package mcp's Manager shows
	// the server as needing authorization.
	ErrNoBrowser error = &requiredError{"mcp: auth: the server needs a sign-in and no Browser is configured"}
	// ErrNoPKCE: the authorization server does not support PKCE with S256.
	ErrNoPKCE = errors.New("mcp: auth: the authorization server does not support PKCE (S256)")
	// ErrNoRegistration: there is no way to get a client id from the
	// authorization server (no pre-registered client for it, no client ID
	// metadata document, no dynamic registration).
	ErrNoRegistration = errors.New("mcp: auth: no way to register with the authorization server")
	// ErrStateMismatch: the authorization response's state is not the
	// request's.
	ErrStateMismatch = errors.New("mcp: auth: the authorization response's state does not match")
	// ErrNoMetadata: neither protected resource metadata nor authorization
	// server metadata could be found.
	ErrNoMetadata = errors.New("mcp: auth: no usable authorization server metadata")
	// ErrInsecure: an authorization server, or one of its endpoints, is on
	// plain http and not on this machine (a loopback address), or a
	// metadata URL or redirect leaves the origin it must stay on.
	ErrInsecure = errors.New("mcp: auth: refused an insecure authorization URL")
)

// requiredError is an error that a sign-in would cure.
type requiredError struct{ msg string }

func (e *requiredError) Error() string { return e.msg }

// AuthorizationRequired reports true: a sign-in would cure the error.
func (e *requiredError) AuthorizationRequired() bool { return true }

// ResourceMismatchError reports protected resource metadata whose
// resource is not the MCP server the client talks to: the client stops
// rather than get a token for another resource. Its text redacts the
// URLs' secrets (query values, passwords); the fields hold them as given.
type ResourceMismatchError struct {
	Resource  string // the metadata's resource
	ServerURL string // the server's URL
}

func (e *ResourceMismatchError) Error() string {
	return fmt.Sprintf("mcp: auth: protected resource metadata names resource %q, not the server %q", redact.URL(e.Resource), redact.URL(e.ServerURL))
}

// IssuerMismatchError reports an issuer that is not the one expected: in
// authorization server metadata (Where "metadata"), or in the iss of an
// authorization response (Where "authorization response"; Got is "" when
// the server promised iss and sent none). The client does not use what
// came with it.
type IssuerMismatchError struct {
	Where     string
	Want, Got string
}

func (e *IssuerMismatchError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("mcp: auth: the %s has no issuer, expected %q", e.Where, redact.URL(e.Want))
	}
	return fmt.Sprintf("mcp: auth: the %s names issuer %q, expected %q", e.Where, redact.URL(e.Got), redact.URL(e.Want))
}

// AuthorizationError is an error the authorization server answered with
// (RFC 6749 sections 4.1.2.1 and 5.2): at the authorization endpoint, the
// token endpoint or the registration endpoint.
type AuthorizationError struct {
	Endpoint    string // "authorization", "token" or "registration"
	Code        string // the error code, such as "access_denied"
	Description string
}

func (e *AuthorizationError) Error() string {
	if e.Description == "" {
		return fmt.Sprintf("mcp: auth: %s endpoint: %s", e.Endpoint, e.Code)
	}
	return fmt.Sprintf("mcp: auth: %s endpoint: %s: %s", e.Endpoint, e.Code, e.Description)
}
