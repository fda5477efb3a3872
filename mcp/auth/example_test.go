package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// A program signs in to a server behind OAuth with the loopback helper:
// the first request meets a 401, the Client finds the authorization
// server, registers, and shows the user the sign-in link; the browser
// comes back to the loopback address, and the request goes again with the
// token. (Here a stand-in for the user's browser opens the link.)
func Example() {
	var c cleanups
	defer c.run()
	as := newFakeAS(&c, nil)
	rs := newFakeRS(&c, func() *fakeAS { return as }, nil)

	lb, err := auth.NewLoopback("127.0.0.1:0", "/callback", func(authURL string) error {
		u, _ := url.Parse(authURL)
		fmt.Println("sign in at", u.Path)
		go openInBrowser(authURL) // a real program: auth.OpenBrowser, or print the link
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	a := auth.New(&auth.Config{
		ServerURL:   rs.url(),
		RedirectURL: lb.RedirectURL(),
		Browser:     lb.Browser,
		Store:       &auth.MemoryStore{}, // auth.NewFileStore("") keeps tokens across runs
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
	// sign in at /authorize
	// signed in
}

// openInBrowser does what the user's browser does with the link: the
// authorization server redirects to the loopback address at once.
func openInBrowser(authURL string) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get(authURL); err == nil {
		resp.Body.Close()
	}
}
