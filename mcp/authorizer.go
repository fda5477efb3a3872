package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
)

// Authorizer authorizes the requests of an HTTP transport, as the MCP
// authorization spec describes for remote servers: package
// github.com/mcplug/mcplug/mcp/auth implements it with OAuth 2.1. Its
// methods may be called from several goroutines at once.
type Authorizer interface {
	// Authorize sets the credentials of a request to the server (its
	// Authorization header), when it has some. An error fails the request.
	Authorize(ctx context.Context, req *http.Request) error

	// Challenged is called with a 401 or 403 answer to req: retry when it
	// obtained new credentials; false and nil lets the answer through (an
	// *HTTPStatusError); an error fails the request.
	Challenged(ctx context.Context, req *http.Request, resp *http.Response) (retry bool, err error)
}

// An Authorizer may offer more, which the Manager looks for (package
// mcp/auth's Client offers both):

// A SignInAuthorizer signs the user in through browser, which takes them
// to the authorization URL and returns the redirect it got: Manager.SignIn
// needs one.
type SignInAuthorizer interface {
	Authorizer
	SignIn(ctx context.Context, browser func(ctx context.Context, authURL string) (*url.URL, error)) error
}

// A MethodAuthorizer says how it obtains credentials, for
// ServerStatus.Auth ("authorization code", say). It never holds a secret.
type MethodAuthorizer interface {
	Authorizer
	Method() string
}

// An Authorizer's error that has the method AuthorizationRequired() bool
// and returns true says that signing in would cure it: the Manager's
// server is then in StateNeedsAuthorization.

// AuthorizerError reports that a request's Authorizer failed: it could not
// authorize the request, or could not obtain credentials after a 401 or
// 403. Err is the Authorizer's error (for package mcp/auth, its typed
// errors).
type AuthorizerError struct{ Err error }

func (e *AuthorizerError) Error() string { return "mcp: authorization: " + e.Err.Error() }

func (e *AuthorizerError) Unwrap() error { return e.Err }

// authorizationFailed reports whether err is an Authorizer's, or a 401 or
// 403 answer: failures that another handshake would only repeat.
func authorizationFailed(err error) bool {
	var ae *AuthorizerError
	var status *HTTPStatusError
	return errors.As(err, &ae) || errors.As(err, &status) && (status.StatusCode == http.StatusUnauthorized || status.StatusCode == http.StatusForbidden)
}

// maxAuthRetries bounds how often one request is sent again after new
// credentials: a first authorization, then one step up of its scopes.
const maxAuthRetries = 2

// authTransport sends requests with an Authorizer's credentials, and sends
// a request again when a 401 or 403 made the Authorizer obtain new ones.
type authTransport struct {
	base http.RoundTripper
	auth Authorizer
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		r := req.Clone(ctx)
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		if err := t.auth.Authorize(ctx, r); err != nil {
			return nil, &AuthorizerError{Err: err}
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) || attempt == maxAuthRetries {
			return resp, err
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return resp, nil // cannot be sent again
		}
		retry, err := t.auth.Challenged(ctx, r, resp)
		if err != nil || !retry {
			if err != nil {
				resp.Body.Close()
				return nil, &AuthorizerError{Err: err}
			}
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

// withAuthorizer returns a copy of c whose requests go through a.
func withAuthorizer(c *http.Client, a Authorizer) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &authTransport{base: base, auth: a}
	return &cc
}
