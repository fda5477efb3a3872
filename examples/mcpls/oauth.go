package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// defaultCallbackPort is the loopback port of the redirect URI, unless an
// entry's oauth.callbackPort says otherwise.
const defaultCallbackPort = 8976

// callbackAddr is where a server's sign-in comes back to.
func callbackAddr(sc *config.Server) string {
	port := defaultCallbackPort
	if sc.OAuth != nil && sc.OAuth.CallbackPort != 0 {
		port = sc.OAuth.CallbackPort
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// authorizer is the Manager's Authorizer for remote servers, from the
// entry's "oauth" object: a user's sign-in (tokens kept in the user's
// config directory; no browser, so a server without a stored token shows
// "needs authorization" until signIn), or a machine grant (client
// credentials, JWT bearer, enterprise), DPoP if asked. An entry it cannot
// use (an unknown grant, a key file others may read) fails the server with
// the reason.
func authorizer(name string, sc *config.Server) mcp.Authorizer {
	cfg, err := authConfig(sc)
	if err != nil {
		return failing{fmt.Errorf("server %q: oauth: %w", name, err)}
	}
	return auth.New(cfg)
}

func authConfig(sc *config.Server) (*auth.Config, error) {
	cfg := &auth.Config{
		ServerURL:   sc.URL,
		ClientName:  "mcpls",
		RedirectURL: "http://" + callbackAddr(sc) + "/callback",
		Logger:      slog.New(slog.DiscardHandler),
	}
	if store, err := auth.NewFileStore(""); err == nil {
		cfg.Store = store
	}
	o := sc.OAuth
	if o == nil {
		return cfg, nil
	}
	cfg.Scopes, cfg.DPoP, cfg.Issuer = o.Scopes, o.DPoP, o.Issuer
	switch o.Grant {
	case "", "authorization_code":
		cfg.ClientID, cfg.ClientSecret = o.ClientID, o.ClientSecret
	case "client_credentials":
		cc := &auth.ClientCredentials{ClientID: o.ClientID, ClientSecret: o.ClientSecret, SigningAlg: o.SigningAlg, KeyID: o.KeyID}
		if o.PrivateKeyFile != "" {
			key, err := auth.LoadPrivateKey(o.PrivateKeyFile)
			if err != nil {
				return nil, err
			}
			cc.PrivateKey = key
		}
		cfg.Grant = cc
	case "jwt_bearer":
		cfg.Grant = &auth.JWTBearer{ClientID: o.ClientID, ClientSecret: o.ClientSecret, AssertionFile: o.AssertionFile}
	case "enterprise":
		idToken := o.IDTokenFile
		cfg.Grant = &auth.EnterpriseManaged{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			IDPTokenEndpoint: o.IDPTokenEndpoint, IDPClientID: o.IDPClientID, IDPClientSecret: o.IDPClientSecret,
			IDToken: func(context.Context) (string, error) {
				b, err := os.ReadFile(idToken)
				return string(b), err
			},
		}
	default:
		return nil, fmt.Errorf("unknown grant %q (want authorization_code, client_credentials, jwt_bearer or enterprise)", o.Grant)
	}
	return cfg, nil
}

// failing is the Authorizer of an entry that cannot be used.
type failing struct{ err error }

func (f failing) Authorize(context.Context, *http.Request) error { return f.err }

func (f failing) Challenged(context.Context, *http.Request, *http.Response) (bool, error) {
	return false, f.err
}

// signIn signs in to the server name: it prints a link to w and waits for
// the browser to come back to the loopback address.
func signIn(ctx context.Context, m *mcp.Manager, cfg *mcp.Config, name string, w io.Writer) error {
	sc, ok := cfg.Servers[name]
	if !ok {
		return fmt.Errorf("no server %q in the config", name)
	}
	lb, err := auth.NewLoopback(callbackAddr(sc), "/callback", func(authURL string) error {
		fmt.Fprintf(w, "Sign in to %s: open %s\n", safe(name), safe(authURL)) // the URL comes from the server's metadata
		return nil
	})
	if err != nil {
		return err
	}
	return m.SignIn(ctx, name, lb.Browser)
}
