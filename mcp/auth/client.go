package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcplug/mcplug/internal/redact"
)

// maxStepUps bounds how often a Client asks for more scopes in its life;
// it never asks twice for the same set.
const maxStepUps = 3

// now is the clock of the refresh margin (tests move it).
var now = time.Now

// refreshMargin is how long before its expiry a token is refreshed, at
// most (see grant.margin).
const refreshMargin = 30 * time.Second

// Client authorizes the requests of one MCP server with OAuth 2.1, as the
// MCP authorization spec describes: it satisfies mcp.Authorizer, for the
// Auth field of mcp.StreamableHTTPTransport and mcp.SSETransport.
//
// Nothing happens until the server answers 401: then the Client discovers
// the server's authorization server, registers (or uses a pre-registered
// client), takes the user through the authorization code flow with PKCE,
// and the request is sent again with the token. Tokens are refreshed
// before they expire and on a 401; a 403 insufficient_scope asks for the
// union of the scopes. One authorization runs at a time; requests that
// fail meanwhile wait for it. A Client may be used from several goroutines
// at once.
type Client struct {
	cfg    Config
	origin string

	flow flowLock // one discovery, registration, refresh or authorization at a time

	once   sync.Once
	client *http.Client // see http

	dpop *dpopKey // nil unless Config.DPoP

	mu      sync.Mutex // guards what follows
	grant   *grant
	stepUps int
	asked   map[string]bool // scope sets already asked for in a step up
}

// grant is what one authorization obtained.
type grant struct {
	issuer   string
	resource string
	md       *serverMetadata
	conf     *oauth2.Config
	token    *oauth2.Token
	scopes   []string // the scopes asked for
	dpop     bool     // tokens are DPoP-bound
	// client names a Grant's client in the token's store key (the code
	// flow's client is conf.ClientID).
	client string
	// dynamic: conf.ClientID is a dynamic registration (made now or
	// stored), which the authorization server may forget.
	dynamic bool
	// obtained is when token came from the token endpoint; zero for a
	// token loaded from the Store, whose life is not known.
	obtained time.Time
}

// browserError is a sign-in whose browser brought no redirect back.
type browserError struct{ err error }

func (e *browserError) Error() string { return "mcp: auth: authorization: " + e.err.Error() }
func (e *browserError) Unwrap() error { return e.err }

// margin is how long before its expiry g's token is refreshed:
// refreshMargin, or half the token's life when that is shorter, so that a
// token living less than the margin is not refreshed before every request.
func (g *grant) margin() time.Duration {
	if g.obtained.IsZero() || g.token == nil || g.token.Expiry.IsZero() {
		return refreshMargin
	}
	return min(refreshMargin, g.token.Expiry.Sub(g.obtained)/2)
}

// fresh makes tok, just obtained from the token endpoint, g's token.
func (g *grant) fresh(tok *oauth2.Token) {
	g.token, g.obtained = tok, now()
}

// New returns a Client for cfg (which it copies).
func New(cfg *Config) *Client {
	c := &Client{cfg: *cfg, asked: map[string]bool{}, flow: make(flowLock, 1)}
	if c.cfg.Store == nil {
		c.cfg.Store = &MemoryStore{}
	}
	if u, err := url.Parse(c.cfg.ServerURL); err == nil {
		c.origin = originOf(u)
	}
	if c.cfg.DPoP {
		c.dpop = newDPoPKey()
	}
	return c
}

// Method says how the Client obtains tokens, for a status line: the grant
// and whether tokens are DPoP-bound. It never holds a secret.
func (c *Client) Method() string {
	m := "authorization code"
	if c.cfg.Grant != nil {
		m = c.cfg.Grant.method()
	}
	if c.cfg.DPoP {
		m += " + DPoP"
	}
	return "oauth: " + m
}

// http is the client of metadata, registration and token requests: the
// configured one, made to refuse a redirect to another origin.
func (c *Client) http() *http.Client {
	c.once.Do(func() {
		hc := http.Client{Timeout: 30 * time.Second}
		if c.cfg.HTTPClient != nil {
			hc = *c.cfg.HTTPClient
		}
		next := hc.CheckRedirect
		hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if originOf(req.URL) != originOf(via[0].URL) {
				return fmt.Errorf("%w: a redirect from %s to another origin", ErrInsecure, redact.URL(via[0].URL.String()))
			}
			if next != nil {
				return next(req, via)
			}
			if len(via) >= 5 {
				return errors.New("mcp: auth: too many redirects")
			}
			return nil
		}
		c.client = &hc
	})
	return c.client
}

func (c *Client) logger() *slog.Logger {
	if c.cfg.Logger != nil {
		return c.cfg.Logger
	}
	return slog.Default()
}

// Authorize sets req's Authorization header when the Client has a token
// and req goes to the server's origin; a token about to expire is
// refreshed first (a failed refresh sends the request without a token,
// and its 401 starts a new authorization).
func (c *Client) Authorize(ctx context.Context, req *http.Request) error {
	if originOf(req.URL) != c.origin {
		return nil
	}
	c.mu.Lock()
	g := c.grant
	c.mu.Unlock()
	if g == nil {
		return nil
	}
	tok := g.token
	if tok.RefreshToken != "" && !tok.Expiry.IsZero() && tok.Expiry.Sub(now()) < g.margin() {
		var err error
		if g, tok, err = c.refreshed(ctx, tok); err != nil {
			return err
		}
	}
	if tok == nil || expired(tok) {
		return nil // none, or known to be expired: the 401 that follows asks for a sign-in
	}
	if g.dpop && strings.EqualFold(tok.Type(), "DPoP") {
		proof, err := c.dpop.proof(req.Method, req.URL, tok.AccessToken)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "DPoP "+tok.AccessToken)
		req.Header.Set("DPoP", proof)
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}

// refreshed returns the current grant and its token, seen by the caller
// about to expire, refreshed first unless another request did meanwhile:
// one refresh at a time, the requests that find the token expiring
// meanwhile waiting for its outcome (as long as their ctx allows) and
// using the token it brought. A refresh the authorization server refused
// drops the grant (nil, nil): the request goes without a token, and its
// 401 starts a new authorization (registering again when the server no
// longer knows the client). A refresh that could not reach the server
// keeps the grant and its token, which may still be good, as the refresh
// token may be once the server is back.
func (c *Client) refreshed(ctx context.Context, seen *oauth2.Token) (*grant, *oauth2.Token, error) {
	if err := c.flow.lock(ctx); err != nil {
		return nil, nil, err
	}
	defer c.flow.unlock()
	c.mu.Lock()
	g := c.grant
	c.mu.Unlock()
	if g == nil { // the refresh before this one failed
		return nil, nil, nil
	}
	tok := g.token
	if tok != seen || tok.RefreshToken == "" || tok.Expiry.IsZero() || tok.Expiry.Sub(now()) >= g.margin() {
		return g, tok, nil // refreshed meanwhile, or nothing to refresh with
	}
	fresh, err := c.refresh(ctx, g)
	if err != nil {
		c.logger().Debug("mcp: auth: refresh failed", "err", err)
		if unreachable(err) {
			return g, tok, nil
		}
		c.refused(ctx, g, err)
		return nil, nil, nil
	}
	c.mu.Lock()
	g = c.grant
	c.mu.Unlock()
	return g, fresh, nil
}

// refused drops g after the authorization server refused its refresh
// with err; when the server no longer knows g's client, its registration
// is forgotten too (see forgetRegistration).
func (c *Client) refused(ctx context.Context, g *grant, err error) {
	c.mu.Lock()
	if c.grant == g {
		c.grant = nil
	}
	c.mu.Unlock()
	if clientUnknown(err) {
		c.forgetRegistration(ctx, g)
	}
}

// unreachable reports whether err, of a token request, is a failure to
// reach the authorization server (no answer), not its refusal.
func unreachable(err error) bool {
	var ae *AuthorizationError
	return !errors.As(err, &ae)
}

// clientUnknown reports whether err says that the authorization server
// does not know the client: invalid_client at the token endpoint (RFC
// 6749 5.2), or an authorization response naming the client. An
// authorization server that keeps dynamic registrations in memory forgets
// them when it restarts.
func clientUnknown(err error) bool {
	var ae *AuthorizationError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.Code == "invalid_client" || (ae.Endpoint == "authorization" && ae.Code == "unauthorized_client")
}

// forgetRegistration forgets g's dynamic registration, in memory and in
// the Store (only if the Store still holds that client), with the token
// stored for it, so that the next authorization registers again. A
// pre-registered client is never forgotten.
func (c *Client) forgetRegistration(ctx context.Context, g *grant) {
	if !g.dynamic {
		return
	}
	key := "client " + g.issuer
	if b, err := c.cfg.Store.Load(ctx, key); err == nil && b != nil {
		var r registration
		if json.Unmarshal(b, &r) == nil && r.ClientID == g.conf.ClientID {
			if err := c.cfg.Store.Save(ctx, key, nil); err != nil {
				c.logger().Warn("mcp: auth: token store", "err", err)
			}
		}
	}
	if err := c.cfg.Store.Save(ctx, tokenKey(g), nil); err != nil {
		c.logger().Warn("mcp: auth: token store", "err", err)
	}
	c.mu.Lock()
	if c.grant != nil && c.grant.conf.ClientID == g.conf.ClientID && c.grant.issuer == g.issuer {
		c.grant = nil
	}
	c.mu.Unlock()
	c.logger().Debug("mcp: auth: the authorization server no longer knows the client; it is registered again", "issuer", redact.URL(g.issuer))
}

// expired reports whether tok is known to have expired.
func expired(tok *oauth2.Token) bool {
	return !tok.Expiry.IsZero() && !tok.Expiry.After(time.Now())
}

// flowLock is a mutex whose waits are bounded by a ctx.
type flowLock chan struct{}

func (l flowLock) lock(ctx context.Context) error {
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l flowLock) unlock() { <-l }

// sentToken is the access token of a request's Authorization header.
func sentToken(req *http.Request) string {
	_, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return strings.TrimSpace(tok)
}

// Challenged handles a 401 (authorize, or refresh) or a 403 with
// insufficient_scope (authorize again with more scopes) of the server; it
// leaves other answers, and those of other origins, alone.
func (c *Client) Challenged(ctx context.Context, req *http.Request, resp *http.Response) (bool, error) {
	if originOf(req.URL) != c.origin {
		return false, nil
	}
	ch, _ := parseChallenges(resp.Header)
	sent := sentToken(req)

	if err := c.flow.lock(ctx); err != nil {
		return false, err
	}
	defer c.flow.unlock()
	c.mu.Lock()
	g := c.grant
	c.mu.Unlock()
	if g != nil && g.token.AccessToken != sent && !expired(g.token) {
		return true, nil // renewed while this request was out
	}
	if g != nil && g.dpop && resp.StatusCode == http.StatusUnauthorized && dpopChallenge(resp.Header) {
		// A nonce the proof must carry: the request goes again with it,
		// unless the server asks for the nonce it already had.
		return c.dpop.takeNonce(req.URL, resp.Header), nil
	}
	switch resp.StatusCode {
	case http.StatusForbidden:
		if ch.err != "insufficient_scope" {
			return false, nil
		}
		var had []string
		if g != nil {
			had = g.scopes
		}
		want := union(had, ch.scope)
		key := strings.Join(want, " ")
		c.mu.Lock()
		refused := len(want) == len(had) || c.asked[key] || c.stepUps >= maxStepUps
		if !refused {
			c.asked[key] = true
			c.stepUps++
		}
		c.mu.Unlock()
		if refused {
			c.logger().Debug("mcp: auth: insufficient scope, not asking again", "scope", key)
			return false, nil
		}
		return true, c.authorize(ctx, ch, want, sent, c.cfg.Browser, false)
	case http.StatusUnauthorized:
		var forgotten error // the refusal that made the registration forgotten
		if g != nil && g.token.RefreshToken != "" {
			_, err := c.refresh(ctx, g)
			switch {
			case err == nil:
				return true, nil
			case unreachable(err):
				// The grant stays: the refresh token may be good once the
				// authorization server is back, and a new authorization
				// would fail while it is not.
				return false, fmt.Errorf("mcp: auth: refresh: %w", err)
			default:
				c.refused(ctx, g, err)
				if clientUnknown(err) {
					forgotten = err
				}
			}
		}
		var scopes []string
		if len(ch.scope) > 0 {
			var had []string
			if g != nil {
				had = g.scopes
			}
			scopes = union(had, ch.scope)
		}
		return true, registeredAgain(forgotten, c.authorize(ctx, ch, scopes, sent, c.cfg.Browser, false))
	}
	return false, nil
}

// registeredAgain is err, the outcome of an authorization with a new
// registration after forgotten said the server no longer knew the client,
// saying so when it failed.
func registeredAgain(forgotten, err error) error {
	if err == nil || forgotten == nil {
		return err
	}
	return fmt.Errorf("mcp: auth: the authorization server no longer knew the client (%v), and with a new registration: %w", forgotten, err)
}

// SignIn signs in now, through browser (nil means Config.Browser), even if
// the Client holds a token: for a program that lets the user choose when
// to sign in to a server that needs it (ErrNoBrowser). It discovers the
// authorization server without waiting for a 401.
func (c *Client) SignIn(ctx context.Context, browser func(ctx context.Context, authURL string) (*url.URL, error)) error {
	if browser == nil {
		browser = c.cfg.Browser
	}
	if err := c.flow.lock(ctx); err != nil {
		return err
	}
	defer c.flow.unlock()
	return c.authorize(ctx, challenge{}, nil, "", browser, true)
}

// authorize discovers the authorization server, registers and obtains a
// token: from the store when it holds one other than rejected (unless
// fresh), else from the user through browser. scopes nil means those of
// the resource metadata; Config.Scopes are added.
func (c *Client) authorize(ctx context.Context, ch challenge, scopes []string, rejected string, browser func(context.Context, string) (*url.URL, error), fresh bool) error {
	prm, err := c.discoverResource(ctx, ch)
	if err != nil {
		return err
	}
	var issuer, resource string
	fallback := prm == nil
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return fmt.Errorf("%w: the protected resource metadata names no authorization server", ErrNoMetadata)
		}
		issuer, resource = prm.AuthorizationServers[0], prm.Resource
		if scopes == nil {
			scopes = boundScopes(prm.ScopesSupported)
		}
	} else {
		u, _ := url.Parse(c.cfg.ServerURL)
		issuer = u.Scheme + "://" + u.Host
		resource = canonical(u)
	}
	if c.cfg.Grant != nil && c.cfg.Issuer != "" && issuer != c.cfg.Issuer {
		// The grant's secret, assertion or workload token is for the
		// configured authorization server only.
		return &IssuerMismatchError{Where: "server's protected resource metadata", Want: c.cfg.Issuer, Got: issuer}
	}
	md, err := c.discoverServer(ctx, issuer, fallback)
	if err != nil {
		return err
	}
	scopes = union(scopes, c.cfg.Scopes)
	if c.cfg.Grant != nil {
		g := &grant{issuer: md.Issuer, resource: resource, md: md, scopes: scopes,
			conf:   &oauth2.Config{Endpoint: oauth2.Endpoint{TokenURL: md.TokenEndpoint}},
			dpop:   c.dpop != nil && md.dpopES256(),
			client: "grant " + c.cfg.Grant.method() + " " + c.cfg.Grant.clientID()}
		key := tokenKey(g)
		if saved := c.loadToken(ctx, key); !fresh && saved != nil && saved.token.AccessToken != rejected &&
			containsAll(saved.scopes, scopes) && saved.token.Valid() {
			g.token, g.scopes = saved.token, saved.scopes
			c.setGrant(g)
			return nil
		}
		tok, err := c.cfg.Grant.obtain(ctx, c, g)
		if err != nil {
			return err
		}
		g.fresh(tok)
		c.setGrant(g)
		c.saveToken(ctx, key, g)
		return nil
	}
	if err := md.checkPKCE(); err != nil {
		return err
	}
	if slices.Contains(md.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	// A dynamic registration the authorization server has forgotten (it
	// restarted) is forgotten here too and made again, once.
	var forgotten error
	for attempt := 0; ; attempt++ {
		err := c.codeGrant(ctx, md, resource, scopes, rejected, browser, fresh)
		var stale *staleClientError
		if err == nil || attempt > 0 || ctx.Err() != nil || !(clientUnknown(err) || errors.As(err, &stale)) {
			return registeredAgain(forgotten, err)
		}
		forgotten = err
	}
}

// staleClientError is a sign-in that failed with a registration taken
// from the Store: an authorization server that forgot the client shows the
// user an error page and never redirects back, so the registration is
// forgotten and made again (once) rather than tried for ever.
type staleClientError struct{ err error }

func (e *staleClientError) Error() string {
	return "the sign-in with a stored client registration failed: " + e.err.Error()
}
func (e *staleClientError) Unwrap() error { return e.err }

// codeGrant registers (or takes the client's registration) and obtains a
// token for the code flow: the stored one, refreshed if need be, or one the
// user grants through browser. A refusal naming the client forgets its
// dynamic registration (see forgetRegistration) before it is returned.
func (c *Client) codeGrant(ctx context.Context, md *serverMetadata, resource string, scopes []string, rejected string, browser func(context.Context, string) (*url.URL, error), fresh bool) error {
	reg, err := c.register(ctx, md)
	if err != nil {
		return err
	}
	conf := &oauth2.Config{
		ClientID:     reg.ClientID,
		ClientSecret: reg.secret(),
		Endpoint:     oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint, AuthStyle: reg.style()},
		RedirectURL:  c.cfg.RedirectURL,
		Scopes:       scopes,
	}
	g := &grant{issuer: md.Issuer, resource: resource, md: md, conf: conf, scopes: scopes, dpop: c.dpop != nil && md.dpopES256(), dynamic: reg.dynamic}
	key := tokenKey(g)
	if saved := c.loadToken(ctx, key); !fresh && saved != nil && saved.token.AccessToken != rejected && containsAll(saved.scopes, scopes) {
		g.token, g.scopes = saved.token, saved.scopes
		if !g.token.Valid() && g.token.RefreshToken != "" {
			_, err := c.refresh(ctx, g)
			if err == nil {
				return nil
			}
			if clientUnknown(err) {
				c.forgetRegistration(ctx, g)
				return err
			}
		} else if g.token.Valid() {
			c.setGrant(g)
			return nil
		}
	}
	tok, err := c.codeFlow(ctx, g, browser)
	if err != nil {
		var be *browserError
		switch {
		case clientUnknown(err):
			c.forgetRegistration(ctx, g)
		case reg.stored && errors.As(err, &be):
			c.forgetRegistration(ctx, g)
			return &staleClientError{err}
		}
		return err
	}
	g.fresh(tok)
	c.setGrant(g)
	c.saveToken(ctx, key, g)
	return nil
}

func (c *Client) setGrant(g *grant) {
	c.mu.Lock()
	c.grant = g
	c.mu.Unlock()
}

// codeFlow runs the authorization code flow with PKCE, state and the
// resource parameter, and validates the response's iss (RFC 9207) before
// the code goes to the token endpoint.
func (c *Client) codeFlow(ctx context.Context, g *grant, browser func(context.Context, string) (*url.URL, error)) (*oauth2.Token, error) {
	if browser == nil {
		return nil, ErrNoBrowser
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString()
	resource := oauth2.SetAuthURLParam("resource", g.resource)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), resource}
	if g.md.openID() && slices.Contains(g.scopes, "offline_access") {
		// Else an OpenID provider drops offline_access: no refresh token,
		// and a sign-in every time the access token expires.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	authURL := g.conf.AuthCodeURL(state, opts...)
	c.logger().Debug("mcp: auth: asking the user to authorize", "issuer", redact.URL(g.issuer), "scopes", strings.Join(g.scopes, " "))
	back, err := browser(ctx, authURL)
	if err != nil {
		return nil, &browserError{err}
	}
	q := back.Query()
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != g.issuer {
			return nil, &IssuerMismatchError{Where: "authorization response", Want: g.issuer, Got: strings.Join(iss, ",")}
		}
	} else if g.md.AuthorizationResponseISSSupported {
		return nil, &IssuerMismatchError{Where: "authorization response", Want: g.issuer}
	}
	if q.Get("state") != state {
		return nil, ErrStateMismatch
	}
	if e := q.Get("error"); e != "" {
		return nil, &AuthorizationError{Endpoint: "authorization", Code: e, Description: q.Get("error_description")}
	}
	code := q.Get("code")
	if code == "" {
		return nil, &AuthorizationError{Endpoint: "authorization", Code: "invalid_response", Description: "no code in the authorization response"}
	}
	tok, err := g.conf.Exchange(c.tokenContext(ctx, g), code, oauth2.VerifierOption(verifier), resource)
	if err != nil {
		return nil, tokenError(err)
	}
	return tok, nil
}

// refresh gets a new token with g's refresh token and makes it current.
func (c *Client) refresh(ctx context.Context, g *grant) (*oauth2.Token, error) {
	old := *g.token
	old.Expiry = time.Unix(1, 0) // make the source refresh
	tok, err := g.conf.TokenSource(c.tokenContext(ctx, g), &old).Token()
	if err != nil {
		return nil, tokenError(err)
	}
	ng := *g
	ng.fresh(tok)
	c.setGrant(&ng)
	c.saveToken(ctx, tokenKey(&ng), &ng)
	return tok, nil
}

// tokenContext carries the HTTP client of token requests, which adds the
// resource parameter to refresh requests (RFC 8707) and, for DPoP-bound
// tokens, a proof to every request.
func (c *Client) tokenContext(ctx context.Context, g *grant) context.Context {
	hc := *c.http()
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if g.dpop {
		base = &dpopTransport{base: base, key: c.dpop}
	}
	hc.Transport = &resourceTransport{base: base, tokenURL: g.conf.Endpoint.TokenURL, resource: g.resource}
	return context.WithValue(ctx, oauth2.HTTPClient, &hc)
}

// tokenError turns a token endpoint's error answer into an
// *AuthorizationError.
// Its text never holds the answer's body, which a hostile server may fill
// with what it was sent.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode != "":
		return &AuthorizationError{Endpoint: "token", Code: re.ErrorCode, Description: re.ErrorDescription}
	case errors.As(err, &re) && re.Response != nil:
		return &AuthorizationError{Endpoint: "token", Code: "http_error", Description: re.Response.Status}
	case strings.Contains(err.Error(), "missing access_token"):
		return &AuthorizationError{Endpoint: "token", Code: "invalid_response", Description: "no access_token in the answer"}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("mcp: auth: token request: %w", redact.Err(ue.Err))
	}
	return errors.New("mcp: auth: token request failed")
}

// savedToken is a token as the Store keeps it.
type savedToken struct {
	token  *oauth2.Token
	scopes []string
}

type storedToken struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
	// DPoPKey is the private key DPoP-bound tokens are bound to (see
	// dpopKey.marshal), kept with them, as well protected as they are:
	// without it they are of no use after a restart.
	DPoPKey string `json:"dpop_key,omitempty"`
}

func tokenKey(g *grant) string {
	key := "token " + g.issuer + " " + g.resource + " " + g.conf.ClientID
	if g.client != "" {
		key += " " + g.client
	}
	return key
}

func (c *Client) loadToken(ctx context.Context, key string) *savedToken {
	b, err := c.cfg.Store.Load(ctx, key)
	if err != nil {
		c.logger().Warn("mcp: auth: token store", "err", err)
		return nil
	}
	var st storedToken
	if b == nil || json.Unmarshal(b, &st) != nil || st.AccessToken == "" {
		return nil
	}
	if strings.EqualFold(st.TokenType, "DPoP") {
		// Bound to a key: only with that key is the token of any use, and
		// a token sent with another is refused (and wasted).
		key, err := parseDPoPKey(st.DPoPKey)
		if c.dpop == nil || err != nil {
			c.logger().Debug("mcp: auth: a stored DPoP-bound token without its key is not used")
			return nil
		}
		c.dpop.use(key)
	}
	return &savedToken{token: &oauth2.Token{AccessToken: st.AccessToken, TokenType: st.TokenType, RefreshToken: st.RefreshToken, Expiry: st.Expiry}, scopes: st.Scopes}
}

func (c *Client) saveToken(ctx context.Context, key string, g *grant) {
	st := storedToken{AccessToken: g.token.AccessToken, TokenType: g.token.TokenType, RefreshToken: g.token.RefreshToken, Expiry: g.token.Expiry, Scopes: g.scopes}
	if c.dpop != nil && strings.EqualFold(g.token.TokenType, "DPoP") {
		st.DPoPKey = c.dpop.marshal()
	}
	b, _ := json.Marshal(st)
	if err := c.cfg.Store.Save(ctx, key, b); err != nil {
		c.logger().Warn("mcp: auth: token store", "err", err)
	}
}

// canonical is the server's URL as a resource identifier: no fragment, no
// query, lower-case scheme and host.
func canonical(u *url.URL) string {
	v := *u
	v.Scheme, v.Host = strings.ToLower(v.Scheme), strings.ToLower(v.Host)
	v.Fragment, v.RawFragment, v.RawQuery = "", "", ""
	return v.String()
}

// union is a's scopes, then those of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

func randomString() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
