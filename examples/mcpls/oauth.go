package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// defaultCallbackPort is the loopback port of the redirect URI, unless an
// entry's oauth.callbackPort says otherwise.
const defaultCallbackPort = 8976

// callbackAddr is where a server's sign-in comes back to.
func callbackAddr(sc *mcp.ServerConfig) string {
	port := defaultCallbackPort
	if sc.OAuth != nil && sc.OAuth.CallbackPort != 0 {
		port = sc.OAuth.CallbackPort
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// authorizer is the Manager's Authorizer for remote servers: tokens kept
// in the user's config directory, the entry's pre-registered client if it
// has one, and no browser: a server without a stored token shows "needs
// authorization" until signIn.
func authorizer(name string, sc *mcp.ServerConfig) mcp.Authorizer {
	cfg := &auth.Config{
		ServerURL:   sc.URL,
		ClientName:  "mcpls",
		RedirectURL: "http://" + callbackAddr(sc) + "/callback",
		Logger:      slog.New(slog.DiscardHandler),
	}
	if store, err := auth.NewFileStore(""); err == nil {
		cfg.Store = store
	}
	if o := sc.OAuth; o != nil {
		cfg.ClientID, cfg.ClientSecret, cfg.Scopes = o.ClientID, o.ClientSecret, o.Scopes
	}
	return auth.New(cfg)
}

// signIn signs in to the server name: it prints a link to w and waits for
// the browser to come back to the loopback address.
func signIn(ctx context.Context, m *mcp.Manager, cfg *mcp.Config, name string, w io.Writer) error {
	sc, ok := cfg.Servers[name]
	if !ok {
		return fmt.Errorf("no server %q in the config", name)
	}
	lb, err := auth.NewLoopback(callbackAddr(sc), "/callback", func(authURL string) error {
		fmt.Fprintf(w, "Sign in to %s: open %s\n", name, authURL)
		return nil
	})
	if err != nil {
		return err
	}
	return m.SignIn(ctx, name, lb.Browser)
}
