package auth_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// The Client is what the Manager looks for in an Authorizer.
var (
	_ mcp.Authorizer       = (*auth.Client)(nil)
	_ mcp.SignInAuthorizer = (*auth.Client)(nil)
	_ mcp.MethodAuthorizer = (*auth.Client)(nil)
)

var _ mcp.Authorizer = (*auth.Client)(nil)

const redirect = "http://127.0.0.1:8976/callback"

// browser plays the user: it follows the authorization endpoint's
// redirect, and counts its uses.
type browser struct{ n atomic.Int32 }

func (b *browser) open(ctx context.Context, authURL string) (*url.URL, error) {
	b.n.Add(1)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp.Location()
}

// setup is an authorization server, an MCP server behind it and the
// Config of a client for it.
type setup struct {
	as      *fakeAS
	rs      *fakeRS
	browser *browser
	cfg     *auth.Config
}

func newSetup(t *testing.T, asConf func(*fakeAS), rsConf func(*fakeRS)) *setup {
	as := newFakeAS(t, asConf)
	rs := newFakeRS(t, func() *fakeAS { return as }, rsConf)
	return newSetupFor(t, as, rs)
}

func newSetupFor(t *testing.T, as *fakeAS, rs *fakeRS) *setup {
	b := &browser{}
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	return &setup{as: as, rs: rs, browser: b, cfg: &auth.Config{ServerURL: rs.url(), RedirectURL: redirect, Browser: b.open, HTTPClient: hc, Logger: slog.New(slog.DiscardHandler)}}
}

// noLeaks fails the test if a goroutine it started outlives it; call it
// first, so that its check runs after every other cleanup.
func noLeaks(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}

// call connects with the setup's Config and calls the echo tool.
func (s *setup) call(t *testing.T) error {
	t.Helper()
	return s.callWith(t, auth.New(s.cfg))
}

func (s *setup) callWith(t *testing.T, a *auth.Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: s.rs.url(), Auth: a, Client: client}, &mcp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	if err != nil {
		return err
	}
	if res.Text() != "hi" {
		return fmt.Errorf("echo answered %q", res.Text())
	}
	return nil
}

func (s *setup) lastAuth(t *testing.T) url.Values {
	t.Helper()
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	require.NotEmpty(t, s.as.auths, "no authorization request")
	return s.as.auths[len(s.as.auths)-1]
}

func TestAuthorizationCodeFlow(t *testing.T) {
	noLeaks(t)
	s := newSetup(t, nil, nil)
	require.NoError(t, s.call(t))

	assert.EqualValues(t, 1, s.browser.n.Load())
	q := s.lastAuth(t)
	assert.Equal(t, "code", q.Get("response_type"))
	assert.Equal(t, "client-1", q.Get("client_id"))
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	assert.NotEmpty(t, q.Get("code_challenge"))
	assert.NotEmpty(t, q.Get("state"))
	assert.Equal(t, s.rs.url(), q.Get("resource"), "RFC 8707 resource in the authorization request")
	assert.Equal(t, redirect, q.Get("redirect_uri"))
	assert.False(t, q.Has("scope"), "no scope anywhere: omitted")

	s.as.mu.Lock()
	reg, form, hdr := s.as.registrations[0], s.as.tokenForms[0], s.as.tokenHeaders[0]
	s.as.mu.Unlock()
	assert.Equal(t, "native", reg["application_type"])
	assert.Equal(t, "none", reg["token_endpoint_auth_method"])
	assert.ElementsMatch(t, []any{"authorization_code", "refresh_token"}, reg["grant_types"])
	assert.Equal(t, s.rs.url(), form.Get("resource"), "RFC 8707 resource in the token request")
	assert.Equal(t, "client-1", form.Get("client_id"))
	assert.Empty(t, form.Get("client_secret"), "a public client sends no secret")
	assert.Empty(t, hdr.Get("Authorization"))
	assert.Contains(t, s.rs.tokens(), "token-3", "the token reached the server")
}

func TestDiscovery(t *testing.T) {
	tests := []struct {
		name   string
		as     func(*fakeAS)
		rs     func(*fakeRS)
		expect func(t *testing.T, s *setup, err error)
	}{
		{"an issuer with a path", func(as *fakeAS) { as.path = "/tenant1" }, nil, func(t *testing.T, s *setup, err error) {
			require.NoError(t, err)
		}},
		{"a resource that is another server stops the flow", nil, func(rs *fakeRS) { rs.resource = "https://evil.example.com/mcp" }, func(t *testing.T, s *setup, err error) {
			var mismatch *auth.ResourceMismatchError
			require.ErrorAs(t, err, &mismatch)
			assert.Equal(t, "https://evil.example.com/mcp", mismatch.Resource)
			auths, _, _ := s.as.counts()
			assert.Zero(t, auths, "no authorization request")
		}},
		{"metadata naming another issuer is not used", func(as *fakeAS) { as.issuerOverride = "https://attacker.example.com" }, nil, func(t *testing.T, s *setup, err error) {
			var mismatch *auth.IssuerMismatchError
			require.ErrorAs(t, err, &mismatch)
			assert.Equal(t, "https://attacker.example.com", mismatch.Got)
			_, tokens, regs := s.as.counts()
			assert.Zero(t, tokens+regs)
		}},
		{"a server without PKCE is refused", func(as *fakeAS) { as.noPKCE = true }, nil, func(t *testing.T, s *setup, err error) {
			assert.ErrorIs(t, err, auth.ErrNoPKCE)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, tt.as, tt.rs)
			tt.expect(t, s, s.call(t))
		})
	}
}

func TestRootResourceMetadata(t *testing.T) {
	// A root document names the origin as the resource, and is found
	// without a resource_metadata in the challenge.
	var rs *fakeRS
	as := newFakeAS(t, nil)
	rs = newFakeRS(t, func() *fakeAS { return as }, func(rs *fakeRS) {
		rs.prmPath, rs.inHeader = "/.well-known/oauth-protected-resource", false
	})
	rs.resource = rs.srv.URL
	s := newSetupFor(t, as, rs)
	require.NoError(t, s.call(t))
	assert.Equal(t, rs.srv.URL, s.lastAuth(t).Get("resource"), "the resource as the metadata publishes it")
}

func TestIssuerInTheAuthorizationResponse(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name      string
		supported *bool
		mode      string
		ok        bool
	}{
		{"advertised and right", &yes, "", true},
		{"advertised and missing", &yes, "omit", false},
		{"advertised and wrong", &yes, "wrong", false},
		{"not advertised and missing", nil, "omit", true},
		{"advertised false and missing", &no, "omit", true},
		{"not advertised but wrong", nil, "wrong", false},
		{"a trailing slash is another issuer", &yes, "slash", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, func(as *fakeAS) { as.issSupported, as.issMode = tt.supported, tt.mode }, nil)
			err := s.call(t)
			_, tokens, _ := s.as.counts()
			if tt.ok {
				require.NoError(t, err)
				return
			}
			var mismatch *auth.IssuerMismatchError
			require.ErrorAs(t, err, &mismatch)
			assert.Zero(t, tokens, "the code never reached the token endpoint")
		})
	}
}

func TestScopes(t *testing.T) {
	tests := []struct {
		name string
		as   func(*fakeAS)
		rs   func(*fakeRS)
		want string
	}{
		{"the challenge's scope first", nil, func(rs *fakeRS) { rs.challengeScope, rs.scopesSupported = "files:read", []string{"a", "b"} }, "files:read"},
		{"else the resource's scopes_supported", nil, func(rs *fakeRS) { rs.scopesSupported = []string{"a", "b"} }, "a b"},
		{"offline_access when the authorization server offers it", func(as *fakeAS) { as.scopesSupported = []string{"a", "offline_access"} }, func(rs *fakeRS) { rs.scopesSupported = []string{"a"} }, "a offline_access"},
		{"no offline_access when it does not", func(as *fakeAS) { as.scopesSupported = []string{"a"} }, func(rs *fakeRS) { rs.scopesSupported = []string{"a"} }, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, tt.as, tt.rs)
			require.NoError(t, s.call(t))
			assert.Equal(t, tt.want, s.lastAuth(t).Get("scope"))
		})
	}
}

func TestStepUp(t *testing.T) {
	t.Run("a 403 insufficient_scope asks for the union of scopes", func(t *testing.T) {
		s := newSetup(t, nil, func(rs *fakeRS) {
			rs.challengeScope = "mcp:basic"
			rs.needs = func(method string) []string {
				if method == "tools/call" {
					return []string{"mcp:write"}
				}
				return nil
			}
		})
		require.NoError(t, s.call(t))
		require.EqualValues(t, 2, s.browser.n.Load())
		assert.Equal(t, "mcp:basic mcp:write", s.lastAuth(t).Get("scope"))
	})
	t.Run("a scope that never suffices is not asked for again", func(t *testing.T) {
		s := newSetup(t, nil, func(rs *fakeRS) {
			rs.challengeScope = "mcp:admin"
			rs.needs = func(method string) []string {
				if method == "tools/call" {
					return []string{"mcp:admin", "mcp:root"} // mcp:root is never granted
				}
				return nil
			}
		})
		s.as.deny = "mcp:root"
		err := s.call(t)
		var status *mcp.HTTPStatusError
		require.ErrorAs(t, err, &status)
		assert.Equal(t, 403, status.StatusCode)
		assert.LessOrEqual(t, s.browser.n.Load(), int32(3))
	})
}

func TestTokenEndpointAuthentication(t *testing.T) {
	tests := []struct {
		name    string
		methods []string
		check   func(t *testing.T, form url.Values, h http.Header)
	}{
		{"client_secret_basic", []string{"client_secret_basic"}, func(t *testing.T, form url.Values, h http.Header) {
			id, secret, ok := (&http.Request{Header: h}).BasicAuth()
			require.True(t, ok)
			assert.Equal(t, "client-1", id)
			assert.Equal(t, "secret", secret)
			assert.Empty(t, form.Get("client_secret"))
		}},
		{"client_secret_post", []string{"client_secret_post"}, func(t *testing.T, form url.Values, h http.Header) {
			assert.Empty(t, h.Get("Authorization"))
			assert.Equal(t, "secret", form.Get("client_secret"))
		}},
		{"none", []string{"none"}, func(t *testing.T, form url.Values, h http.Header) {
			assert.Empty(t, h.Get("Authorization"))
			assert.Empty(t, form.Get("client_secret"))
			assert.Equal(t, "client-1", form.Get("client_id"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, func(as *fakeAS) { as.authMethods = tt.methods }, nil)
			require.NoError(t, s.call(t))
			s.as.mu.Lock()
			form, h := s.as.tokenForms[0], s.as.tokenHeaders[0]
			s.as.mu.Unlock()
			tt.check(t, form, h)
		})
	}
}

func TestRegistration(t *testing.T) {
	t.Run("a pre-registered client is used first", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.authMethods = []string{"client_secret_basic"}; as.cimd = true }, nil)
		s.cfg.ClientID, s.cfg.ClientSecret, s.cfg.ClientIDMetadataURL = "pre", "pre-secret", "https://app.example.com/client.json"
		require.NoError(t, s.call(t))
		_, _, regs := s.as.counts()
		assert.Zero(t, regs)
		assert.Equal(t, "pre", s.lastAuth(t).Get("client_id"))
	})
	t.Run("a pre-registered client bound to another issuer is not sent", func(t *testing.T) {
		s := newSetup(t, nil, nil)
		s.cfg.ClientID, s.cfg.Issuer = "pre", "https://other.example.com"
		require.NoError(t, s.call(t))
		assert.Equal(t, "client-1", s.lastAuth(t).Get("client_id"))
	})
	t.Run("a client ID metadata document where supported", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.cimd = true }, nil)
		s.cfg.ClientIDMetadataURL = "https://app.example.com/client.json"
		require.NoError(t, s.call(t))
		_, _, regs := s.as.counts()
		assert.Zero(t, regs)
		assert.Equal(t, "https://app.example.com/client.json", s.lastAuth(t).Get("client_id"))
	})
	t.Run("no way to register", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.noDCR = true }, nil)
		assert.ErrorIs(t, s.call(t), auth.ErrNoRegistration)
	})
	t.Run("a web redirect registers as a web application", func(t *testing.T) {
		s := newSetup(t, nil, nil)
		s.cfg.RedirectURL = "https://app.example.com/callback"
		require.NoError(t, s.call(t))
		s.as.mu.Lock()
		defer s.as.mu.Unlock()
		assert.Equal(t, "web", s.as.registrations[0]["application_type"])
	})
	t.Run("a new authorization server gets a new registration", func(t *testing.T) {
		as1, as2 := newFakeAS(t, nil), newFakeAS(t, func(as *fakeAS) { as.n = 100 })
		var current atomic.Pointer[fakeAS]
		current.Store(as1)
		rs := newFakeRS(t, func() *fakeAS { return current.Load() }, nil)
		s := newSetupFor(t, as1, rs)
		a := auth.New(s.cfg)
		require.NoError(t, s.callWith(t, a))
		current.Store(as2) // as1's tokens are no longer accepted
		require.NoError(t, s.callWith(t, a))
		as2.mu.Lock()
		defer as2.mu.Unlock()
		require.Len(t, as2.registrations, 1, "registered at the new server")
		assert.Equal(t, "client-101", as2.auths[0].Get("client_id"), "the old client id is not sent")
	})
}

func TestRefresh(t *testing.T) {
	t.Run("a token about to expire is refreshed with the resource", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.refresh, as.expiresIn = true, 10 }, nil)
		a := auth.New(s.cfg)
		require.NoError(t, s.callWith(t, a))
		defer auth.AdvanceClock(6 * time.Second)() // within half its life of its expiry
		require.NoError(t, s.callWith(t, a))
		assert.EqualValues(t, 1, s.browser.n.Load(), "no second authorization")
		s.as.mu.Lock()
		defer s.as.mu.Unlock()
		last := s.as.tokenForms[len(s.as.tokenForms)-1]
		assert.Equal(t, "refresh_token", last.Get("grant_type"))
		assert.Equal(t, s.rs.url(), last.Get("resource"))
	})
	t.Run("a 401 refreshes, and a failed refresh authorizes again", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.refresh = true }, nil)
		a := auth.New(s.cfg)
		require.NoError(t, s.callWith(t, a))
		s.as.revoke()
		require.NoError(t, s.callWith(t, a))
		assert.EqualValues(t, 1, s.browser.n.Load(), "refreshed, not authorized again")
		s.as.revoke()
		s.as.mu.Lock()
		s.as.failRefresh = true
		s.as.mu.Unlock()
		require.NoError(t, s.callWith(t, a))
		assert.EqualValues(t, 2, s.browser.n.Load())
	})
}

// The refresh margin follows the token's life: a token that lives less
// than 30 s is not refreshed before every request.
func TestAShortLivedTokenIsNotRefreshedAtEveryRequest(t *testing.T) {
	s := newSetup(t, func(as *fakeAS) { as.refresh, as.expiresIn = true, 20 }, nil)
	a := auth.New(s.cfg)
	require.NoError(t, s.callWith(t, a))
	for range 5 {
		require.NoError(t, s.callWith(t, a))
	}
	s.as.mu.Lock()
	forms := slices.Clone(s.as.tokenForms)
	s.as.mu.Unlock()
	require.Len(t, forms, 1, "the code's exchange, and no refresh")
	restore := auth.AdvanceClock(11 * time.Second) // past half its life
	require.NoError(t, s.callWith(t, a))
	restore()
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	require.Len(t, s.as.tokenForms, 2)
	assert.Equal(t, "refresh_token", s.as.tokenForms[1].Get("grant_type"), "refreshed once within half its life of its expiry")
}

func TestTokensGoToTheServerOnly(t *testing.T) {
	s := newSetup(t, nil, nil)
	a := auth.New(s.cfg)
	require.NoError(t, s.callWith(t, a))
	for _, u := range []string{s.rs.url(), "http://evil.example.com/mcp", strings.Replace(s.rs.url(), "http://", "https://", 1)} {
		req, _ := http.NewRequest(http.MethodPost, u, nil)
		require.NoError(t, a.Authorize(context.Background(), req))
		if u == s.rs.url() {
			assert.NotEmpty(t, req.Header.Get("Authorization"))
		} else {
			assert.Empty(t, req.Header.Get("Authorization"), u)
		}
	}
}

func TestConcurrentRequestsShareOneAuthorization(t *testing.T) {
	s := newSetup(t, nil, nil)
	a := auth.New(s.cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- s.callWith(t, a) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, s.browser.n.Load())
}

func TestWithoutABrowser(t *testing.T) {
	s := newSetup(t, nil, nil)
	s.cfg.Browser = nil
	assert.ErrorIs(t, s.call(t), auth.ErrNoBrowser)
}

func TestAuthorizationErrorAndState(t *testing.T) {
	s := newSetup(t, nil, nil)
	s.cfg.Browser = func(ctx context.Context, authURL string) (*url.URL, error) {
		u, _ := url.Parse(authURL)
		back, _ := url.Parse(redirect)
		back.RawQuery = url.Values{"error": {"access_denied"}, "state": {u.Query().Get("state")}, "iss": {s.as.issuer()}}.Encode()
		return back, nil
	}
	var ae *auth.AuthorizationError
	require.ErrorAs(t, s.call(t), &ae)
	assert.Equal(t, "access_denied", ae.Code)

	s.cfg.Browser = func(ctx context.Context, authURL string) (*url.URL, error) {
		back, _ := url.Parse(redirect + "?code=stolen&state=forged&iss=" + url.QueryEscape(s.as.issuer()))
		return back, nil
	}
	assert.ErrorIs(t, s.call(t), auth.ErrStateMismatch)
	_, tokens, _ := s.as.counts()
	assert.Zero(t, tokens)
}

func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oauth")
	store, err := auth.NewFileStore(dir)
	require.NoError(t, err)
	s := newSetup(t, nil, nil)
	s.cfg.Store = store
	require.NoError(t, s.call(t))

	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	require.Len(t, files, 2, "the registration and the token")
	for _, f := range files {
		info, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}

	t.Run("a new Client uses the stored token without the user", func(t *testing.T) {
		require.NoError(t, s.call(t))
		assert.EqualValues(t, 1, s.browser.n.Load())
		_, _, regs := s.as.counts()
		assert.Equal(t, 1, regs)
	})
	t.Run("a file others can read is refused", func(t *testing.T) {
		for _, f := range files {
			require.NoError(t, os.Chmod(f, 0o644))
		}
		_, err := store.Load(context.Background(), "client "+s.as.issuer())
		assert.ErrorContains(t, err, "0600")
	})
}

func TestLoopback(t *testing.T) {
	noLeaks(t)
	follow := func(authURL string) error {
		go func() { // the user's browser follows the redirect to the loopback address
			resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(authURL)
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	t.Run("a free port is chosen once and signs in", func(t *testing.T) {
		lb, err := auth.NewLoopback("127.0.0.1:0", "", follow)
		require.NoError(t, err)
		assert.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/callback$`, lb.RedirectURL())
		s := newSetup(t, nil, nil)
		s.cfg.RedirectURL, s.cfg.Browser = lb.RedirectURL(), lb.Browser
		require.NoError(t, s.call(t))
		assert.Equal(t, lb.RedirectURL(), s.lastAuth(t).Get("redirect_uri"))
	})
	t.Run("refuses an address that is not loopback", func(t *testing.T) {
		_, err := auth.NewLoopback("0.0.0.0:38977", "/callback", follow)
		assert.ErrorContains(t, err, "not a loopback")
	})
	t.Run("ends with its ctx", func(t *testing.T) {
		lb, err := auth.NewLoopback("127.0.0.1:0", "", func(string) error { return nil })
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err = lb.Browser(ctx, "http://x")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// pastingUser reads the sign-in link a PastedRedirect prints, follows it,
// and pastes the address it ended on.
type pastingUser struct {
	paste *io.PipeWriter
	out   strings.Builder
}

func (u *pastingUser) Write(p []byte) (int, error) {
	u.out.Write(p)
	for _, line := range strings.Split(string(p), "\n") {
		if strings.HasPrefix(line, "http") {
			b := &browser{}
			back, err := b.open(context.Background(), line)
			if err != nil {
				return 0, err
			}
			go fmt.Fprintln(u.paste, back.String())
		}
	}
	return len(p), nil
}

func TestPastedRedirect(t *testing.T) {
	noLeaks(t)
	r, w := io.Pipe()
	defer w.Close()
	user := &pastingUser{paste: w}
	s := newSetup(t, nil, nil)
	s.cfg.Browser = auth.PastedRedirect(r, user)
	require.NoError(t, s.call(t))
	assert.Contains(t, user.out.String(), "paste here")

	t.Run("text that is not the address is refused", func(t *testing.T) {
		browse := auth.PastedRedirect(strings.NewReader("hello\n"), io.Discard)
		_, err := browse(context.Background(), "https://as.example.com/authorize")
		assert.ErrorContains(t, err, "not the address")
	})
}

func TestSignIn(t *testing.T) {
	s := newSetup(t, nil, nil)
	s.cfg.Browser = nil
	a := auth.New(s.cfg)
	err := s.callWith(t, a)
	require.ErrorIs(t, err, auth.ErrNoBrowser)
	var required interface{ AuthorizationRequired() bool }
	require.ErrorAs(t, err, &required)
	assert.True(t, required.AuthorizationRequired())

	b := &browser{}
	require.NoError(t, a.SignIn(context.Background(), b.open))
	assert.EqualValues(t, 1, b.n.Load())
	require.NoError(t, s.callWith(t, a))
	assert.EqualValues(t, 1, b.n.Load(), "the call uses the token SignIn got")
}

func TestConfigScopesAreAdded(t *testing.T) {
	s := newSetup(t, nil, func(rs *fakeRS) { rs.challengeScope = "read" })
	s.cfg.Scopes = []string{"extra"}
	require.NoError(t, s.call(t))
	assert.Equal(t, "read extra", s.lastAuth(t).Get("scope"))
}

func TestHostileAuthorizationServers(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("another origin was asked for %s", r.URL)
	}))
	defer other.Close()
	tests := []struct {
		name   string
		as     func(as *fakeAS)
		rs     func(rs *fakeRS)
		expect func(t *testing.T, s *setup, err error)
	}{
		{"an authorization server on plain http elsewhere is refused", nil, nil, nil},
		{"a metadata redirect to another origin is not followed", func(as *fakeAS) {
			as.override = map[string]http.HandlerFunc{"/.well-known/oauth-authorization-server": func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/.well-known/oauth-authorization-server", http.StatusFound)
			}}
		}, nil, func(t *testing.T, s *setup, err error) { assert.ErrorIs(t, err, auth.ErrNoMetadata) }},
		{"resource_metadata on another origin is not followed", nil, func(rs *fakeRS) { rs.inHeader = false; rs.challengeScope = "" }, nil},
		{"huge metadata is not read past its bound", func(as *fakeAS) {
			as.override = map[string]http.HandlerFunc{"/.well-known/oauth-authorization-server": func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(`{"issuer":"` + strings.Repeat("x", 2<<20) + `"}`))
			}}
		}, nil, func(t *testing.T, s *setup, err error) { assert.ErrorIs(t, err, auth.ErrNoMetadata) }},
		{"a token answer without access_token", func(as *fakeAS) {
			as.override = map[string]http.HandlerFunc{"/token": func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, map[string]any{"token_type": "Bearer"})
			}}
		}, nil, func(t *testing.T, s *setup, err error) {
			var ae *auth.AuthorizationError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "invalid_response", ae.Code)
		}},
		{"a token error never echoes what was sent", func(as *fakeAS) {
			as.override = map[string]http.HandlerFunc{"/token": func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				w.WriteHeader(500)
				fmt.Fprintf(w, "boom %s %s", r.PostForm.Get("code_verifier"), r.PostForm.Get("code"))
			}}
		}, nil, func(t *testing.T, s *setup, err error) {
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "boom")
			assert.NotContains(t, err.Error(), "code-")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch tt.name {
			case "an authorization server on plain http elsewhere is refused":
				as := newFakeAS(t, nil)
				rs := newFakeRS(t, func() *fakeAS { return as }, nil)
				s := newSetupFor(t, as, rs)
				as.srv.URL = "http://as.example.com" // what the resource metadata names
				err := s.call(t)
				assert.ErrorIs(t, err, auth.ErrInsecure)
				return
			case "resource_metadata on another origin is not followed":
				as := newFakeAS(t, nil)
				rs := newFakeRS(t, func() *fakeAS { return as }, func(rs *fakeRS) { rs.inHeader = false })
				rs.srv.Config.Handler = wrapChallenge(rs.srv.Config.Handler, other.URL+"/prm")
				s := newSetupFor(t, as, rs)
				require.NoError(t, s.call(t), "found on the server's own well-known URL")
				return
			}
			s := newSetup(t, tt.as, tt.rs)
			tt.expect(t, s, s.call(t))
		})
	}
}

// wrapChallenge adds resource_metadata=prm to the server's challenges.
func wrapChallenge(h http.Handler, prm string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" && r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer resource_metadata=%q", prm))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestSecretsInURLsAreNotRepeated(t *testing.T) {
	// A server URL with a key in its query, and a server whose metadata
	// names another resource with one too: neither key appears in the
	// error or in the log.
	var logged strings.Builder
	s := newSetup(t, nil, func(rs *fakeRS) { rs.resource = "https://evil.example.com/mcp?token=theirs-k456" })
	s.cfg.ServerURL = s.rs.url() + "?api_key=ours-k123"
	s.cfg.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := auth.New(s.cfg)
	req, _ := http.NewRequest(http.MethodPost, s.cfg.ServerURL, nil)
	resp := &http.Response{StatusCode: 401, Header: http.Header{"Www-Authenticate": {
		fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp?sig=meta-k789", scope="x"`, s.rs.srv.URL)}}}
	_, err := a.Challenged(context.Background(), req, resp)
	var mismatch *auth.ResourceMismatchError
	require.ErrorAs(t, err, &mismatch)
	for _, secret := range []string{"ours-k123", "theirs-k456", "meta-k789"} {
		assert.NotContains(t, err.Error(), secret)
		assert.NotContains(t, logged.String(), secret)
	}
}

// Many requests find the token about to expire at once: one refresh runs,
// the others wait for its outcome; when it fails, nobody panics and no
// lock is left held.
func TestConcurrentRefresh(t *testing.T) {
	for _, failing := range []bool{false, true} {
		name := "a refresh that succeeds serves every request"
		if failing {
			name = "a refresh that fails leaves every request without a token, and the next ones unblocked"
		}
		t.Run(name, func(t *testing.T) {
			s := newSetup(t, func(as *fakeAS) { as.refresh, as.expiresIn = true, 10 }, nil)
			a := auth.New(s.cfg)
			require.NoError(t, s.callWith(t, a))       // signed in
			defer auth.AdvanceClock(6 * time.Second)() // the 10 s token expires within its refresh margin
			s.as.mu.Lock()
			s.as.failRefresh = failing
			s.as.expiresIn = 3600 // the refreshed token lasts
			before := len(s.as.tokenForms)
			s.as.mu.Unlock()

			var wg sync.WaitGroup
			var sent atomic.Int32
			for range 64 {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					req, _ := http.NewRequest(http.MethodPost, s.rs.url(), nil)
					assert.NoError(t, a.Authorize(ctx, req))
					if req.Header.Get("Authorization") != "" {
						sent.Add(1)
					}
				})
			}
			wg.Wait()
			s.as.mu.Lock()
			refreshes := len(s.as.tokenForms) - before
			s.as.mu.Unlock()
			assert.Equal(t, 1, refreshes, "one refresh for 64 requests")
			if failing {
				assert.Zero(t, sent.Load(), "a token known to be expired or dropped was sent")
			} else {
				assert.EqualValues(t, 64, sent.Load())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequest(http.MethodPost, s.rs.url(), nil)
			require.NoError(t, a.Authorize(ctx, req), "a later request is not held by a lock left behind")
		})
	}
}

// A token known to have expired, with nothing to refresh it with, is not
// sent: the server's 401 asks for a new sign-in instead.
func TestExpiredTokenIsNotSent(t *testing.T) {
	s := newSetup(t, func(as *fakeAS) { as.expiresIn = 1 }, nil)
	a := auth.New(s.cfg)
	require.NoError(t, s.callWith(t, a))
	require.Eventually(t, func() bool { // the token's one second passes
		req, _ := http.NewRequest(http.MethodPost, s.rs.url(), nil)
		require.NoError(t, a.Authorize(context.Background(), req))
		return req.Header.Get("Authorization") == ""
	}, 5*time.Second, 50*time.Millisecond, "the expired token is still sent")
	require.NoError(t, s.callWith(t, a), "the 401 leads to a new sign-in")
	assert.EqualValues(t, 2, s.browser.n.Load())
}

// The loopback takes only the callback of the sign-in it serves: a page
// the user visits meanwhile can send the browser there, with a state of
// its own, and is turned away while the sign-in goes on.
func TestLoopbackTakesOnlyItsOwnState(t *testing.T) {
	noLeaks(t)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	statuses := make(chan int, 3)
	lb, err := auth.NewLoopback("127.0.0.1:0", "", nil)
	require.NoError(t, err)
	lb.Open = func(string) error {
		go func() {
			for _, q := range []string{"state=forged&code=evil", "code=evil", "state=issued-state&code=good"} {
				resp, err := client.Get(lb.RedirectURL() + "?" + q)
				if err != nil {
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || (resp.StatusCode == http.StatusOK && !strings.Contains(string(body), "Signed in")) {
					return // the browser would show no page
				}
				statuses <- resp.StatusCode
			}
		}()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := lb.Browser(ctx, "https://as.example/authorize?client_id=c&state=issued-state")
	require.NoError(t, err)
	assert.Equal(t, "good", got.Query().Get("code"), "the sign-in ended with its own callback")
	var got3 []int
	for range 3 {
		select {
		case s := <-statuses:
			got3 = append(got3, s)
		case <-time.After(5 * time.Second):
		}
	}
	assert.Equal(t, []int{http.StatusBadRequest, http.StatusBadRequest, http.StatusOK}, got3)
}

// A server that is not on this machine cannot send the client to an
// authorization server on it (plain http or not): nothing, no client
// secret above all, goes there.
func TestRemoteServerCannotNameALoopbackAuthorizationServer(t *testing.T) {
	as := newFakeAS(t, nil)
	const remote = "http://mcp.example/mcp"
	rs := newFakeRS(t, func() *fakeAS { return as }, func(rs *fakeRS) { rs.resource = remote })
	s := newSetupFor(t, as, rs)
	rsAddr := strings.TrimPrefix(rs.srv.URL, "http://")
	dialer := &net.Dialer{}
	s.cfg.ServerURL = remote
	s.cfg.ClientID, s.cfg.ClientSecret = "pre-registered", "s3cret"
	s.cfg.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "mcp.example:") {
			addr = rsAddr // the remote server, served here for the test
		}
		return dialer.DialContext(ctx, network, addr)
	}}}
	a := auth.New(s.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &http.Client{Transport: s.cfg.HTTPClient.Transport}
	_, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: remote, Auth: a, Client: client}, &mcp.Options{Logger: slog.New(slog.DiscardHandler)})
	require.ErrorIs(t, err, auth.ErrInsecure)
	auths, tokens, registrations := as.counts()
	assert.Zero(t, auths+tokens+registrations, "the authorization server on this machine was used")
	assert.Zero(t, s.browser.n.Load())
}

// An OpenID provider grants offline_access (a refresh token) only with
// prompt=consent (OpenID Connect Core 1.0, section 11): it is sent then,
// and only then.
func TestOfflineAccessAsksForConsentOfAnOpenIDProvider(t *testing.T) {
	tests := []struct {
		name    string
		openID  bool
		scopes  []string
		consent bool
	}{
		{"an OpenID provider, offline_access asked", true, []string{"offline_access"}, true},
		{"an OpenID provider, offline_access not asked", true, nil, false},
		{"an OAuth server, offline_access asked", false, []string{"offline_access"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, func(as *fakeAS) { as.openID = tt.openID }, nil)
			s.cfg.Scopes = tt.scopes
			require.NoError(t, s.call(t))
			prompt := s.lastAuth(t).Get("prompt")
			if tt.consent {
				assert.Equal(t, "consent", prompt)
			} else {
				assert.Empty(t, prompt)
			}
		})
	}
}

// An authorization server that keeps dynamic registrations in memory
// forgets them when it restarts: the client registers again, once, and
// signs in once where its refresh token is gone too.
func TestAForgottenRegistrationIsMadeAgain(t *testing.T) {
	for _, store := range []string{"memory", "file"} {
		t.Run("a refresh refused with invalid_client, "+store+" store", func(t *testing.T) {
			s := newSetup(t, func(as *fakeAS) { as.refresh, as.strictClients = true, true }, nil)
			if store == "file" {
				fs, err := auth.NewFileStore(t.TempDir())
				require.NoError(t, err)
				s.cfg.Store = fs
			}
			a := auth.New(s.cfg)
			require.NoError(t, s.callWith(t, a))
			s.as.forget()
			require.NoError(t, s.callWith(t, a), "registered again and signed in")
			_, _, regs := s.as.counts()
			assert.Equal(t, 2, regs, "one new registration")
			assert.EqualValues(t, 2, s.browser.n.Load(), "one sign-in more: the refresh token is gone too")
			if store == "file" {
				require.NoError(t, s.callWith(t, auth.New(s.cfg)), "a restarted client takes the new registration and its token")
				_, _, regs = s.as.counts()
				assert.Equal(t, 2, regs)
				assert.EqualValues(t, 2, s.browser.n.Load())
			}
		})
	}
	t.Run("a stored registration the server forgot is made again at sign-in", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.strictClients = true }, nil)
		fs, err := auth.NewFileStore(t.TempDir())
		require.NoError(t, err)
		s.cfg.Store = fs
		require.NoError(t, s.callWith(t, auth.New(s.cfg)))
		s.as.forget()
		// No refresh token: the first thing to meet the forgotten client is
		// the authorization page, which shows an error and redirects nowhere.
		require.NoError(t, s.callWith(t, auth.New(s.cfg)), "registered again and signed in")
		_, _, regs := s.as.counts()
		assert.Equal(t, 2, regs)
		assert.EqualValues(t, 3, s.browser.n.Load(), "the failed page, and one sign-in more")
	})
	t.Run("when registering again fails too, the error says why", func(t *testing.T) {
		s := newSetup(t, func(as *fakeAS) { as.refresh, as.strictClients = true, true }, nil)
		a := auth.New(s.cfg)
		require.NoError(t, s.callWith(t, a))
		s.as.forget()
		s.as.mu.Lock()
		s.as.noDCR = true
		s.as.mu.Unlock()
		err := s.callWith(t, a)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no longer knew the client")
		assert.Contains(t, err.Error(), "invalid_client")
	})
}

// A refresh that cannot reach the authorization server keeps the grant:
// the token may still be good, and the refresh token once it is back.
func TestARefreshThatCannotReachTheServerKeepsTheGrant(t *testing.T) {
	s := newSetup(t, func(as *fakeAS) { as.refresh, as.expiresIn = true, 10 }, nil)
	a := auth.New(s.cfg)
	require.NoError(t, s.callWith(t, a))
	down := true
	var mu sync.Mutex
	s.as.override = map[string]http.HandlerFunc{"/token": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d { // the connection dies: no answer at all
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		s.as.override = nil
		s.as.ServeHTTP(w, r)
	}}
	defer auth.AdvanceClock(6 * time.Second)() // the token is within its refresh margin
	require.NoError(t, s.callWith(t, a), "the token, still good, goes without its refresh")
	mu.Lock()
	down = false
	mu.Unlock()
	require.NoError(t, s.callWith(t, a))
	assert.EqualValues(t, 1, s.browser.n.Load(), "no second sign-in")
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	require.NotEmpty(t, s.as.tokenForms)
	assert.Equal(t, "refresh_token", s.as.tokenForms[len(s.as.tokenForms)-1].Get("grant_type"), "refreshed once the server is back")
}

// The same on a 401: a refresh that cannot reach the authorization server
// fails the request and keeps the grant, which is refreshed once the
// server is back, without a new sign-in.
func TestARefreshOnA401ThatCannotReachTheServerKeepsTheGrant(t *testing.T) {
	s := newSetup(t, func(as *fakeAS) { as.refresh = true }, nil)
	a := auth.New(s.cfg)
	require.NoError(t, s.callWith(t, a))
	var mu sync.Mutex
	down := true
	s.as.override = map[string]http.HandlerFunc{"/token": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		s.as.override = nil
		s.as.ServeHTTP(w, r)
	}}
	s.as.revoke() // the server now answers the token 401
	err := s.callWith(t, a)
	require.Error(t, err, "no token, and the authorization server out of reach")
	assert.Contains(t, err.Error(), "refresh")
	mu.Lock()
	down = false
	mu.Unlock()
	require.NoError(t, s.callWith(t, a), "refreshed once the server is back")
	assert.EqualValues(t, 1, s.browser.n.Load(), "no second sign-in")
}
