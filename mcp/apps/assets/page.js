// The page of package mcp/apps: the app tools of the configured servers;
// pick one, give its arguments, call it, and use its view.
"use strict";
(function () {
  const cfg = JSON.parse(document.querySelector('meta[name="mcplug-host"]').content);
  const $ = (id) => document.getElementById(id);
  const say = (text, cls) => {
    const line = document.createElement("div");
    line.textContent = text;
    if (cls) line.className = cls;
    $("log").appendChild(line);
    while ($("log").childElementCount > 200) $("log").firstElementChild.remove();
    $("log").scrollTop = $("log").scrollHeight;
  };
  const text = (content) => (content || []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
  const page = { messages: [], refused: {}, links: [], view: null, selected: null }; // refused: a count by reason
  const keep = (list, item) => { list.push(item); if (list.length > 100) list.shift(); }; // the latest 100
  window.mcplugPage = page;

  let answer = null; // resolves the open-link question (host.js asks one at a time)
  const answered = (yes) => { $("ask").classList.remove("open"); const a = answer; answer = null; if (a) a(yes); };
  $("ask-yes").onclick = () => answered(true);
  $("ask-no").onclick = () => answered(false);

  const host = new McpAppsHost({
    api: "api",
    token: cfg.token,
    onMessage: (view, p) => { keep(page.messages, p); say("view says: " + text(p && p.content)); },
    onModelContext: (view, p) => say("model context: " + (text(p && p.content) || JSON.stringify(p && p.structuredContent))),
    onLog: (view, p) => say("log (" + (p.level || "info") + "): " + (typeof p.data === "string" ? p.data : JSON.stringify(p.data))),
    onRefused: (view, reason) => { page.refused[reason] = (page.refused[reason] || 0) + 1; say("refused: " + reason, "err"); },
    onOpenLink: (view, url, signal) => new Promise((resolve) => {
      keep(page.links, url);
      // The server's name comes from the program's config, not from the view.
      $("ask-text").textContent = "The view of server " + view.info.server + " asks to open " + url;
      $("ask").classList.add("open");
      answer = resolve;
      signal.addEventListener("abort", () => { if (answer === resolve) answered(false); });
    }),
  });
  page.host = host;

  // An example of the arguments: each property's default, or an empty value of its type.
  const example = (schema) => {
    const out = {};
    for (const [k, s] of Object.entries((schema && schema.properties) || {})) {
      if (s && "default" in s) out[k] = s.default;
      else if (s && s.type === "number" || s && s.type === "integer") out[k] = 0;
      else if (s && s.type === "boolean") out[k] = false;
      else if (s && s.type === "array") out[k] = [];
      else if (s && s.type === "object") out[k] = {};
      else out[k] = "";
    }
    return out;
  };
  const args = () => { try { return JSON.parse($("args").value || "{}"); } catch { return undefined; } };

  page.select = async (tool) => {
    if (page.view) await page.view.teardown();
    page.view = null;
    page.selected = tool;
    for (const b of document.querySelectorAll("button.tool")) b.toggleAttribute("aria-current", b.dataset.key === tool.server + "/" + tool.name);
    $("title").textContent = tool.title || tool.name;
    $("desc").textContent = tool.server + (tool.description ? " — " + tool.description : "");
    $("args").value = JSON.stringify(example(tool.inputSchema), null, 1);
    $("status").textContent = "opening the view…";
    try {
      page.view = await host.open($("view"), { server: tool.server, tool: tool.name });
      $("status").textContent = "";
      $("call").disabled = $("close").disabled = false;
    } catch (err) {
      $("status").textContent = String(err.message || err);
      $("status").className = "err";
    }
    return page.view;
  };

  $("args").addEventListener("input", () => { const a = args(); if (page.view && a) page.view.toolInputPartial(a); });
  page.call = async () => {
    const a = args();
    if (a === undefined) { $("status").textContent = "the arguments are not JSON"; return null; }
    $("cancel").disabled = false;
    $("status").textContent = "calling…";
    const res = await page.view.call(a);
    $("cancel").disabled = true;
    $("status").textContent = res ? (res.isError ? "the tool failed: " + text(res.content) : "") : "cancelled";
    return res;
  };
  $("call").onclick = page.call;
  $("cancel").onclick = () => page.view && page.view.cancel("the user cancelled");
  $("close").onclick = async () => { if (page.view) await page.view.teardown(); page.view = null; $("call").disabled = $("close").disabled = true; };

  host.tools().then((tools) => {
    page.tools = tools;
    const list = $("tools");
    list.textContent = tools.length ? "" : "No server offers an app tool.";
    for (const t of tools) {
      const b = document.createElement("button");
      b.className = "tool";
      b.dataset.key = t.server + "/" + t.name;
      b.textContent = t.title || t.name;
      const s = document.createElement("small");
      s.textContent = " " + t.server;
      b.appendChild(s);
      b.onclick = () => page.select(t);
      list.appendChild(b);
    }
  }, (err) => { $("tools").textContent = String(err.message || err); });
})();
