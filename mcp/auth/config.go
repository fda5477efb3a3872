package auth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
)

// Config configures the authorization of one MCP server. Only ServerURL is
// required; Browser is needed for a user's authorization.
type Config struct {
	// ServerURL is the MCP server's URL, the transport's. Tokens are sent
	// to its origin only.
	ServerURL string

	// ClientID and ClientSecret are a pre-registered client (ClientSecret
	// empty for a public client). Issuer, if set, binds them, and the
	// credentials of Grant, to that authorization server: a server that
	// names another gets no secret, assertion or workload token (the
	// pre-registered client is not used; a Grant fails with an
	// *IssuerMismatchError before any request to it).
	ClientID     string
	ClientSecret string
	Issuer       string

	// Scopes are asked for beside those the server names (the challenge's,
	// or the resource metadata's).
	Scopes []string

	// ClientIDMetadataURL is the https URL of the program's client ID
	// metadata document, used as the client id where the authorization
	// server supports such documents; the document must list RedirectURL.
	ClientIDMetadataURL string

	// ClientName names the program in a dynamic registration; "" means
	// "mcplug".
	ClientName string

	// RedirectURL is where the authorization server sends the user back,
	// served by Browser (for example a Loopback's RedirectURL).
	RedirectURL string

	// Browser takes the user to authURL and returns the URL the
	// authorization server redirected back to (RedirectURL with code,
	// state and iss). Nil means no user is there: only stored tokens and
	// their refresh can be used, and a server that asks for more fails
	// with ErrNoBrowser.
	Browser func(ctx context.Context, authURL string) (*url.URL, error)

	// Grant, if set, obtains tokens without a user, in place of the
	// authorization code flow: a *ClientCredentials, *JWTBearer or
	// *EnterpriseManaged (the authorization extensions). Registration and
	// Browser are not used then.
	Grant Grant

	// DPoP asks for tokens bound to a key of the Client's (RFC 9449)
	// where the authorization server supports DPoP with ES256: each token
	// request and each request to the server carries a fresh proof, and
	// server nonces are honoured. The key is made by New, and stored with
	// the tokens bound to it: a Client that loads them uses their key.
	DPoP bool

	// Store keeps registrations and tokens, a Grant's too (keyed by its
	// kind and client id); nil means a MemoryStore.
	Store Store

	// HTTPClient makes the metadata, registration and token requests; nil
	// means a client with a 30-second timeout.
	HTTPClient *http.Client

	// Logger gets what the flow does at Debug (never a token or secret);
	// nil means slog.Default().
	Logger *slog.Logger
}
