package auth_test

import (
	"context"
	"github.com/mcplug/mcplug/mcp/config"
	"log"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

// A remote server behind OAuth needs one field, Auth
// (docs/authorization.md).
func ExampleNew_loopback() {
	ctx := context.Background()
	url := "https://mcp.example.com/mcp"

	lb, _ := auth.NewLoopback("127.0.0.1:0", "/callback", auth.OpenBrowser) // or a func that prints the link
	store, _ := auth.NewFileStore("")                                       // the user's config dir (mcplug/oauth), mode 0600
	a := auth.New(&auth.Config{ServerURL: url, RedirectURL: lb.RedirectURL(), Browser: lb.Browser, Store: store})
	c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: url, Auth: a}, nil)

	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

// A Manager makes each remote server's Authorizer from its config entry,
// and signs in when the user asks (docs/authorization.md).
func ExampleNew_manager() {
	ctx := context.Background()
	cfg, _ := mcp.LoadConfig(".")
	store, _ := auth.NewFileStore("")
	lb, _ := auth.NewLoopback("127.0.0.1:8976", "/callback", auth.OpenBrowser)

	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Authorizer: func(name string, sc *config.Server) mcp.Authorizer {
		return auth.New(&auth.Config{ServerURL: sc.URL, ClientID: sc.OAuth.ClientID, ClientSecret: sc.OAuth.ClientSecret, Scopes: sc.OAuth.Scopes,
			RedirectURL: "http://127.0.0.1:8976/callback", Store: store}) // no Browser: sign in when the user asks
	}})
	err := m.SignIn(ctx, "issues", lb.Browser) // for a server in StateNeedsAuthorization

	if err != nil {
		log.Fatal(err)
	}
}
