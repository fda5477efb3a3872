package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/apps"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/require"
)

// rig is a Manager of some official example servers and servers of the
// tests' own, an apps.Host serving them, and a browser on the host page.
type rig struct {
	m          *mcp.Manager
	hostURL    string
	ctx        context.Context // the browser tab's
	messages   chan string     // ui/message texts the Go host received
	contexts   chan string     // ui/update-model-context texts the Go host received
	forbidden  *atomic.Int32   // requests that reached the origin no CSP names
	slow       chan string     // the probe's slow tool: "started", then "cancelled"
	sandbox    sandboxLog      // the paths the sandbox's listener was asked for
	allowed    string          // an origin views may declare
	forbid     string          // an origin no view declares
	pattern    string          // the sandbox's wildcard origin
	hostOrigin string          // the page's
}

// rigOptions say what a rig serves.
type rigOptions struct {
	examples []string                     // official example servers ("server-basic-vue"), by package
	args     map[string][]string          // more arguments of an example server
	env      map[string]map[string]string // the environment of an example server
	servers  map[string]*mcptest.Server   // servers of the test's own, by name
	// servers built from the rig's origins, by name
	build map[string]func(r *rig) *mcptest.Server
	// pageHost is the name the browser gives the page; "" is 127.0.0.1.
	pageHost string
}

// sandboxLog records the paths asked of the sandbox's listener.
type sandboxLog struct {
	mu    *sync.Mutex
	paths *[]string
}

func (l sandboxLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.paths = append(*l.paths, p)
}

// seen lists the paths asked so far.
func (l sandboxLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), *l.paths...)
}

func newRig(t *testing.T, o rigOptions) *rig {
	exe, env := browser(t)
	servers := exampleServers(t)

	cfgFile := filepath.Join(t.TempDir(), "mcp.json")
	entries := map[string]any{}
	for _, name := range o.examples {
		file, ok := servers[name]
		require.True(t, ok, "%s is not installed", name)
		entry := map[string]any{"command": "node", "args": append([]string{file, "--stdio"}, o.args[name]...)}
		if o.env[name] != nil {
			entry["env"] = o.env[name]
		}
		entries[strings.TrimPrefix(name, "server-")] = entry
	}
	b, err := json.Marshal(map[string]any{"mcpServers": entries})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgFile, b, 0o600))
	cfg, err := config.LoadFile(cfgFile)
	require.NoError(t, err)

	r := &rig{messages: make(chan string, 100), contexts: make(chan string, 100), forbidden: new(atomic.Int32), slow: make(chan string, 10),
		sandbox: sandboxLog{mu: new(sync.Mutex), paths: new([]string)}}
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.forbidden.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "you should not see this")
	}))
	t.Cleanup(forbidden.Close)
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "allowed")
	}))
	t.Cleanup(allowed.Close)
	r.allowed, r.forbid = allowed.URL, forbidden.URL

	r.m = mcp.NewManager(cfg, &mcp.ManagerOptions{Extensions: mcp.UIExtension(), Logger: slog.New(slog.DiscardHandler), ConnectTimeout: 60 * time.Second})
	t.Cleanup(func() { r.m.Close() })
	for name, srv := range o.servers {
		require.NoError(t, r.m.Add(name, srv.Transport()))
	}
	for name, build := range o.build {
		require.NoError(t, r.m.Add(name, build(r).Transport()))
	}

	// Two listeners: the page's, and the sandbox's, which every name
	// under localhost reaches (Chromium resolves them all to the
	// loopback address): each server's views get one of their own.
	var h *apps.Host
	sandbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.sandbox.add(req.URL.Path)
		h.Sandbox().ServeHTTP(w, req)
	}))
	t.Cleanup(sandbox.Close)
	_, port, _ := net.SplitHostPort(sandbox.Listener.Addr().String())
	r.pattern = "http://*.localhost:" + port
	h = apps.New(r.m, &apps.Options{
		SandboxOrigin: r.pattern,
		Message: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content) error {
			for _, c := range content {
				select {
				case r.messages <- v.Server + ": " + c.Text:
				default:
				}
			}
			return nil
		},
		UpdateModelContext: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content, structured json.RawMessage) error {
			for _, c := range content {
				select {
				case r.contexts <- v.Server + ": " + c.Text:
				default:
				}
			}
			return nil
		},
	})
	hostSrv := httptest.NewServer(h)
	t.Cleanup(hostSrv.Close)
	r.hostOrigin = hostSrv.URL
	if o.pageHost != "" {
		_, port, _ := net.SplitHostPort(hostSrv.Listener.Addr().String())
		r.hostOrigin = "http://" + net.JoinHostPort(o.pageHost, port)
	}
	r.hostURL = r.hostOrigin + "/"

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", "shell"),
		chromedp.NoSandbox,
		chromedp.Flag("single-process", true),
		chromedp.Flag("no-zygote", true),
		chromedp.DisableGPU,
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
		chromedp.Env(env...),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(tcancel)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(r.hostURL)))
	want := len(o.examples) + len(o.servers) + len(o.build)
	_, err = chromedp.Run(tab, chromedp.Poll[bool](fmt.Sprintf(`window.mcplugPage && window.mcplugPage.tools && new Set(window.mcplugPage.tools.map((t) => t.server)).size >= %d`, want), chromedp.WithPollingTimeout(90*time.Second)))
	require.NoError(t, err, "the page lists the app tools of every server")
	r.ctx = tab
	return r
}

// eval runs js in the host page and decodes its value into out (js may
// return a promise).
func (r *rig) eval(t *testing.T, js string, out any) {
	t.Helper()
	raw, err := chromedp.Run(r.ctx, chromedp.Evaluate[json.RawMessage](js, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "evaluating %s", js)
	require.NoError(t, json.Unmarshal(raw, out))
}

// open shows the view of a tool and calls the tool with args.
func (r *rig) open(t *testing.T, server, tool, args string) {
	t.Helper()
	var ok bool
	r.eval(t, fmt.Sprintf(`(async () => {
		const tool = mcplugPage.tools.find((t) => t.server === %q && t.name === %q);
		const view = await mcplugPage.select(tool);
		if (!view) return false;
		document.getElementById("args").value = %q;
		await mcplugPage.call();
		return true;
	})()`, server, tool, args), &ok)
	require.True(t, ok, "the view of %s/%s opened", server, tool)
}

// show shows the view of a tool without calling it.
func (r *rig) show(t *testing.T, server, tool string) {
	t.Helper()
	var ok bool
	r.eval(t, fmt.Sprintf(`(async () => {
		const tool = mcplugPage.tools.find((t) => t.server === %q && t.name === %q);
		return !!(await mcplugPage.select(tool));
	})()`, server, tool), &ok)
	require.True(t, ok, "the view of %s/%s opened", server, tool)
}

// logHas waits until the view's message log has a message matching the
// JavaScript predicate over e (one log entry: {from|to, msg}).
func (r *rig) logHas(t *testing.T, what, pred string) {
	t.Helper()
	_, err := chromedp.Run(r.ctx, chromedp.Poll[bool](`mcplugPage.view && mcplugPage.view.log.some((e) => `+pred+`)`, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		var log string
		r.eval(t, `JSON.stringify(mcplugPage.view ? mcplugPage.view.log.map((e) => (e.from ? "< " : e.to ? "> " : "! ") + JSON.stringify(e.msg || e.refused).slice(0, 200)) : [])`, &log)
		t.Fatalf("the log never had %s: %v\n%s", what, err, log)
	}
}

// inView runs js in the document of the view (the srcdoc frame inside the
// sandbox proxy) and returns its string value.
func (r *rig) inView(t *testing.T, js string) string {
	t.Helper()
	return r.inViewOf(t, "", js)
}

// inViewOf runs js in the document of the view whose id is id (any
// view's, if id is "") and returns its string value.
func (r *rig) inViewOf(t *testing.T, id, js string) string {
	t.Helper()
	out, err := chromedp.Run(r.ctx, func(ctx context.Context, tg *chromedp.Target) (string, error) {
		tree, err := cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return "", err
		}
		var find func(*page.FrameTree) *page.FrameTree
		find = func(ft *page.FrameTree) *page.FrameTree {
			if ft.Frame.URL == "about:srcdoc" {
				return ft
			}
			if id != "" && strings.HasSuffix(ft.Frame.URL, "/sandbox/"+id) && len(ft.ChildFrames) > 0 {
				return ft.ChildFrames[0]
			}
			if id != "" && strings.Contains(ft.Frame.URL, "/sandbox/") {
				return nil // another view's
			}
			for _, c := range ft.ChildFrames {
				if f := find(c); f != nil {
					return f
				}
			}
			return nil
		}
		f := find(tree.FrameTree)
		if f == nil {
			return "", fmt.Errorf("no view frame")
		}
		world, err := cdp.Call(ctx, tg, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.Frame.ID})
		if err != nil {
			return "", err
		}
		yes := true
		res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{Expression: js, ContextID: world.ExecutionContextID, AwaitPromise: &yes, ReturnByValue: &yes})
		if err != nil {
			return "", err
		}
		if res.ExceptionDetails != nil {
			return "", fmt.Errorf("%s", res.ExceptionDetails.Text)
		}
		var out string
		err = json.Unmarshal(res.Result.Value, &out)
		return out, err
	})
	require.NoError(t, err)
	return out
}

// screenshot saves the view as an artefact, and to $MCPLUG_SCREENSHOTS
// when set.
func (r *rig) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(r.ctx, chromedp.Screenshot(chromedp.CSS("body")))
	require.NoError(t, err)
	require.NotEmpty(t, png)
	require.NoError(t, os.WriteFile(filepath.Join(t.ArtifactDir(), name+".png"), png, 0o644))
	if dir := os.Getenv("MCPLUG_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	}
}

// pollView polls js in the view until ok holds of its value.
func (r *rig) pollView(t *testing.T, js string, ok func(string) bool) string {
	t.Helper()
	return r.pollOf(t, "", js, ok)
}

// pollOf polls js in the view whose id is id (any view's, if "") until ok
// holds of its value.
func (r *rig) pollOf(t *testing.T, id, js string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		v := r.inViewOf(t, id, `String(`+js+`)`)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("the view never showed what was expected; last: %q", v)
		}
		require.NoError(t, chromedp.Do(r.ctx, chromedp.Sleep(50*time.Millisecond)))
	}
}
