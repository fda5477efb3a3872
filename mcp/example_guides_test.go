package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/mcp"
)

// The fields of a remote server's transport (docs/connection.md): static
// headers, headers made for each request, and the program's own
// *http.Client.
func ExampleStreamableHTTPTransport_headers() {
	ctx := context.Background()
	token := "a-token"
	freshHeaders := func(ctx context.Context) (http.Header, error) {
		return http.Header{"X-Request-Tag": {"tag"}}, nil
	}
	myHTTPClient := &http.Client{}

	t := &mcp.StreamableHTTPTransport{
		URL:        "https://example.com/mcp",
		Headers:    http.Header{"Authorization": {"Bearer " + token}},
		HeaderFunc: func(ctx context.Context) (http.Header, error) { return freshHeaders(ctx) }, // per request, optional
		Client:     myHTTPClient,                                                                // optional; no overall Timeout (SSE streams stay open)
	}
	c, err := mcp.Connect(ctx, t, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

// A Manager over the config files of a project (docs/manager.md).
func ExampleManager_config() {
	ctx := context.Background()

	cfg, err := mcp.LoadConfig(".") // the files of the table below, for this directory and its parents
	if err != nil {
		log.Print(err) // every bad file and entry, each a *config.Error; the good ones still load
	}
	m := mcp.NewManager(cfg, nil) // starts nothing yet
	defer m.Close()               // closes every server in parallel, bounded
	tools, _ := m.Tools(ctx)      // connects lazily, in parallel; names mcp__<server>__<tool>
	res, err := m.CallTool(ctx, "mcp__demo__add", map[string]int{"a": 17, "b": 25})
	for _, s := range m.Status() {
		fmt.Println(s.Name, s.State, s.Tools, s.Err)
	}

	fmt.Println(len(tools), res, err)
}

// Weather is a tool's structured result, for CallToolAs.
type Weather struct {
	City  string  `json:"city"`
	TempC float64 `json:"tempC"`
}

// The Manager as a host (docs/manager.md): handlers per server, a
// server's Connection, and every server's prompts and resources.
func ExampleManagerOptions() {
	ctx := context.Background()
	var cfg *mcp.Config
	askModelFor := func(server string) mcp.SamplingHandler { return nil }
	askUserFor := func(server string) mcp.ElicitHandler { return nil }
	var roots []mcp.Root
	args := map[string]string{"city": "Oslo"}

	m := mcp.NewManager(cfg, &mcp.ManagerOptions{
		// Each server's Connection gets its handlers; the name says who asks.
		ServerOptions: func(name string, sc *config.Server) *mcp.Options {
			return &mcp.Options{Sampling: askModelFor(name), ElicitForm: askUserFor(name), Roots: roots}
		},
	})
	c, err := m.Connection(ctx, "github") // a server's live *mcp.Connection
	prompts, _ := m.Prompts(ctx)          // every server's, Ref "mcp__<server>__<prompt>"
	got, _ := m.GetPrompt(ctx, "mcp__github__review", map[string]string{"pr": "42"})
	resources, _ := m.Resources(ctx)                                          // Ref "@<server>:<uri>", as Claude Code shows them (a ':' or '%' in the server name as %3A, %25)
	read, _ := m.ReadResource(ctx, "@docs:file:///guide.md")                  // also ResourceTemplates, Subscribe, Complete
	w, res, err := mcp.CallToolAs[Weather](ctx, m, "mcp__weather__now", args) // structuredContent as a Go type

	fmt.Println(c, prompts, got, resources, read, w, res, err)
}
