// Package auth is the client side of MCP authorization: OAuth 2.1 for
// remote MCP servers, as the 2025-11-25 and 2026-07-28 revisions of the
// spec describe it. It does not import package mcp; a *Client plugs into
// the Auth field of mcp.StreamableHTTPTransport or mcp.SSETransport (it
// satisfies mcp.Authorizer), and into the Manager through
// ManagerOptions.Authorizer.
//
//	lb, err := auth.NewLoopback("127.0.0.1:0", "/callback", auth.OpenBrowser)
//	a := auth.New(&auth.Config{
//		ServerURL:   "https://mcp.example.com/mcp",
//		RedirectURL: lb.RedirectURL(),
//		Browser:     lb.Browser,
//		Store:       store, // auth.NewFileStore("") keeps tokens across runs
//	})
//	t := &mcp.StreamableHTTPTransport{URL: "https://mcp.example.com/mcp", Auth: a}
//
// # The flow
//
// Nothing happens before the server answers 401. Then, in order:
//
//   - Discovery: the challenge's resource_metadata (WWW-Authenticate), else
//     the path-based, then the root well-known URL of the server's
//     Protected Resource Metadata (RFC 9728), whose resource must be the
//     server (or a parent path on its origin), or the flow stops with a
//     *ResourceMismatchError. The first authorization server it names is
//     asked for its metadata (RFC 8414 with path insertion, then OpenID
//     discovery), whose issuer must be the one asked for
//     (*IssuerMismatchError) and which must support PKCE with S256
//     (ErrNoPKCE). A server without resource metadata (2025-03-26) is its
//     own authorization server: its root metadata, else /authorize,
//     /token and /register.
//   - Registration, in the spec's order: the pre-registered client
//     (Config.ClientID; bound to Config.Issuer when set), the client ID
//     metadata document (Config.ClientIDMetadataURL) where the server
//     supports them, a registration stored for this issuer, a new dynamic
//     registration (RFC 7591, with application_type). Registrations are
//     kept per issuer: a server that moves to another authorization
//     server gets a new one.
//   - Authorization code with PKCE (S256), state and the resource
//     parameter (RFC 8707), through Config.Browser (NewLoopback,
//     PastedRedirect, or the program's own); the response's iss is
//     checked against the issuer (RFC 9207) before the code is used. The
//     token request authenticates as registered (client_secret_basic,
//     client_secret_post or none) and carries the resource too.
//   - Scopes: the challenge's, else the resource metadata's
//     scopes_supported, else none; offline_access is added when the
//     authorization server offers it. A 403 with insufficient_scope asks
//     again for the union of the scopes held and those challenged, never
//     twice for one set and at most 3 times in a Client's life.
//
// Without a Browser a Client uses only stored tokens and their refresh;
// a server that needs more fails with ErrNoBrowser, which package mcp's
// Manager shows as StateNeedsAuthorization, and SignIn signs in when the
// user chooses. Authorization servers must be on https, or on this
// machine (ErrInsecure); metadata comes from the origins it names, and
// every document or token answer is read up to 1 MiB.
//
// Tokens go only to the server's origin. They are refreshed (with the
// resource parameter) 30 seconds before they expire, or half their life
// when that is shorter, and on a 401; a refresh the authorization server
// refuses falls back to a new authorization, one that cannot reach it
// keeps the grant. A dynamic registration the server no longer knows
// (invalid_client; an authorization server that keeps them in memory
// forgets them when it restarts) is made again, once. The Store keeps registrations
// and tokens (keyed by issuer, resource and client; a Grant's are kept
// too, so a restart does not ask for a new one): MemoryStore for the
// program's life, FileStore for the user's config directory (mode 0600).
//
// # Concurrency
//
// A Client may serve many requests at once. One discovery or authorization
// runs at a time; a request that meets a 401 while another request is
// renewing the token waits, then goes again with the new one.
package auth
