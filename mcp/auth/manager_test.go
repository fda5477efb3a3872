package auth_test

import (
	"context"
	"fmt"
	"github.com/mcplug/mcplug/mcp/config"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

func TestManagerSignsInToConfiguredServers(t *testing.T) {
	s := newSetup(t, func(as *fakeAS) { as.authMethods = []string{"client_secret_basic"}; as.noDCR = true }, nil)
	t.Setenv("ISSUES_SECRET", "pre-secret")
	cfg, err := config.Parse(strings.NewReader(fmt.Sprintf(`{"mcpServers": {"issues": {
		"type": "http", "url": %q,
		"oauth": {"clientId": "pre", "clientSecret": "${ISSUES_SECRET}", "callbackPort": 8976, "scopes": ["issues:read"]}
	}}}`, s.rs.url())), "test.json")
	require.NoError(t, err)
	sc := cfg.Servers["issues"]
	require.NoError(t, sc.Err)
	require.NotNil(t, sc.OAuth)
	assert.Equal(t, "pre-secret", sc.OAuth.ClientSecret, "${VAR} expanded")
	assert.Empty(t, sc.Extra, "oauth is a known field")

	var made atomic.Int32
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{
		Logger: slog.New(slog.DiscardHandler),
		Authorizer: func(name string, sc *config.Server) mcp.Authorizer {
			made.Add(1)
			c := *s.cfg
			c.ServerURL, c.ClientID, c.ClientSecret, c.Scopes = sc.URL, sc.OAuth.ClientID, sc.OAuth.ClientSecret, sc.OAuth.Scopes
			c.RedirectURL = fmt.Sprintf("http://127.0.0.1:%d/callback", sc.OAuth.CallbackPort)
			return auth.New(&c)
		},
	})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "mcp__issues__echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text())
	assert.Equal(t, "pre", s.lastAuth(t).Get("client_id"))
	assert.Equal(t, "http://127.0.0.1:8976/callback", s.lastAuth(t).Get("redirect_uri"))
	assert.Equal(t, "issues:read", s.lastAuth(t).Get("scope"))

	require.NoError(t, m.Reconnect(ctx, "issues"))
	_, err = m.CallTool(ctx, "mcp__issues__echo", map[string]any{"text": "again"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, made.Load(), "one Authorizer for the server's life")
	require.Len(t, m.Status(), 1)
	assert.Equal(t, "oauth: authorization code", m.Status()[0].Auth)
	assert.EqualValues(t, 1, s.browser.n.Load(), "the token outlives the reconnection")
}

func TestManagerNeedsAuthorizationUntilSignIn(t *testing.T) {
	s := newSetup(t, nil, nil)
	cfg, err := config.Parse(strings.NewReader(fmt.Sprintf(`{"mcpServers": {
		"docs": {"type": "http", "url": %q},
		"bare": {"type": "http", "url": %q}
	}}`, s.rs.url(), s.rs.url())), "test.json")
	require.NoError(t, err)
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{
		Logger: slog.New(slog.DiscardHandler),
		Authorizer: func(name string, sc *config.Server) mcp.Authorizer {
			if name == "bare" {
				return nil
			}
			c := *s.cfg
			c.Browser = nil // nobody at the keyboard until SignIn
			return auth.New(&c)
		},
	})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.Connect(ctx)
	status := map[string]mcp.ServerStatus{}
	for _, st := range m.Status() {
		status[st.Name] = st
	}
	assert.Equal(t, mcp.StateNeedsAuthorization, status["docs"].State)
	assert.ErrorIs(t, status["docs"].Err, auth.ErrNoBrowser)
	assert.Equal(t, mcp.StateNeedsAuthorization, status["bare"].State, "a 401 with no Authorizer")
	assert.ErrorContains(t, m.SignIn(ctx, "bare", s.browser.open), "no Authorizer")

	require.NoError(t, m.SignIn(ctx, "docs", s.browser.open))
	res, err := m.CallTool(ctx, "mcp__docs__echo", map[string]any{"text": "in"})
	require.NoError(t, err)
	assert.Equal(t, "in", res.Text())
	assert.EqualValues(t, 1, s.browser.n.Load())
}

func TestOAuthEntryExpandsEveryString(t *testing.T) {
	t.Setenv("KEYS", "/etc/keys")
	t.Setenv("IDP", "https://idp.example.com")
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": {"m": {"type": "http", "url": "https://m.example.com/mcp",
		"oauth": {"grant": "client_credentials", "clientId": "${CID:-machine}", "privateKeyFile": "${KEYS}/m.pem",
		          "idpTokenEndpoint": "${IDP}/token", "scopes": ["${SCOPE:-read}"], "dpop": true}}}}`), "test.json")
	require.NoError(t, err)
	o := cfg.Servers["m"].OAuth
	require.NotNil(t, o)
	assert.Equal(t, "machine", o.ClientID)
	assert.Equal(t, "/etc/keys/m.pem", o.PrivateKeyFile)
	assert.Equal(t, "https://idp.example.com/token", o.IDPTokenEndpoint)
	assert.Equal(t, []string{"read"}, o.Scopes)
	assert.True(t, o.DPoP)

	_, err = config.Parse(strings.NewReader(`{"mcpServers": {"m": {"type": "http", "url": "https://m.example.com/mcp",
		"oauth": {"clientSecret": "${UNSET_SECRET}"}}}}`), "test.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "oauth.clientSecret")
}
