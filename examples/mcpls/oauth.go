package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// defaultCallbackPort is the loopback port of the redirect URI, unless an
// entry's oauth.callbackPort says otherwise.
const defaultCallbackPort = 8976

// authorizer returns the Manager's Authorizer for remote servers: tokens
// kept in the user's config directory, and, with login set, a sign-in
// link printed to w for servers that need one (one at a time, on the
// loopback port). Without login, only stored tokens are used.
func authorizer(login bool, w io.Writer) func(name string, sc *mcp.ServerConfig) mcp.Authorizer {
	store, storeErr := auth.NewFileStore("")
	var one sync.Mutex // one sign-in at a time: they share the port
	return func(name string, sc *mcp.ServerConfig) mcp.Authorizer {
		cfg := &auth.Config{ServerURL: sc.URL, ClientName: "mcpls", Logger: slog.New(slog.DiscardHandler)}
		if storeErr == nil {
			cfg.Store = store
		}
		port := defaultCallbackPort
		if o := sc.OAuth; o != nil {
			cfg.ClientID, cfg.ClientSecret = o.ClientID, o.ClientSecret
			if o.CallbackPort != 0 {
				port = o.CallbackPort
			}
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		cfg.RedirectURL = "http://" + addr + "/callback"
		if login {
			browser := auth.LoopbackBrowser(addr, "/callback", func(authURL string) error {
				fmt.Fprintf(w, "Sign in to %s: open %s\n", name, authURL)
				return nil
			})
			cfg.Browser = func(ctx context.Context, authURL string) (*url.URL, error) {
				one.Lock()
				defer one.Unlock()
				return browser(ctx, authURL)
			}
		}
		return auth.New(cfg)
	}
}
