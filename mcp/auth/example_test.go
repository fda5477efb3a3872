package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// A server behind OAuth: the first request meets a 401, the Client finds
// the authorization server, registers, and sends the user to sign in
// (here a stand-in for the browser follows the redirect); the request then
// goes again with the token.
func Example() {
	var c cleanups
	defer c.run()
	as := newFakeAS(&c, nil)
	rs := newFakeRS(&c, func() *fakeAS { return as }, nil)

	a := auth.New(&auth.Config{
		ServerURL:   rs.url(),
		RedirectURL: "http://127.0.0.1:8976/callback",
		Browser: func(ctx context.Context, authURL string) (*url.URL, error) {
			u, _ := url.Parse(authURL)
			fmt.Println("the user signs in at", u.Path, "for", u.Query().Get("resource") == rs.url())
			return followRedirect(ctx, authURL)
		},
	})
	ctx := context.Background()
	conn, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: rs.url(), Auth: a}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "signed in"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	// Output:
	// the user signs in at /authorize for true
	// signed in
}

// followRedirect stands in for a browser: the authorization endpoint
// redirects at once.
func followRedirect(ctx context.Context, authURL string) (*url.URL, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp.Location()
}
