package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// LoopbackBrowser returns a Config.Browser for a program run by a person:
// it listens on addr (a loopback host and port, such as "127.0.0.1:8976",
// the host and port of Config.RedirectURL), calls open with the
// authorization URL (to open the user's browser, or print the URL), and
// returns the first request to path that carries a state, code or error.
// The listener lives only while it waits; the wait ends with ctx.
func LoopbackBrowser(addr, path string, open func(authURL string) error) func(ctx context.Context, authURL string) (*url.URL, error) {
	return func(ctx context.Context, authURL string) (*url.URL, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("mcp: auth: loopback address: %w", err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("mcp: auth: %s is not a loopback address", addr)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("mcp: auth: listen for the redirect: %w", err)
		}
		got := make(chan *url.URL, 1)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if r.URL.Path != path || (q.Get("state") == "" && q.Get("code") == "" && q.Get("error") == "") {
				http.NotFound(w, r)
				return
			}
			u := *r.URL
			u.Scheme, u.Host = "http", addr
			select {
			case got <- &u:
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				fmt.Fprintln(w, "Authorization received. You may close this window.")
			default:
				http.Error(w, "already answered", http.StatusConflict)
			}
		})}
		go srv.Serve(ln)
		defer srv.Close()
		if err := open(authURL); err != nil {
			return nil, fmt.Errorf("mcp: auth: open the browser: %w", err)
		}
		select {
		case u := <-got:
			return u, nil
		case <-ctx.Done():
			return nil, errors.Join(errors.New("mcp: auth: no authorization came back"), ctx.Err())
		}
	}
}
