package apptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/apps"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOfficialViewsRenderAndTalkToTheirServers(t *testing.T) {
	r := newRig(t, rigOptions{examples: []string{"server-basic-vanillajs", "server-budget-allocator", "server-system-monitor"}})

	t.Run("basic-vanillajs: input, result, and a call the view makes", func(t *testing.T) {
		r.open(t, "basic-vanillajs", "get-time", "{}")
		r.logHas(t, "ui/initialize", `e.from && e.msg.method === "ui/initialize"`)
		r.logHas(t, "the tool input", `e.to && e.msg.method === "ui/notifications/tool-input"`)
		r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result" && JSON.stringify(e.msg.params).includes("time")`)
		// The view shows the result of the host's call...
		first := r.pollView(t, `document.getElementById("server-time").textContent`, func(s string) bool { return strings.Contains(s, "T") && s != "Loading..." })
		// ... and calls the server itself, through the host.
		r.inView(t, `document.getElementById("get-time-btn").click(), ""`)
		r.logHas(t, "the view's own tools/call", `e.from && e.msg.method === "tools/call" && e.msg.params.name === "get-time"`)
		r.logHas(t, "its answer", `e.to && e.msg.id !== undefined && e.msg.result && JSON.stringify(e.msg.result).includes("time") && mcplugPage.view.log.some((f) => f.from && f.msg.method === "tools/call" && f.msg.id === e.msg.id)`)
		second := r.pollView(t, `document.getElementById("server-time").textContent`, func(s string) bool { return s != first && strings.Contains(s, "T") })
		assert.NotEqual(t, first, second)
		// ui/message reaches the Go host.
		r.inView(t, `document.getElementById("send-message-btn").click(), ""`)
		select {
		case got := <-r.messages:
			assert.Equal(t, "basic-vanillajs: This is message text.", got)
		case <-time.After(30 * time.Second):
			t.Fatal("no ui/message reached the host")
		}
		// ui/open-link asks the user; refused, nothing opens.
		r.inView(t, `document.getElementById("open-link-btn").click(), ""`)
		require.NoError(t, chromedp.Do(r.ctx, chromedp.WaitVisible(chromedp.ID("ask"))))
		r.screenshot(t, "basic-vanillajs")
		require.NoError(t, chromedp.Do(r.ctx, chromedp.Click(chromedp.ID("ask-no"))))
		r.logHas(t, "the refusal of the link", `e.to && e.msg.result && e.msg.result.isError === true`)
		var links []string
		r.eval(t, `mcplugPage.links`, &links)
		assert.Equal(t, []string{"https://modelcontextprotocol.io/"}, links)
	})

	t.Run("system-monitor: a view that polls a tool for apps alone", func(t *testing.T) {
		r.open(t, "system-monitor", "get-system-info", "{}")
		r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result"`)
		r.logHas(t, "the view's poll of poll-system-stats", `e.from && e.msg.method === "tools/call" && e.msg.params.name === "poll-system-stats"`)
		r.logHas(t, "its answer", `e.to && e.msg.result && JSON.stringify(e.msg.result).includes("cpu")`)
		tools, err := r.m.Tools(context.Background())
		require.NoError(t, err)
		for _, tool := range tools {
			assert.NotContains(t, tool.Name, "poll-system-stats", "the model never sees it")
		}
		r.screenshot(t, "system-monitor")
	})

	t.Run("budget-allocator: input and result", func(t *testing.T) {
		r.open(t, "budget-allocator", "get-budget-data", "{}")
		r.logHas(t, "ui/initialize", `e.from && e.msg.method === "ui/initialize"`)
		r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result"`)
		r.logHas(t, "a size change", `e.from && e.msg.method === "ui/notifications/size-changed"`)
		r.pollView(t, `document.body.innerText`, func(s string) bool { return strings.Contains(s, "Budget") || strings.Contains(s, "budget") })
		r.screenshot(t, "budget-allocator")
	})

	t.Run("a teardown asks the view first", func(t *testing.T) {
		r.open(t, "basic-vanillajs", "get-time", "{}")
		var got struct {
			Closed, Asked, Answered bool
			Log                     []string
		}
		r.eval(t, `(async () => { const v = mcplugPage.view; await v.teardown(); return {
			closed: v.closed,
			asked: v.log.some((e) => e.to && e.msg.method === "ui/resource-teardown"),
			answered: v.log.some((e) => e.from && e.msg.result !== undefined && String(e.msg.id).startsWith("host-")),
			log: v.log.slice(-6).map((e) => JSON.stringify(e).slice(0, 200)),
			}; })()`, &got)
		assert.True(t, got.Closed, "closed")
		assert.True(t, got.Asked, "the view was asked")
		assert.True(t, got.Answered, "and answered: %s", got.Log)
		var frames int
		r.eval(t, `document.querySelectorAll("#view iframe").length`, &frames)
		assert.Zero(t, frames, "the frame is gone")
	})
}

// hostileServer serves a view that tries what a view must not: calling a
// tool hidden from apps, reaching an origin its CSP does not declare,
// flooding the host, sending what is not JSON-RPC. It reports what it
// saw with ui/message.
func hostileServer(allowed, forbidden string) *mcptest.Server {
	srv := &mcptest.Server{Name: "hostile"}
	srv.AddTool(mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://hostile/view.html"}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("shown"), nil
		})
	srv.AddTool(mcp.Tool{Name: "secret", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["model"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("the secret"), nil
		})
	html := strings.NewReplacer("ALLOWED", allowed, "FORBIDDEN", forbidden).Replace(hostileView)
	srv.AddResource(mcp.Resource{URI: "ui://hostile/view.html", Name: "view", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &html,
			Meta: json.RawMessage(`{"ui":{"csp":{"connectDomains":["` + allowed + `","https://x.example; script-src *"]}}}`)}}}, nil
	})
	return srv
}

const hostileView = `<!DOCTYPE html><html><body><h1>hostile</h1><pre id="out"></pre><script>
const pending = new Map(); let next = 1;
window.addEventListener("message", (e) => { const m = e.data; if (m && m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); } });
const ask = (method, params) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); parent.postMessage({jsonrpc: "2.0", id, method, params}, "*"); });
(async () => {
  const r = {};
  await ask("ui/initialize", {appInfo: {name: "hostile", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"});
  parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized"}, "*");
  const secret = await ask("tools/call", {name: "secret", arguments: {}});
  r.secret = secret.error ? secret.error.code : "called";
  const other = await ask("tools/call", {name: "get-time", arguments: {}});
  r.other = other.error ? other.error.code : "called";
  try { await fetch("FORBIDDEN/x"); r.forbidden = "reached"; } catch (err) { r.forbidden = "blocked"; }
  try { const res = await fetch("ALLOWED/y"); r.allowed = await res.text(); } catch (err) { r.allowed = "blocked: " + err; }
  try { const s = document.createElement("img"); s.src = "FORBIDDEN/img.png"; document.body.appendChild(s); } catch (err) {}
  for (const junk of ["text", [1, 2], {jsonrpc: "1.0"}, {jsonrpc: "2.0", id: {}, method: "x"}, null]) parent.postMessage(junk, "*");
  const flood = [];
  for (let i = 0; i < 400; i++) flood.push(ask("ping", {}));
  const answers = await Promise.all(flood);
  r.busy = answers.filter((a) => a.error && a.error.code === -32000).length;
  r.ok = answers.filter((a) => a.result).length;
  document.getElementById("out").textContent = JSON.stringify(r);
  await new Promise((res) => setTimeout(res, 1100)); // the budget refills
  await ask("ui/message", {role: "user", content: [{type: "text", text: JSON.stringify(r)}]});
})();
</script></body></html>`

func TestAHostileViewIsRefusedAndHarmsNothing(t *testing.T) {
	r := newRig(t, rigOptions{examples: []string{"server-basic-vanillajs"}, build: map[string]func(*rig) *mcptest.Server{
		"hostile": func(r *rig) *mcptest.Server { return hostileServer(r.allowed, r.forbid) },
	}})
	r.open(t, "hostile", "show", "{}")
	var report map[string]any
	select {
	case got := <-r.messages:
		text, ok := strings.CutPrefix(got, "hostile: ")
		require.True(t, ok, got)
		require.NoError(t, json.Unmarshal([]byte(text), &report))
	case <-time.After(60 * time.Second):
		t.Fatal("the hostile view sent no report")
	}
	t.Logf("the view saw %v", report)
	assert.EqualValues(t, apps.CodeNotAllowed, report["secret"], "a tool hidden from apps")
	assert.EqualValues(t, apps.CodeNotAllowed, report["other"], "another server's tool")
	assert.Equal(t, "blocked", report["forbidden"], "an origin the CSP does not declare")
	assert.Equal(t, "allowed", report["allowed"], "the origin it declares")
	assert.Greater(t, report["busy"], 0.0, "a flood is refused")
	assert.Greater(t, report["ok"], 0.0, "within the budget, answered")
	assert.Zero(t, r.forbidden.Load(), "nothing reached the undeclared origin")
	var refused map[string]int
	r.eval(t, `mcplugPage.refused`, &refused)
	assert.Positive(t, refused["not a JSON-RPC 2.0 message"])
	assert.Positive(t, refused["too many messages"])
	var kept struct{ Log, Lines int }
	r.eval(t, `({log: mcplugPage.view.log.length, lines: document.getElementById("log").childElementCount})`, &kept)
	assert.LessOrEqual(t, kept.Log, 500, "a flood does not grow the page without end")
	assert.LessOrEqual(t, kept.Lines, 200)
	r.screenshot(t, "hostile")

	// Neither the page nor the connection is hurt: another view opens
	// and works, and the server still answers.
	r.open(t, "basic-vanillajs", "get-time", "{}")
	r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result" && JSON.stringify(e.msg.params).includes("time")`)
	res, err := r.m.CallAppTool(context.Background(), "hostile", "show", nil)
	require.NoError(t, err)
	assert.Equal(t, "shown", res.Text())
}

// probeServer serves a view that shows every notification the host sends
// it, and tools that take their time.
func probeServer(slow chan<- string) *mcptest.Server {
	srv := &mcptest.Server{Name: "probe"}
	meta := json.RawMessage(`{"ui":{"resourceUri":"ui://probe/echo.html"}}`)
	srv.AddTool(mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Meta: meta},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			slow <- "started"
			<-ctx.Done()
			slow <- "cancelled"
			return nil, ctx.Err()
		})
	srv.AddTool(mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Meta: meta},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("echo " + string(r.Arguments)), nil
		})
	html := echoView
	srv.AddResource(mcp.Resource{URI: "ui://probe/echo.html", Name: "echo", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &html}}}, nil
	})
	return srv
}

// muteServer serves a view that never says it is initialized, as one
// whose scripts fail to load does.
func muteServer() *mcptest.Server {
	srv := &mcptest.Server{Name: "mute"}
	srv.AddTool(mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://mute/view.html"}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("shown"), nil
		})
	html := `<!DOCTYPE html><p>never ready</p>`
	srv.AddResource(mcp.Resource{URI: "ui://mute/view.html", Name: "view", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: r.URI, MimeType: mcp.MIMETypeApp, Text: &html}}}, nil
	})
	return srv
}

const echoView = `<!DOCTYPE html><html><body><pre id="got">[]</pre><script>
const got = []; let next = 1; const pending = new Map();
const show = () => { document.getElementById("got").textContent = JSON.stringify(got); };
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m && m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  if (m && m.method && m.id !== undefined) { got.push({method: m.method}); show(); parent.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*"); return; }
  if (m && m.method) { got.push({method: m.method, params: m.params}); show(); }
});
const ask = (method, params) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); parent.postMessage({jsonrpc: "2.0", id, method, params}, "*"); });
(async () => {
  const init = await ask("ui/initialize", {appInfo: {name: "echo", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"});
  got.push({initialized: init.result && init.result.hostContext && init.result.hostContext.toolInfo.tool.name}); show();
  parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized"}, "*");
  parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/size-changed", params: {width: 300, height: 123}}, "*");
  await ask("ui/update-model-context", {content: [{type: "text", text: "the user looks at the echo view"}]});
})();
</script></body></html>`

// viewGot is what the echo view has been sent.
func (r *rig) viewGot(t *testing.T, want string) string {
	t.Helper()
	return r.pollView(t, `document.getElementById("got").textContent`, func(s string) bool { return strings.Contains(s, want) })
}

func TestTheHostSpeaksTheWholeProtocolToAView(t *testing.T) {
	r := newRig(t, rigOptions{build: map[string]func(*rig) *mcptest.Server{
		"probe": func(r *rig) *mcptest.Server { return probeServer(r.slow) },
	}, servers: map[string]*mcptest.Server{"mute": muteServer()}})
	r.show(t, "probe", "slow")
	r.viewGot(t, `{"initialized":"slow"}`)

	t.Run("size changes resize the frame", func(t *testing.T) {
		_, err := chromedp.Run(r.ctx, chromedp.Poll[bool](`document.querySelector("#view iframe").style.height === "123px"`, chromedp.WithPollingTimeout(30*time.Second)))
		require.NoError(t, err)
	})
	t.Run("ui/update-model-context reaches the program", func(t *testing.T) {
		select {
		case got := <-r.contexts:
			assert.Equal(t, "probe: the user looks at the echo view", got)
		case <-time.After(30 * time.Second):
			t.Fatal("no model context reached the host")
		}
	})
	t.Run("partial tool input", func(t *testing.T) {
		var ok bool
		r.eval(t, `(mcplugPage.view.toolInputPartial({q: "par"}), true)`, &ok)
		r.viewGot(t, `{"method":"ui/notifications/tool-input-partial","params":{"arguments":{"q":"par"}}}`)
	})
	t.Run("the host context changes", func(t *testing.T) {
		var ok bool
		r.eval(t, `(mcplugPage.view.setTheme("dark"), true)`, &ok)
		r.viewGot(t, `{"method":"ui/notifications/host-context-changed","params":{"theme":"dark"}}`)
	})
	t.Run("a cancelled call cancels the server's work and tells the view", func(t *testing.T) {
		var ok bool
		r.eval(t, `(document.getElementById("args").value = '{"q":"paris"}', mcplugPage.call(), true)`, &ok)
		select {
		case got := <-r.slow:
			require.Equal(t, "started", got)
		case <-time.After(30 * time.Second):
			t.Fatal("the tool was not called")
		}
		r.viewGot(t, `{"method":"ui/notifications/tool-input","params":{"arguments":{"q":"paris"}}}`)
		require.NoError(t, chromedp.Do(r.ctx, chromedp.Click(chromedp.ID("cancel"))))
		select {
		case got := <-r.slow:
			assert.Equal(t, "cancelled", got)
		case <-time.After(30 * time.Second):
			t.Fatal("the server's work was not cancelled")
		}
		r.viewGot(t, `{"method":"ui/notifications/tool-cancelled","params":{"reason":"the user cancelled"}}`)
		r.screenshot(t, "probe")
	})
	t.Run("a view that never initializes is removed, and opening it fails", func(t *testing.T) {
		var got string
		r.eval(t, `(async () => {
			const cfg = JSON.parse(document.querySelector('meta[name="mcplug-host"]').content);
			const host = new McpAppsHost({api: "api", token: cfg.token, initTimeout: 300});
			const box = document.createElement("div");
			document.body.appendChild(box);
			const hung = new Promise((res) => setTimeout(() => res("still opening after 20 s"), 20000));
			const opened = host.open(box, {server: "mute", tool: "show"}).then(() => "opened", (err) => err.message + "; frames " + box.querySelectorAll("iframe").length + ", views " + host.views.size);
			return Promise.race([opened, hung]);
		})()`, &got)
		assert.Equal(t, "the view did not initialize within 0.3 s; frames 0, views 0", got)
	})
	t.Run("teardown is a request the view answers", func(t *testing.T) {
		var answered bool
		r.eval(t, `(async () => { const v = mcplugPage.view; await v.teardown(); return v.log.some((e) => e.from && e.msg.result !== undefined && String(e.msg.id).startsWith("host-")); })()`, &answered)
		assert.True(t, answered)
	})
}
