package apps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/apps"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// fixture is a Host over two fake servers with views ("fake" and
// "other"), its page and its sandbox served on two listeners, and the
// page's key.
type fixture struct {
	host     *apps.Host
	page     *httptest.Server
	sandbox  *httptest.Server
	origin   string // SandboxOrigin: http://*.localhost:PORT
	client   *http.Client
	token    string
	messages chan []mcp.Content
	release  chan struct{} // lets the server's "block" calls end
	m        *mcp.Manager
}

func appServer(release <-chan struct{}, viewMeta string) *mcptest.Server {
	srv := &mcptest.Server{Name: "fake"}
	view := json.RawMessage(`{"ui":{"resourceUri":"ui://fake/view.html"}}`)
	srv.AddTool(mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: view},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("shown " + string(r.Arguments)), nil
		})
	srv.AddTool(mcp.Tool{Name: "refresh", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("refreshed"), nil
		})
	srv.AddTool(mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mcptest.TextResult("done"), nil
		})
	srv.AddTool(mcp.Tool{Name: "secret", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["model"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("secret"), nil
		})
	page := "<p>the view</p>"
	srv.AddResource(mcp.Resource{URI: "ui://fake/view.html", Name: "view", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &page, Meta: json.RawMessage(viewMeta)}}}, nil
	})
	srv.AddResource(mcp.Resource{URI: "file:///data.txt", Name: "data"}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return mcptest.TextResource(r.URI, "some data"), nil
	})
	return srv
}

func newFixture(t *testing.T, viewMeta string, opts *apps.Options) *fixture {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	f := &fixture{messages: make(chan []mcp.Content, 10), release: make(chan struct{})}
	f.m = mcp.NewManager(nil, &mcp.ManagerOptions{Extensions: mcp.UIExtension(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, f.m.Add("fake", appServer(f.release, viewMeta).Transport()))
	require.NoError(t, f.m.Add("other", appServer(f.release, "").Transport()))
	var h *apps.Host
	f.sandbox = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Sandbox().ServeHTTP(w, r) }))
	// Every name reaches the sandbox's listener, as every name under
	// localhost reaches the loopback address in a browser.
	dial := f.sandbox.Listener.Addr().String()
	f.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, dial)
	}}}
	if opts == nil {
		opts = &apps.Options{}
	}
	_, port, _ := net.SplitHostPort(dial)
	f.origin = "http://*.localhost:" + port
	opts.SandboxOrigin = f.origin
	h = apps.New(f.m, opts)
	f.host = h
	f.page = httptest.NewServer(h)
	t.Cleanup(func() {
		f.page.Close()
		f.client.CloseIdleConnections()
		f.sandbox.Close()
		f.m.Close()
		goleak.VerifyNone(t, leaks)
	})
	res, err := http.Get(f.page.URL + "/")
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`name="mcplug-host" content="([^"]*)"`).FindSubmatch(b)
	require.NotNil(t, m, "the page carries its config")
	var cfg struct{ Token, SandboxOrigin string }
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &cfg))
	require.Equal(t, f.origin, cfg.SandboxOrigin)
	f.token = cfg.Token
	return f
}

// getSandbox asks the sandbox for url, as a browser at url's name would.
func (f *fixture) getSandbox(t *testing.T, url string) *http.Response {
	t.Helper()
	res, err := f.client.Get(url)
	require.NoError(t, err)
	res.Body.Close()
	return res
}

// do calls the API as the page does, and decodes the answer into out.
func (f *fixture) do(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, f.page.URL+"/api"+path, r)
	require.NoError(t, err)
	req.Header.Set("X-Mcplug-Host", f.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	if out != nil {
		require.NoError(t, json.NewDecoder(res.Body).Decode(out))
	}
	return res.StatusCode
}

type opened struct {
	ID, HTML, Sandbox, Allow string
	PrefersBorder            bool
	Tool                     mcp.Tool
	CSP                      *mcp.ResourceCSP
}

func (f *fixture) open(t *testing.T) opened {
	t.Helper()
	return f.openOf(t, "fake")
}

// openOf opens the view of a server's "show".
func (f *fixture) openOf(t *testing.T, server string) opened {
	t.Helper()
	var o opened
	require.Equal(t, http.StatusOK, f.do(t, "POST", "/views", map[string]string{"server": server, "tool": "show"}, &o))
	return o
}

// sandboxOrigin is the origin of the proxy of an opened view.
func sandboxOrigin(t *testing.T, o opened) string {
	t.Helper()
	origin, ok := strings.CutSuffix(o.Sandbox, "/sandbox/"+o.ID)
	require.True(t, ok, o.Sandbox)
	return origin
}

type answer struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func (f *fixture) rpc(t *testing.T, id string, msg any) answer {
	t.Helper()
	var a answer
	require.Equal(t, http.StatusOK, f.do(t, "POST", "/views/"+id+"/rpc", msg, &a))
	return a
}

func TestThePageListsAppToolsAndOpensTheirViews(t *testing.T) {
	f := newFixture(t, `{"ui":{"prefersBorder":true}}`, nil)
	var tools []struct{ Server, Name, ResourceURI string }
	require.Equal(t, http.StatusOK, f.do(t, "GET", "/tools", nil, &tools))
	assert.ElementsMatch(t, []struct{ Server, Name, ResourceURI string }{{"fake", "show", "ui://fake/view.html"}, {"other", "show", "ui://fake/view.html"}}, tools, "tools for apps alone are not the page's to call")

	o := f.open(t)
	assert.Equal(t, "<p>the view</p>", o.HTML)
	assert.Equal(t, "show", o.Tool.Name)
	assert.True(t, o.PrefersBorder)
	_, port, _ := net.SplitHostPort(f.sandbox.Listener.Addr().String())
	assert.Regexp(t, `^http://[0-9a-f]{32}\.localhost:`+port+`/sandbox/`+o.ID+`$`, o.Sandbox)

	var res mcp.CallToolResult
	require.Equal(t, http.StatusOK, f.do(t, "POST", "/views/"+o.ID+"/call", map[string]any{"arguments": map[string]int{"n": 1}}, &res))
	assert.Equal(t, `shown {"n":1}`, res.Text())

	var failed struct{ Error string }
	assert.Equal(t, http.StatusNotFound, f.do(t, "POST", "/views", map[string]string{"server": "fake", "tool": "refresh"}, &failed))
	assert.Contains(t, failed.Error, "no app tool")
	assert.Equal(t, http.StatusOK, f.do(t, "DELETE", "/views/"+o.ID, nil, nil))
	assert.Equal(t, http.StatusNotFound, f.do(t, "POST", "/views/"+o.ID+"/call", map[string]any{}, nil), "closed")
}

func TestTheAPIAnswersOnlyItsOwnPage(t *testing.T) {
	f := newFixture(t, "", nil)
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		want    int
	}{
		{"no key", map[string]string{"X-Mcplug-Host": ""}, `{}`, http.StatusForbidden},
		{"a wrong key", map[string]string{"X-Mcplug-Host": "guess"}, `{}`, http.StatusForbidden},
		{"from another site", map[string]string{"Sec-Fetch-Site": "cross-site"}, `{}`, http.StatusForbidden},
		{"from another origin", map[string]string{"Origin": "http://evil.example"}, `{}`, http.StatusForbidden},
		{"not JSON", map[string]string{"Content-Type": "text/plain"}, `{}`, http.StatusUnsupportedMediaType},
		{"too large", nil, `{"server":"` + strings.Repeat("x", apps.MaxMessageSize) + `"}`, http.StatusRequestEntityTooLarge},
		{"the page itself", nil, `{"server":"fake","tool":"show"}`, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", f.page.URL+"/api/views", strings.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("X-Mcplug-Host", f.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, tt.want, res.StatusCode)
		})
	}
}

func TestTheSandboxServesOpenViewsUnderTheirCSP(t *testing.T) {
	f := newFixture(t, `{"ui":{"csp":{"connectDomains":["https://api.example","https://x.example; script-src *"],"resourceDomains":["https://*.cdn.example"],`+
		`"frameDomains":["http://*.localhost:1","http://0123456789abcdef0123456789abcdef.LOCALHOST","http://*.sub.localhost","https://*.host","http://localhost:3001"]}}}`, nil)
	o := f.open(t)
	origin := sandboxOrigin(t, o)
	assert.Equal(t, http.StatusNotFound, f.getSandbox(t, origin+"/sandbox/nothing").StatusCode)
	assert.Equal(t, http.StatusNotFound, f.getSandbox(t, origin+"/").StatusCode)
	res := f.getSandbox(t, o.Sandbox)
	require.Equal(t, http.StatusOK, res.StatusCode)
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{
		"default-src 'none'",
		"connect-src https://api.example;",
		// What a bundled view makes itself, as the reference host allows:
		// PDF.js starts a blob: worker that imports its code from a data:
		// URL. A data: worker the reference host does not start either.
		"script-src 'unsafe-inline' 'unsafe-eval' data: blob: https://*.cdn.example;",
		"worker-src blob: https://*.cdn.example;",
		"style-src 'unsafe-inline' data: blob: https://*.cdn.example;",
		"frame-src https://*.host http://localhost:3001;",
		"base-uri 'none'",
		"object-src 'none'",
		"form-action 'none'",
		"frame-ancestors " + f.page.URL,
	} {
		assert.Contains(t, csp, want)
	}
	assert.NotContains(t, csp, "x.example", "a source that would add a directive is left out")
	assert.NotContains(t, csp, "script-src *")
	assert.NotContains(t, csp, "*.localhost", "a source that names the sandbox's origins is left out")
	assert.NotContains(t, strings.ToLower(csp), ".localhost ")
	assert.Equal(t, &mcp.ResourceCSP{ConnectDomains: []string{"https://api.example"}, ResourceDomains: []string{"https://*.cdn.example"}, FrameDomains: []string{"https://*.host", "http://localhost:3001"}}, o.CSP, "the page is told what was applied")
	assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, "?1", res.Header.Get("Origin-Agent-Cluster"))

	t.Run("the page's own CSP frames only the sandbox", func(t *testing.T) {
		res, err := http.Get(f.page.URL + "/")
		require.NoError(t, err)
		res.Body.Close()
		assert.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-src "+f.origin+";")
		assert.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	})
}

// Views of different servers must not reach one another: each server's
// run on an origin of its own, and a view's proxy is served on its own
// server's origin alone.
func TestEachServerHasASandboxOriginOfItsOwn(t *testing.T) {
	f := newFixture(t, "", nil)
	a1, a2, b := f.openOf(t, "fake"), f.openOf(t, "fake"), f.openOf(t, "other")
	originA, originB := sandboxOrigin(t, a1), sandboxOrigin(t, b)
	assert.Equal(t, originA, sandboxOrigin(t, a2), "one server, one origin")
	assert.NotEqual(t, originA, originB, "two servers, two origins")
	assert.NotContains(t, originA, "fake", "a label gives nothing of the server's name away")

	_, port, _ := net.SplitHostPort(f.sandbox.Listener.Addr().String())
	tests := []struct {
		name string
		url  string
		want int
	}{
		{"a view on its server's origin", a1.Sandbox, http.StatusOK},
		{"its name in capitals", strings.ToUpper(originA) + "/sandbox/" + a1.ID, http.StatusOK},
		{"a view on another server's origin", originB + "/sandbox/" + a1.ID, http.StatusNotFound},
		{"another server's view on this one's", originA + "/sandbox/" + b.ID, http.StatusNotFound},
		{"the sandbox's domain itself", "http://localhost:" + port + "/sandbox/" + a1.ID, http.StatusMisdirectedRequest},
		{"a name under it that is no label", "http://evil.localhost:" + port + "/sandbox/" + a1.ID, http.StatusMisdirectedRequest},
		{"a label under a deeper name", "http://x." + strings.TrimPrefix(originA, "http://") + "/sandbox/" + a1.ID, http.StatusMisdirectedRequest},
		{"a stranger's name", "http://evil.example:" + port + "/sandbox/" + a1.ID, http.StatusMisdirectedRequest},
		{"the loopback address", "http://127.0.0.1:" + port + "/sandbox/" + a1.ID, http.StatusMisdirectedRequest},
		{"another port", strings.Replace(a1.Sandbox, ":"+port, ":1", 1), http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.getSandbox(t, tt.url)
			assert.Equal(t, tt.want, res.StatusCode)
			if tt.want != http.StatusOK {
				assert.Equal(t, "default-src 'none'; sandbox", res.Header.Get("Content-Security-Policy"), "a page that is not a view's has no origin and runs nothing")
			}
		})
	}

	t.Run("labels are keyed: another Host gives the same server another origin", func(t *testing.T) {
		g := newFixture(t, "", nil)
		assert.NotEqual(t, originA, sandboxOrigin(t, g.open(t)))
	})
	t.Run("the page is not served on a sandbox name", func(t *testing.T) {
		req, err := http.NewRequest("POST", f.page.URL+"/api/views", strings.NewReader(`{"server":"fake","tool":"show"}`))
		require.NoError(t, err)
		req.Host = strings.TrimPrefix(originA, "http://")
		req.Header.Set("X-Mcplug-Host", f.token)
		req.Header.Set("Content-Type", "application/json")
		h := apps.New(f.m, &apps.Options{SandboxOrigin: f.origin, Hosts: []string{req.Host}})
		w := httptest.NewRecorder()
		// The new Host has its own key: take it from its page.
		page := httptest.NewRequest("GET", "/", nil)
		page.Host = req.Host
		pw := httptest.NewRecorder()
		h.ServeHTTP(pw, page)
		m := regexp.MustCompile(`name="mcplug-host" content="([^"]*)"`).FindStringSubmatch(pw.Body.String())
		require.NotNil(t, m)
		var cfg struct{ Token string }
		require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &cfg))
		req.Header.Set("X-Mcplug-Host", cfg.Token)
		h.ServeHTTP(w, req)
		assert.Equal(t, http.StatusBadRequest, w.Code)
		assert.Contains(t, w.Body.String(), "sandbox")
	})
}

func TestAViewsRequestsAreCheckedAndProxied(t *testing.T) {
	var mu sync.Mutex
	var said []mcp.Content
	f := newFixture(t, "", &apps.Options{Message: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content) error {
		mu.Lock()
		defer mu.Unlock()
		said = append(said, content...)
		return nil
	}})
	o := f.open(t)
	call := func(name string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": map[string]any{}}}
	}
	tests := []struct {
		name   string
		msg    any
		code   int
		result string
	}{
		{"a tool for apps", call("refresh"), 0, "refreshed"},
		{"the view's own tool", call("show"), 0, "shown"},
		{"a tool hidden from apps", call("secret"), apps.CodeNotAllowed, ""},
		{"a tool the server does not have", call("nope"), apps.CodeNotAllowed, ""},
		{"a tool without a name", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{}}, apps.CodeInvalidParams, ""},
		{"a name under another case (read by exact key, as the App SDK writes it)", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"Name": "show"}}, apps.CodeInvalidParams, ""},
		{"a method under another case", map[string]any{"jsonrpc": "2.0", "id": 1, "Method": "tools/call", "params": map[string]any{"name": "show"}}, apps.CodeInvalidRequest, ""},
		{"a resource", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": map[string]any{"uri": "file:///data.txt"}}, 0, "some data"},
		{"not JSON-RPC 2.0", map[string]any{"jsonrpc": "1.0", "id": 1, "method": "ping"}, apps.CodeInvalidRequest, ""},
		{"an id that is an object", map[string]any{"jsonrpc": "2.0", "id": map[string]int{}, "method": "ping"}, apps.CodeInvalidRequest, ""},
		{"no id", map[string]any{"jsonrpc": "2.0", "method": "tools/call"}, apps.CodeInvalidRequest, ""},
		{"not an object", []int{1, 2}, apps.CodeParseError, ""},
		{"a method not for views", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": map[string]any{}}, apps.CodeMethodNotFound, ""},
		{"ui/message", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ui/message", "params": map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": "hello"}}}}, 0, "{}"},
		{"ui/message not as the user", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ui/message", "params": map[string]any{"role": "assistant", "content": []any{}}}, apps.CodeInvalidParams, ""},
		{"ui/update-model-context, which the host does not take", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ui/update-model-context", "params": map[string]any{}}, apps.CodeMethodNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.rpc(t, o.ID, tt.msg)
			if tt.code != 0 {
				require.NotNil(t, a.Error, "result %s", a.Result)
				assert.Equal(t, tt.code, a.Error.Code, a.Error.Message)
				return
			}
			require.Nil(t, a.Error)
			assert.Contains(t, string(a.Result), tt.result)
		})
	}
	mu.Lock()
	assert.Equal(t, []mcp.Content{{Type: "text", Text: "hello"}}, said)
	mu.Unlock()
	res, err := f.m.CallAppTool(context.Background(), "fake", "refresh", nil)
	require.NoError(t, err, "the connection is unharmed")
	assert.Equal(t, "refreshed", res.Text())
}

func TestAViewMayNotAskTooMuchAtOnce(t *testing.T) {
	f := newFixture(t, "", nil)
	o := f.open(t)
	var wg sync.WaitGroup
	answers := make(chan answer, apps.MaxInFlight)
	for i := range apps.MaxInFlight {
		wg.Go(func() {
			answers <- f.rpc(t, o.ID, map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": map[string]any{"name": "block"}})
		})
	}
	// Wait until all are being served: one more is refused.
	require.Eventually(t, func() bool {
		a := f.rpc(t, o.ID, map[string]any{"jsonrpc": "2.0", "id": "x", "method": "ping"})
		return a.Error != nil && a.Error.Code == apps.CodeBusy && strings.Contains(a.Error.Message, "at once")
	}, 10*time.Second, time.Millisecond)
	close(f.release)
	wg.Wait()
	close(answers)
	for a := range answers {
		assert.Nil(t, a.Error)
	}
}

func TestOpenViewsAreBounded(t *testing.T) {
	f := newFixture(t, "", nil)
	first := f.open(t)
	for range apps.MaxViews {
		f.open(t)
	}
	assert.Equal(t, http.StatusNotFound, f.do(t, "POST", "/views/"+first.ID+"/rpc", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"}, nil), "the oldest was closed")
	assert.Equal(t, http.StatusNotFound, f.getSandbox(t, first.Sandbox).StatusCode)
}

func TestPermissionsAreTheHostsToGrant(t *testing.T) {
	meta := `{"ui":{"permissions":{"camera":{},"microphone":{},"clipboardWrite":{}}}}`
	tests := []struct {
		name  string
		grant func(*apps.ViewInfo) *mcp.ResourcePermissions
		want  string
	}{
		{"none by default", nil, ""},
		{"what is asked and granted", func(*apps.ViewInfo) *mcp.ResourcePermissions {
			return &mcp.ResourcePermissions{Camera: &struct{}{}, Geolocation: &struct{}{}, ClipboardWrite: &struct{}{}}
		}, "camera; clipboard-write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, meta, &apps.Options{Permissions: tt.grant})
			assert.Equal(t, tt.want, f.open(t).Allow)
		})
	}
}

func TestNewWantsAWildcardSandboxOrigin(t *testing.T) {
	for _, origin := range []string{"", "localhost:8081", "ftp://*.h", "http://*.h/path", "http://u@*.h", "http://*.h?q",
		"http://127.0.0.1:8081", "http://localhost:8081", "http://*.1.2.3.4:8081", "http://*.*.localhost", "http://a.*.localhost", "http://*", "http://*.localhost:0", "http://*.localhost:99999", "http://*.-x.localhost"} {
		t.Run(fmt.Sprintf("%q", origin), func(t *testing.T) {
			msg := panicked(func() { apps.New(nil, &apps.Options{SandboxOrigin: origin}) })
			assert.True(t, strings.HasPrefix(msg, fmt.Sprintf("apps: SandboxOrigin %q ", origin)), msg)
			assert.Contains(t, msg, "give a wildcard origin such as http://*.localhost:8081")
		})
	}
	for _, origin := range []string{"http://*.localhost:8081", "https://*.sandbox.example", "http://*.LOCALHOST:80"} {
		t.Run(fmt.Sprintf("%q is one", origin), func(t *testing.T) {
			assert.NotPanics(t, func() { apps.New(nil, &apps.Options{SandboxOrigin: origin}) })
		})
	}
	t.Run("an unknown content type", func(t *testing.T) {
		assert.PanicsWithValue(t, `apps: ContentTypes: "video" is not a content type (text, image, audio, resource, resource_link)`, func() {
			apps.New(nil, &apps.Options{SandboxOrigin: "http://*.localhost:1", ContentTypes: []string{"text", "video"}})
		})
	})
}

// panicked is what f panics with, or "".
func panicked(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// A page reached by a name other than its own (a DNS rebinding of a
// stranger's site to this program) is not served.
func TestThePageAnswersOnlyToItsOwnNames(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string
		host  string
		want  int
	}{
		{"loopback by default", nil, "127.0.0.1:8080", http.StatusOK},
		{"localhost by default", nil, "localhost:1", http.StatusOK},
		{"::1 by default", nil, "[::1]:1", http.StatusOK},
		{"a stranger's name", nil, "evil.example:8080", http.StatusMisdirectedRequest},
		{"a name given", []string{"apps.internal"}, "apps.internal:443", http.StatusOK},
		{"loopback when names are given", []string{"apps.internal"}, "127.0.0.1:8080", http.StatusMisdirectedRequest},
		{"a port that would add to a header", nil, "127.0.0.1:80; script-src *", http.StatusMisdirectedRequest},
		{"a name that would", nil, "localhost; script-src *", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := apps.New(nil, &apps.Options{SandboxOrigin: "http://*.localhost:1", Hosts: tt.hosts})
			req := httptest.NewRequest("GET", "/", nil)
			req.Host = tt.host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			assert.Equal(t, tt.want, w.Code)
		})
	}
}

// What a view chooses is cut before it reaches a log line.
func TestALogLineCarriesLittleOfWhatAViewSent(t *testing.T) {
	var mu sync.Mutex
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), nil))
	f := newFixture(t, "", &apps.Options{Logger: logger})
	o := f.open(t)
	a := f.rpc(t, o.ID, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": strings.Repeat("x", 100_000)}})
	require.NotNil(t, a.Error)
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logs.String(), "a view called a tool it may not")
	assert.Less(t, logs.Len(), 2000)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// A view may send the program only content of the types the host
// declared to it; the rest is refused with an error, and reaches no one.
func TestContentTheHostDidNotDeclareIsRefused(t *testing.T) {
	text := map[string]any{"type": "text", "text": "hello"}
	image := map[string]any{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
	audio := map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
	link := map[string]any{"type": "resource_link", "uri": "file:///x", "name": "x"}
	untyped := map[string]any{"text": "hello"}
	tests := []struct {
		name    string
		types   []string
		content []map[string]any
		refused bool
	}{
		{"text, by default", nil, []map[string]any{text}, false},
		{"an image when text alone was declared", nil, []map[string]any{image}, true},
		{"text and an image when text alone was declared", nil, []map[string]any{text, image}, true},
		{"a resource link when text alone was declared", nil, []map[string]any{link}, true},
		{"a block without a type", nil, []map[string]any{untyped}, true},
		{"an image when images were declared", []string{"text", "image"}, []map[string]any{text, image}, false},
		{"audio when text and images were", []string{"text", "image"}, []map[string]any{audio}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got [][]mcp.Content
			f := newFixture(t, "", &apps.Options{
				ContentTypes: tt.types,
				Message: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, content)
					return nil
				},
				UpdateModelContext: func(ctx context.Context, v *apps.ViewInfo, content []mcp.Content, structured json.RawMessage) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, content)
					return nil
				},
			})
			o := f.open(t)
			for _, msg := range []map[string]any{
				{"jsonrpc": "2.0", "id": 1, "method": "ui/message", "params": map[string]any{"role": "user", "content": tt.content}},
				{"jsonrpc": "2.0", "id": 2, "method": "ui/update-model-context", "params": map[string]any{"content": tt.content}},
			} {
				a := f.rpc(t, o.ID, msg)
				if tt.refused {
					require.NotNil(t, a.Error, "%s: result %s", msg["method"], a.Result)
					assert.Equal(t, apps.CodeInvalidParams, a.Error.Code)
					assert.Contains(t, a.Error.Message, "which the host did not declare")
				} else {
					assert.Nil(t, a.Error, "%s", msg["method"])
					assert.JSONEq(t, `{}`, string(a.Result))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.refused {
				assert.Empty(t, got, "nothing reached the program")
			} else {
				assert.Len(t, got, 2)
			}
		})
	}
}

func TestTheHostDeclaresWhatItTakes(t *testing.T) {
	take := func(context.Context, *apps.ViewInfo, []mcp.Content) error { return nil }
	takeContext := func(context.Context, *apps.ViewInfo, []mcp.Content, json.RawMessage) error { return nil }
	tests := []struct {
		name string
		opts *apps.Options
		want string
	}{
		{"nothing, when the program takes nothing", &apps.Options{}, `{}`},
		{"text, by default", &apps.Options{Message: take, UpdateModelContext: takeContext},
			`{"message":{"text":{}},"updateModelContext":{"text":{},"structuredContent":{}}}`},
		{"the types given", &apps.Options{Message: take, ContentTypes: []string{"text", "image", "resource_link"}},
			`{"message":{"text":{},"image":{},"resourceLink":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "", tt.opts)
			var o struct{ HostCapabilities json.RawMessage }
			require.Equal(t, http.StatusOK, f.do(t, "POST", "/views", map[string]string{"server": "fake", "tool": "show"}, &o))
			assert.JSONEq(t, tt.want, string(o.HostCapabilities))
		})
	}
}
