// Command apphost serves a local page that shows the MCP Apps of the
// servers configured for the current directory (the files Claude Code
// reads; see mcp.LoadConfig, or -config FILE for one .mcp.json-shaped
// file): it lists their app tools; pick one, give its arguments, call it,
// and use the view it shows.
//
//	go run ./examples/apphost [-addr 127.0.0.1:0] [-config FILE]
//
// It prints the page's address. The views run in a sandbox on a second
// port, each server's on an origin of its own (a name under localhost,
// http://<label>.localhost:PORT, which browsers resolve to the loopback
// address), with only what their servers declared. Project servers the
// user has not approved stay off, as in Claude Code; -approve approves
// them for this run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"unicode"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/apps"
	"github.com/mcplug/mcplug/mcp/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apphost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "the page's address (the sandbox takes a port of 127.0.0.1, reached as *.localhost by a browser on this machine)")
	file := fs.String("config", "", "a .mcp.json-shaped file to read instead of the current directory's config")
	approve := fs.Bool("approve", false, "approve the project's servers for this run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var cfg *mcp.Config
	var err error
	if *file != "" {
		cfg, err = config.LoadFile(*file)
	} else {
		cfg, err = mcp.LoadConfig(".")
	}
	if err != nil && cfg == nil {
		fmt.Fprintln(stderr, "apphost:", err)
		return 1
	}
	for _, e := range cfg.Errors {
		fmt.Fprintln(stderr, "apphost:", e)
	}
	opts := &mcp.ManagerOptions{Extensions: mcp.UIExtension(), Logger: slog.New(slog.DiscardHandler)}
	if *approve {
		opts.ApproveServer = func(context.Context, *config.Server) bool { return true }
	}
	m := mcp.NewManager(cfg, opts)
	defer m.Close()

	page, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "apphost:", err)
		return 1
	}
	// The sandbox's names are under localhost: its listener is on the
	// loopback address, whatever the page's.
	box, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		page.Close()
		fmt.Fprintln(stderr, "apphost:", err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, boxPort, _ := net.SplitHostPort(box.Addr().String())
	h := apps.New(m, &apps.Options{
		SandboxOrigin: "http://*.localhost:" + boxPort,
		Logger:        logger,
		Message: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content) error {
			fmt.Fprintf(stdout, "%s says: %s\n", printable(v.Server), text(content))
			return nil
		},
		UpdateModelContext: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content, structured json.RawMessage) error {
			fmt.Fprintf(stdout, "%s tells the model: %s %s\n", printable(v.Server), text(content), printable(string(structured)))
			return nil
		},
	})
	pageSrv := &http.Server{Handler: h}
	boxSrv := &http.Server{Handler: h.Sandbox()}
	done := make(chan error, 2)
	go func() { done <- pageSrv.Serve(page) }()
	go func() { done <- boxSrv.Serve(box) }()
	fmt.Fprintf(stdout, "apphost: http://%s/\n", page.Addr())

	select {
	case <-ctx.Done():
	case err = <-done:
	}
	pageSrv.Close()
	boxSrv.Close()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "apphost:", err)
		return 1
	}
	return 0
}

func text(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return printable(strings.Join(parts, " "))
}

// printable is s with what a terminal would act on (control characters,
// bidirectional overrides) shown as '?': a view's text is a stranger's.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return '?'
		}
		return r
	}, s)
}
