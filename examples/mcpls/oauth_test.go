package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/mcptest"
)

// oauthServer is an MCP server that is its own authorization server.
func oauthServer(t *testing.T) *httptest.Server {
	var ts *httptest.Server
	mux := http.NewServeMux()
	json200 := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		json200(w, map[string]any{"resource": ts.URL + "/mcp", "authorization_servers": []string{ts.URL}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json200(w, map[string]any{"issuer": ts.URL, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"}})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json200(w, map[string]any{"client_id": "mcpls-client"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		back, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"c"}, "state": {r.URL.Query().Get("state")}, "iss": {ts.URL}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		json200(w, map[string]any{"access_token": "tok", "token_type": "Bearer", "expires_in": 3600})
	})
	srv := &mcptest.Server{Name: "guarded"}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, ts.URL))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		srv.ServeHTTP(w, r)
	})
	ts = httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// signInWriter is stderr that plays the user: it opens each sign-in link
// printed.
type signInWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	wg  sync.WaitGroup
}

func (w *signInWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, link, ok := strings.Cut(string(p), ": open "); ok {
		w.wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			if resp, err := client.Get(strings.TrimSpace(link)); err == nil {
				resp.Body.Close()
			}
		})
	}
	return w.buf.Write(p)
}

func TestOAuthLogin(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(os.Getenv("HOME"), ".config"))
	ts := oauthServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers": {"remote": {"type": "http", "url": %q, "oauth": {"callbackPort": %d}}}}`, ts.URL+"/mcp", port), 0o644))

	t.Run("a server that needs a sign-in says how to sign in", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 1, run([]string{"-config", cfg}, &stdout, &stderr))
		assert.Contains(t, stdout.String(), "needs authorization")
		assert.Contains(t, stdout.String(), "sign in with: mcpls -login remote")
	})
	t.Run("-login prints a link, and the sign-in is kept for the next run", func(t *testing.T) {
		var stdout bytes.Buffer
		stderr := &signInWriter{}
		code := run([]string{"-config", cfg, "-login", "remote"}, &stdout, stderr)
		stderr.wg.Wait()
		require.Equal(t, 0, code, stdout.String())
		assert.Contains(t, stderr.buf.String(), "Sign in to remote: open "+ts.URL+"/authorize?")
		assert.Contains(t, stdout.String(), "guarded")

		stdout.Reset()
		var quiet bytes.Buffer
		require.Equal(t, 0, run([]string{"-config", cfg}, &stdout, &quiet), stdout.String())
		assert.Contains(t, stdout.String(), "guarded", "the stored token is used")
		assert.Empty(t, quiet.String())
	})
}

func TestOAuthEntries(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(os.Getenv("HOME"), ".config"))
	key := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(key, []byte("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n"), 0o644))
	cfg := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers": {
		"loose": {"type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": {"grant": "client_credentials", "clientId": "m", "privateKeyFile": %q}},
		"odd":   {"type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": {"grant": "password"}}
	}}`, key), 0o644))
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, run([]string{"-config", cfg, "-v"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "oauth: mcp: auth: key file", "a key file others may read is refused")
	assert.Contains(t, stdout.String(), `unknown grant "password"`)
}
