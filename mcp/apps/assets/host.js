// The host side of MCP Apps (io.modelcontextprotocol/ui) for a page
// served by package mcp/apps: it shows a view in a sandbox iframe on the
// origin of the view's server and speaks the ui/* protocol with it,
// forwarding what only the Go host can answer to its API.
//
//   const host = new McpAppsHost({ api: "api", token });
//   const view = await host.open(container, { server, tool });
//   view.toolInputPartial({ city: "Par" });
//   const result = await view.call({ city: "Paris" }); // tool-input, then tool-result
//   await view.teardown();
"use strict";

const PROTOCOL_VERSION = "2026-01-26";
const MAX_HEIGHT = 6000; // px: a view cannot grow past it
const TEARDOWN_WAIT = 2000; // ms a view has to answer ui/resource-teardown
const INIT_WAIT = 30000; // ms a view has to say ui/notifications/initialized
const RATE = 100, BURST = 200; // messages a view may send a second
const MAX_LOG = 500; // entries of a view's log kept, the latest

class McpAppsHost {
  // opts: api (URL of the Go host's API), token (its key);
  // onMessage(view, params) (a ui/message the Go host took),
  // onOpenLink(view, url, signal) → Promise<bool> (ask the user; signal
  // aborts when the view goes first or cancels its request, and the
  // question should go with it),
  // onModelContext(view, params), onLog(view, params), onRefused(view,
  // reason) (a message the host would not take).
  constructor(opts) {
    this.opts = opts;
    this.views = new Set();
    this.asking = null; // the view whose link the user is being asked about: one at a time
  }

  async api(method, path, body, signal) {
    const res = await fetch(this.opts.api + path, {
      method,
      signal,
      headers: { "Content-Type": "application/json", "X-Mcplug-Host": this.opts.token },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let v;
    try { v = JSON.parse(text); } catch { v = { error: text }; }
    if (!res.ok) throw new Error(v.error || res.statusText);
    return v;
  }

  tools() { return this.api("GET", "/tools"); }

  // open shows the view of the app tool (server, tool) in container. A
  // view that does not initialize within initTimeout is removed, and
  // open fails.
  async open(container, { server, tool, theme }) {
    const info = await this.api("POST", "/views", { server, tool });
    const view = new McpAppView(this, container, info, { theme });
    this.views.add(view);
    const wait = this.opts.initTimeout || INIT_WAIT;
    let timer;
    const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("the view did not initialize within " + wait / 1000 + " s")), wait); });
    try {
      await Promise.race([view.ready, late]);
    } catch (err) {
      await view.teardown();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return view;
  }
}

class McpAppView {
  constructor(host, container, info, { theme }) {
    this.host = host;
    this.info = info;
    this.id = info.id;
    this.theme = theme || "light";
    this.pending = new Map(); // our requests to the view, by id
    this.serving = new Map(); // the view's requests in the Go host, by id: AbortControllers
    this.nextID = 1;
    this.initialized = false;
    this.queue = []; // notifications held until the view is initialized
    this.closed = false;
    this.refused = 0;
    this.tokens = BURST;
    this.last = performance.now();
    this.log = []; // the latest messages, both ways, for a page (or a test) to see

    const frame = document.createElement("iframe");
    frame.src = info.sandbox;
    frame.title = info.tool.title || info.tool.name;
    // The proxy runs on the origin of the view's server, and so does the
    // view inside it, framed by the proxy with the same sandbox (see sandbox.html).
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (info.allow) frame.setAttribute("allow", info.allow);
    frame.style.width = "100%";
    frame.style.height = "320px";
    frame.style.border = info.prefersBorder ? "1px solid #ccc" : "0";
    frame.style.display = "block";
    this.frame = frame;
    this.sandboxOrigin = new URL(info.sandbox).origin;
    this.ready = new Promise((resolve, reject) => { this.resolveReady = resolve; this.rejectReady = reject; });
    this.ready.catch(() => {}); // a view closed before it was ready: open says so
    this.listener = (e) => this.receive(e);
    window.addEventListener("message", this.listener);
    container.appendChild(frame);
  }

  // record adds to the log, forgetting the oldest past MAX_LOG: a view
  // that floods must not grow the page without end.
  record(entry) {
    this.log.push(entry);
    if (this.log.length > MAX_LOG) this.log.splice(0, this.log.length - MAX_LOG);
  }

  // send posts a message to the view, through the proxy.
  send(msg) {
    if (this.closed || !this.frame.contentWindow) return;
    this.record({ to: "view", msg });
    this.frame.contentWindow.postMessage(msg, this.sandboxOrigin);
  }

  notify(method, params) {
    const msg = { jsonrpc: "2.0", method, params: params || {} };
    if (!this.initialized && method.startsWith("ui/notifications/tool")) {
      this.queue.push(msg);
      return;
    }
    this.send(msg);
  }

  request(method, params, timeout) {
    const id = "host-" + this.nextID++;
    return new Promise((resolve, reject) => {
      const timer = timeout ? setTimeout(() => { this.pending.delete(id); reject(new Error(method + ": no answer")); }, timeout) : null;
      this.pending.set(id, { resolve, reject, timer });
      this.send({ jsonrpc: "2.0", id, method, params: params || {} });
    });
  }

  refuse(reason, data) {
    this.refused++;
    this.record({ refused: reason });
    if (this.host.opts.onRefused) this.host.opts.onRefused(this, reason, data);
  }

  // allow takes a token of the view's message budget.
  allow() {
    const now = performance.now();
    this.tokens = Math.min(BURST, this.tokens + ((now - this.last) / 1000) * RATE);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }

  receive(e) {
    if (e.source !== this.frame.contentWindow) return; // another frame's
    if (e.origin !== this.sandboxOrigin) { this.refuse("a message from an origin that is not the sandbox's"); return; }
    const msg = e.data;
    if (msg === null || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") {
      this.refuse("not a JSON-RPC 2.0 message");
      return;
    }
    const isRequest = typeof msg.method === "string" && (typeof msg.id === "string" || typeof msg.id === "number");
    if (!this.allow()) {
      if (isRequest) this.reply(msg.id, null, { code: -32000, message: "too many messages from the view" });
      this.refuse("too many messages");
      return;
    }
    this.record({ from: "view", msg });
    if (typeof msg.method !== "string") { // an answer to one of ours
      const p = this.pending.get(msg.id);
      if (!p) { this.refuse("an answer to no request"); return; }
      this.pending.delete(msg.id);
      if (p.timer) clearTimeout(p.timer);
      if (msg.error) p.reject(new Error(msg.error.message || "error")); else p.resolve(msg.result);
      return;
    }
    if (msg.method === "ui/notifications/sandbox-proxy-ready") {
      this.send({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: {
        html: this.info.html, sandbox: "allow-scripts allow-same-origin allow-forms", csp: this.info.csp || {}, permissions: this.info.permissions || {},
      } });
      return;
    }
    if (isRequest) { this.serve(msg); return; }
    if ("id" in msg) { this.refuse("a request id that is neither a string nor a number"); return; }
    this.notified(msg);
  }

  reply(id, result, error) {
    const msg = { jsonrpc: "2.0", id };
    if (error) msg.error = error; else msg.result = result;
    this.send(msg);
  }

  hostContext() {
    return {
      toolInfo: { tool: this.info.tool },
      theme: this.theme,
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      containerDimensions: { width: this.frame.clientWidth, maxHeight: MAX_HEIGHT },
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: "mcplug",
      platform: "web",
      deviceCapabilities: { touch: false, hover: true },
    };
  }

  async serve(msg) {
    const { id, method, params } = msg;
    switch (method) {
      case "ui/initialize":
        this.reply(id, {
          protocolVersion: PROTOCOL_VERSION,
          hostInfo: this.info.hostInfo,
          hostCapabilities: Object.assign({
            openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
            sandbox: { csp: this.info.csp || {}, permissions: this.info.permissions || {} },
          }, this.info.hostCapabilities || {}), // message, updateModelContext: the Go host's
          hostContext: this.hostContext(),
        });
        return;
      case "ping":
        this.reply(id, {});
        return;
      case "ui/request-display-mode":
        this.reply(id, { mode: "inline" });
        return;
      case "ui/open-link": {
        let url;
        try { url = new URL(params && params.url); } catch { url = null; }
        if (!url || !["http:", "https:", "mailto:"].includes(url.protocol)) {
          this.reply(id, null, { code: -32602, message: "ui/open-link needs an http, https or mailto URL" });
          return;
        }
        const ask = this.host.opts.onOpenLink;
        if (!ask) { this.reply(id, { isError: true }); return; }
        // One question at a time: a second would change what the user
        // is about to say yes to.
        if (this.host.asking) {
          this.reply(id, null, { code: -32000, message: "another link is waiting for the user's answer" });
          return;
        }
        const asking = new AbortController();
        this.host.asking = this;
        this.asking = asking;
        this.askingID = id;
        let yes = false;
        try { yes = await ask(this, url.href, asking.signal); } catch { yes = false; }
        if (this.host.asking === this) this.host.asking = null;
        this.asking = null;
        if (asking.signal.aborted) return; // the view is gone, or cancelled its request: no answer
        if (yes) window.open(url.href, "_blank", "noopener,noreferrer");
        this.reply(id, yes ? {} : { isError: true });
        return;
      }
      case "ui/message":
      case "ui/update-model-context":
      case "tools/call":
      case "resources/read":
        break; // the Go host's
      default:
        this.reply(id, null, { code: -32601, message: "method " + JSON.stringify(String(method).slice(0, 100)) + " is not served to views" });
        return;
    }
    const ctrl = new AbortController();
    this.serving.set(id, ctrl);
    try {
      const answer = await this.host.api("POST", "/views/" + this.id + "/rpc", msg, ctrl.signal);
      this.send(answer);
      // What the Go host took, the page may show.
      const took = answer && !answer.error && !(answer.result && answer.result.isError);
      if (took && method === "ui/message" && this.host.opts.onMessage) this.host.opts.onMessage(this, params);
      if (took && method === "ui/update-model-context" && this.host.opts.onModelContext) this.host.opts.onModelContext(this, params);
    } catch (err) {
      if (!ctrl.signal.aborted) this.reply(id, null, { code: -32603, message: String(err.message || err) });
    } finally {
      this.serving.delete(id);
    }
  }

  notified(msg) {
    const p = msg.params || {};
    switch (msg.method) {
      case "ui/notifications/initialized":
        this.initialized = true;
        for (const m of this.queue) this.send(m);
        this.queue = [];
        this.resolveReady(this);
        return;
      case "ui/notifications/size-changed":
        if (typeof p.height === "number" && isFinite(p.height)) {
          this.frame.style.height = Math.max(0, Math.min(MAX_HEIGHT, Math.ceil(p.height))) + "px";
        }
        return;
      case "ui/notifications/request-teardown":
        this.teardown();
        return;
      case "notifications/cancelled": {
        const ctrl = this.serving.get(p.requestId);
        if (ctrl) ctrl.abort();
        // A link the view no longer asks for: its question goes, and
        // the link is not opened.
        if (this.asking && this.askingID === p.requestId) this.asking.abort();
        return;
      }
      case "notifications/message":
        if (this.host.opts.onLog) this.host.opts.onLog(this, p);
        return;
    }
    // Other notifications are the view's to send and nobody's to act on.
  }

  // toolInputPartial sends arguments as they are being written.
  toolInputPartial(args) { this.notify("ui/notifications/tool-input-partial", { arguments: args }); }

  // call sends the tool's arguments to the view, calls the tool through
  // the Go host, and sends the view its result (or, if cancel is called
  // first, tool-cancelled).
  async call(args) {
    this.notify("ui/notifications/tool-input", { arguments: args });
    this.calling = new AbortController();
    try {
      const result = await this.host.api("POST", "/views/" + this.id + "/call", { arguments: args }, this.calling.signal);
      this.notify("ui/notifications/tool-result", result);
      return result;
    } catch (err) {
      if (this.calling.signal.aborted) {
        this.notify("ui/notifications/tool-cancelled", { reason: this.cancelReason || "cancelled" });
        return null;
      }
      const result = { content: [{ type: "text", text: String(err.message || err) }], isError: true };
      this.notify("ui/notifications/tool-result", result);
      return result;
    } finally {
      this.calling = null;
    }
  }

  // cancel cancels the call under way.
  cancel(reason) {
    if (!this.calling) return;
    this.cancelReason = reason;
    this.calling.abort();
  }

  // setTheme tells the view the host's theme changed.
  setTheme(theme) {
    this.theme = theme;
    this.send({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme } });
  }

  // teardown asks the view to save its state (it has TEARDOWN_WAIT ms),
  // then removes it.
  async teardown() {
    if (this.closed) return;
    if (this.initialized) {
      try { await this.request("ui/resource-teardown", {}, TEARDOWN_WAIT); } catch { /* gone or slow: removed all the same */ }
    }
    this.closed = true;
    if (this.asking) this.asking.abort(); // its question goes with it
    if (this.host.asking === this) this.host.asking = null;
    for (const ctrl of this.serving.values()) ctrl.abort();
    if (this.calling) this.calling.abort();
    window.removeEventListener("message", this.listener);
    this.frame.remove();
    this.host.views.delete(this);
    this.rejectReady(new Error("the view was closed"));
    try { await this.host.api("DELETE", "/views/" + this.id); } catch { /* already gone */ }
  }
}

window.McpAppsHost = McpAppsHost;
