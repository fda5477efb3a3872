package apps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/apps"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// A Host over a Manager: the page on one origin, the sandbox on another.
func Example() {
	clock := &mcptest.Server{Name: "clock"}
	clock.AddTool(mcp.Tool{Name: "get-time", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://clock/time.html"}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("12:00"), nil
		})
	view := "<p>the time</p>"
	clock.AddResource(mcp.Resource{URI: "ui://clock/time.html", Name: "time", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &view}}}, nil
	})

	// Declaring the extension tells servers the host renders views.
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Extensions: mcp.UIExtension()})
	defer m.Close()
	m.Add("clock", clock.Transport())

	// Each server's views run on a name of their own under *.localhost,
	// which browsers resolve to the loopback address: one listener
	// answers them all.
	var host *apps.Host
	sandbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host.Sandbox().ServeHTTP(w, r) }))
	defer sandbox.Close()
	_, port, _ := net.SplitHostPort(sandbox.Listener.Addr().String())
	host = apps.New(m, &apps.Options{SandboxOrigin: "http://*.localhost:" + port})
	page := httptest.NewServer(host)
	defer page.Close()

	tools, _ := m.AppTools(context.Background())
	for _, t := range tools {
		fmt.Println(t.Server, t.Tool.Name, t.UI.ResourceURI)
	}
	res, err := http.Get(page.URL + "/")
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Body.Close()
	fmt.Println("page:", res.StatusCode, res.Header.Get("Content-Type"))
	// Output:
	// clock get-time ui://clock/time.html
	// page: 200 text/html; charset=utf-8
}
