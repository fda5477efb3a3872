package apptest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// click clicks, in the view, the button whose text is text.
func (r *rig) click(t *testing.T, text string) {
	t.Helper()
	got := r.inView(t, fmt.Sprintf(`(() => {
		const b = [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === %q);
		if (!b) return "no button";
		b.click();
		return "clicked";
	})()`, text))
	require.Equal(t, "clicked", got, "the button %q", text)
}

// message waits for a ui/message the Go host received from a server's
// view, passing over those of other servers.
func (r *rig) message(t *testing.T, server string) string {
	t.Helper()
	return awaitFrom(t, r.messages, server, "ui/message")
}

// modelContext waits for a ui/update-model-context the Go host received
// from a server's view, passing over those of other servers.
func (r *rig) modelContext(t *testing.T, server string) string {
	t.Helper()
	return awaitFrom(t, r.contexts, server, "ui/update-model-context")
}

func awaitFrom(t *testing.T, ch <-chan string, server, what string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-ch:
			if strings.HasPrefix(got, server+": ") {
				return got
			}
		case <-deadline:
			t.Fatalf("no %s of %s reached the host", what, server)
			return ""
		}
	}
}

// declineLink waits for the page to ask the user about a link, checks
// the link, and says no.
func (r *rig) declineLink(t *testing.T, server, url string) {
	t.Helper()
	require.NoError(t, chromedp.Do(r.ctx, chromedp.WaitVisible(chromedp.ID("ask"))))
	var asked string
	r.eval(t, `document.getElementById("ask-text").textContent`, &asked)
	assert.Equal(t, "The view of server "+server+" asks to open "+url, asked, "the user is told which server's view asks")
	require.NoError(t, chromedp.Do(r.ctx, chromedp.Click(chromedp.ID("ask-no"))))
}

// The official example servers beyond the first three, each shown by the
// host and used through its own controls, checked in the view's DOM.
func TestMoreOfficialViewsRenderAndWork(t *testing.T) {
	dir := t.TempDir()
	pdf := filepath.Join(dir, "mcplug.pdf")
	require.NoError(t, os.WriteFile(pdf, onePagePDF("mcplug renders this page"), 0o600))
	r := newRig(t, rigOptions{
		examples: []string{"server-basic-vue", "server-basic-react", "server-pdf", "server-debug", "server-cohort-heatmap"},
		args:     map[string][]string{"server-pdf": {pdf}},
		env:      map[string]map[string]string{"server-debug": {"DEBUG_LOG_FILE": filepath.Join(dir, "debug.log")}},
	})

	// basic-vue's buttons threw a SecurityError in a frame without
	// allow-same-origin: the view had no origin.
	for _, name := range []string{"basic-vue", "basic-react"} {
		t.Run(name+": its buttons call the server, send a message and a log line, and ask to open a link", func(t *testing.T) {
			r.open(t, name, "get-time", "{}")
			r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result"`)
			time := `document.querySelector("code").textContent`
			first := r.pollView(t, time, func(s string) bool { return strings.Contains(s, "T") && strings.HasSuffix(s, "Z") })
			r.click(t, "Get Server Time")
			r.logHas(t, "the view's own tools/call", `e.from && e.msg.method === "tools/call" && e.msg.params.name === "get-time"`)
			r.pollView(t, time, func(s string) bool { return s != first && strings.HasSuffix(s, "Z") })

			r.inView(t, `(() => { const a = document.querySelector("textarea"); a.value = "hello from the test"; a.dispatchEvent(new Event("input", {bubbles: true})); return ""; })()`)
			r.click(t, "Send Message")
			assert.Equal(t, name+": hello from the test", r.message(t, name))

			r.click(t, "Send Log")
			r.logHas(t, "the log line", `e.from && e.msg.method === "notifications/message"`)

			r.click(t, "Open Link")
			r.declineLink(t, name, "https://modelcontextprotocol.io/")
			r.logHas(t, "the refusal of the link", `e.to && e.msg.result && e.msg.result.isError === true`)
			r.screenshot(t, name)
		})
	}

	// PDF.js starts a blob: worker that imports its code from a data:
	// URL, which a CSP without data: in script-src blocks: no page was
	// drawn.
	t.Run("pdf: a local file's page is drawn, and its text reaches the model's context", func(t *testing.T) {
		r.open(t, "pdf", "display_pdf", fmt.Sprintf(`{"url":%q}`, pdf))
		r.logHas(t, "the view reads the file through its server", `e.from && e.msg.method === "tools/call" && e.msg.params.name === "read_pdf_bytes"`)
		// The page's blue band, drawn on the canvas.
		pixel := `(() => {
			const c = document.getElementById("pdf-canvas");
			if (!c || !c.width) return "no canvas";
			const [r, g, b] = c.getContext("2d").getImageData(Math.floor(c.width / 2), Math.floor(c.height * 62 / 792), 1, 1).data;
			return r + "," + g + "," + b;
		})()`
		r.pollView(t, pixel, func(s string) bool {
			var red, green, blue int
			_, err := fmt.Sscanf(s, "%d,%d,%d", &red, &green, &blue)
			return err == nil && blue > 120 && red < 60 && green < 110
		})
		assert.Contains(t, r.modelContext(t, "pdf"), "mcplug renders this page", "the text PDF.js read from the page")
		assert.Equal(t, "1", r.inView(t, `document.getElementById("page-input").value`))
		r.screenshot(t, "pdf")
	})

	t.Run("debug: its calls, messages and model context; an image the host did not declare is refused", func(t *testing.T) {
		r.open(t, "debug", "debug-tool", "{}")
		r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result"`)
		entries := `[...document.querySelectorAll("#event-log .log-type")].map((e) => e.textContent).join(" ")`
		r.pollView(t, entries, func(s string) bool { return strings.Contains(s, "ontoolresult:") })

		r.click(t, "Call debug-refresh")
		r.logHas(t, "the view's call of a tool for apps", `e.from && e.msg.method === "tools/call" && e.msg.params.name === "debug-refresh"`)
		r.pollView(t, entries, func(s string) bool { return strings.Contains(s, "server-tool-result:") })

		r.click(t, "Send Text")
		assert.Equal(t, "debug: Hello from debug app!", r.message(t, "debug"))
		r.pollView(t, entries, func(s string) bool { return strings.Contains(s, "send-message-result:") })

		r.click(t, "Send Test Image")
		r.logHas(t, "the refusal of the image", `e.to && e.msg.error && e.msg.error.code === -32602 && e.msg.error.message.includes("ui/message: content of type \"image\"")`)
		r.pollView(t, entries, func(s string) bool { return strings.Contains(s, "error:") })
		r.click(t, "Update (Image)")
		r.logHas(t, "the refusal of the image as context", `e.to && e.msg.error && e.msg.error.code === -32602 && e.msg.error.message.includes("ui/update-model-context: content of type \"image\"")`)
		r.click(t, "Update (Text)")
		assert.Equal(t, "debug: Current app state info", r.modelContext(t, "debug"), "text passes; the image before it reached no one")
		for len(r.messages) > 0 {
			got := <-r.messages
			assert.False(t, strings.HasPrefix(got, "debug: "), "the image reached the program: %q", got)
		}
		var shown int
		r.eval(t, `mcplugPage.messages.filter((m) => m.content.some((c) => c.type !== "text")).length`, &shown)
		assert.Zero(t, shown, "the page shows only what the Go host took")
		r.screenshot(t, "debug")
	})

	t.Run("debug: one open-link question at a time, every request answered", func(t *testing.T) {
		r.open(t, "debug", "debug-tool", "{}")
		r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result"`)
		r.click(t, "Open Link")
		require.NoError(t, chromedp.Do(r.ctx, chromedp.WaitVisible(chromedp.ID("ask"))))
		// While the user reads the first link, the view asks for another.
		r.inView(t, `(document.getElementById("link-url").value = "https://evil.example/", "")`)
		r.click(t, "Open Link")
		r.logHas(t, "the refusal of the second link", `e.to && e.msg.error && e.msg.error.code === -32000 && e.msg.error.message.includes("waiting for the user")`)
		r.declineLink(t, "debug", "https://modelcontextprotocol.io/")
		r.logHas(t, "the answer to the first", `e.to && e.msg.result && e.msg.result.isError === true`)
		var links []string
		r.eval(t, `mcplugPage.links.slice(-1)`, &links)
		assert.Equal(t, []string{"https://modelcontextprotocol.io/"}, links, "the user was never asked about the second")

		// A request the view cancels (the App SDK does after 60 s) takes
		// its question with it, and gets no answer; the next may ask.
		r.click(t, "Open Link")
		require.NoError(t, chromedp.Do(r.ctx, chromedp.WaitVisible(chromedp.ID("ask"))))
		var id json.RawMessage
		r.eval(t, `mcplugPage.view.log.filter((e) => e.from && e.msg.method === "ui/open-link").pop().msg.id`, &id)
		r.inView(t, fmt.Sprintf(`(parent.postMessage({jsonrpc: "2.0", method: "notifications/cancelled", params: {requestId: %s, reason: "the view gave up"}}, "*"), "")`, id))
		_, err := chromedp.Run(r.ctx, chromedp.Poll[bool](`!document.getElementById("ask").classList.contains("open") && mcplugPage.host.asking === null`, chromedp.WithPollingTimeout(30*time.Second)))
		require.NoError(t, err, "the cancelled question is still open")
		var answered bool
		r.eval(t, fmt.Sprintf(`mcplugPage.view.log.some((e) => e.to && e.msg.id === %s && !e.msg.method)`, id), &answered)
		assert.False(t, answered, "a cancelled request is not answered")

		// A view that goes takes its question with it.
		r.click(t, "Open Link")
		require.NoError(t, chromedp.Do(r.ctx, chromedp.WaitVisible(chromedp.ID("ask"))))
		var state struct{ Open, Asking bool }
		r.eval(t, `(async () => { await mcplugPage.view.teardown(); return {open: document.getElementById("ask").classList.contains("open"), asking: mcplugPage.host.asking !== null}; })()`, &state)
		assert.False(t, state.Open, "the question is gone")
		assert.False(t, state.Asking, "another view may ask")
	})

	t.Run("cohort-heatmap: the heatmap is drawn from the data the view asks its server for", func(t *testing.T) {
		r.open(t, "cohort-heatmap", "get-cohort-data", "{}")
		r.logHas(t, "the tool result", `e.to && e.msg.method === "ui/notifications/tool-result"`)
		headers := `[...document.querySelectorAll("[class*=headerPeriod]")].map((e) => e.textContent).join(" ")`
		r.pollView(t, headers, func(s string) bool { return strings.HasPrefix(s, "M0 M1 M2") })
		// A control: the metric; the view calls its server for it and
		// draws the cells of the answer.
		r.inView(t, `(() => { const s = document.querySelector("select"); s.value = "revenue"; s.dispatchEvent(new Event("change", {bubbles: true})); return ""; })()`)
		r.logHas(t, "the view's call for the revenue", `e.from && e.msg.method === "tools/call" && e.msg.params.name === "get-cohort-data" && e.msg.params.arguments.metric === "revenue"`)
		r.logHas(t, "its answer", `e.to && e.msg.result && e.msg.result.structuredContent && e.msg.result.structuredContent.metric === "revenue"`)
		var want string
		r.eval(t, `(() => {
			const a = mcplugPage.view.log.filter((e) => e.to && e.msg.result && e.msg.result.structuredContent && e.msg.result.structuredContent.metric === "revenue").pop();
			return a.msg.result.structuredContent.cohorts.flatMap((c) => c.cells.map((x) => Math.round(x.retention * 100))).join(" ");
		})()`, &want)
		require.NotEmpty(t, want)
		r.pollView(t, `[...document.querySelectorAll("[class*=_cell_]")].map((e) => e.textContent).join(" ")`, func(s string) bool { return s == want })
		r.screenshot(t, "cohort-heatmap")
	})
}
