package auth

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultSignInTimeout bounds a sign-in through a Loopback or a pasted
// redirect when the ctx has no earlier deadline.
const DefaultSignInTimeout = 5 * time.Minute

// Loopback receives the authorization server's redirect on a loopback
// address, for programs run by a person with a browser: its Browser method
// is a Config.Browser, and RedirectURL is the Config.RedirectURL to go
// with it. It listens only while a sign-in waits.
type Loopback struct {
	addr string // host:port, the port chosen
	path string
	// Open shows the user the authorization URL: OpenBrowser, or a
	// function that prints it.
	Open func(authURL string) error
}

// NewLoopback returns a Loopback on addr, a loopback host and a port (such
// as "127.0.0.1:8976"); port 0 picks a free port now, kept for the
// Loopback's life, since the redirect URI is registered with the
// authorization server. path is the redirect's path ("" means
// "/callback").
func NewLoopback(addr, path string, open func(authURL string) error) (*Loopback, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: loopback address: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("mcp: auth: %s is not a loopback address", addr)
	}
	if port == "0" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("mcp: auth: pick a loopback port: %w", err)
		}
		port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
	}
	if path == "" {
		path = "/callback"
	}
	return &Loopback{addr: net.JoinHostPort(host, port), path: path, Open: open}, nil
}

// RedirectURL is the redirect URI the Loopback serves.
func (l *Loopback) RedirectURL() string { return "http://" + l.addr + l.path }

// Browser listens on the Loopback's address, calls Open with authURL, and
// returns the first request to its path that carries the state authURL
// issued (with its code or error). A request with another state, or none
// when authURL has one, is answered with an error page and changes
// nothing: any web page the user visits meanwhile can send the browser to
// the loopback port, and must not end or steer the sign-in. It waits until
// ctx ends, or DefaultSignInTimeout when ctx has no deadline.
func (l *Loopback) Browser(ctx context.Context, authURL string) (*url.URL, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultSignInTimeout)
		defer cancel()
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: listen for the redirect: %w", err)
	}
	var state string
	if u, err := url.Parse(authURL); err == nil {
		state = u.Query().Get("state")
	}
	got := make(chan *url.URL, 1)
	var answered atomic.Bool
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != l.path || (q.Get("state") == "" && q.Get("code") == "" && q.Get("error") == "") {
			http.NotFound(w, r)
			return
		}
		if state != "" && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "This sign-in was not started here (its state does not match). Close this window and sign in again from the program.", http.StatusBadRequest)
			return
		}
		if !answered.CompareAndSwap(false, true) {
			http.Error(w, "already answered", http.StatusConflict)
			return
		}
		u := *r.URL
		u.Scheme, u.Host = "http", l.addr
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "Signed in. You may close this window.")
		got <- &u
	})}
	go srv.Serve(ln)
	defer func() {
		// The browser gets its page before the server goes: in-flight
		// answers may finish, for a second at most.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}()
	open := l.Open
	if open == nil {
		open = OpenBrowser
	}
	if err := open(authURL); err != nil {
		return nil, fmt.Errorf("mcp: auth: show the sign-in page: %w", err)
	}
	select {
	case u := <-got:
		return u, nil
	case <-ctx.Done():
		return nil, errors.Join(errors.New("mcp: auth: no sign-in came back"), ctx.Err())
	}
}

// OpenBrowser opens u in the user's browser (xdg-open, open, or the
// Windows shell), without waiting for it.
func OpenBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// PastedRedirect returns a Config.Browser for a program without a browser
// on its machine (over ssh, say): it writes the authorization URL to out,
// and reads from in the URL the user's browser ended on (the redirect URI
// with its query), one line. The redirect URI need not be served. It waits
// until ctx ends, or DefaultSignInTimeout when ctx has no deadline; in is
// read by a goroutine that ends with the line, or with in.
func PastedRedirect(in io.Reader, out io.Writer) func(ctx context.Context, authURL string) (*url.URL, error) {
	lines := bufio.NewReader(in)
	return func(ctx context.Context, authURL string) (*url.URL, error) {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, DefaultSignInTimeout)
			defer cancel()
		}
		fmt.Fprintf(out, "Open this link in a browser, sign in, then paste here the address the browser ended on:\n%s\n> ", authURL)
		type result struct {
			line string
			err  error
		}
		done := make(chan result, 1)
		go func() {
			line, err := lines.ReadString('\n')
			done <- result{line, err}
		}()
		select {
		case r := <-done:
			line := strings.TrimSpace(r.line)
			if line == "" {
				return nil, fmt.Errorf("mcp: auth: no address pasted: %w", r.err)
			}
			u, err := url.Parse(line)
			if err != nil || u.RawQuery == "" {
				return nil, errors.New("mcp: auth: the pasted text is not the address the sign-in ended on")
			}
			return u, nil
		case <-ctx.Done():
			return nil, errors.Join(errors.New("mcp: auth: no address pasted"), ctx.Err())
		}
	}
}
