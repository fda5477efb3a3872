// Package apps renders MCP Apps (the io.modelcontextprotocol/ui
// extension) in a Go web program: a Host is an http.Handler serving a
// page that lists the app tools of a Manager's servers, calls them, and
// shows their views, each in a sandboxed iframe on an origin of its
// server's own (the Sandbox handler), under the Content-Security-Policy
// its server declared. The page speaks the extension's ui/* protocol to
// views built with the official App SDK, and proxies a view's tools/call
// and resources/read to its own server through the Manager, which lets a
// view call only the tools its server makes visible to apps.
//
//	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Extensions: mcp.UIExtension()})
//	host := apps.New(m, &apps.Options{SandboxOrigin: "http://*.localhost:8081"})
//	go http.ListenAndServe("127.0.0.1:8081", host.Sandbox())
//	http.ListenAndServe("127.0.0.1:8080", host)
//
// The views of each server run on an origin of their own, a name under
// the sandbox's wildcard (http://3f9a….localhost:8081): browsers resolve
// every name under localhost to the loopback address, so the listener of
// the Sandbox handler answers them all. The sandbox serves a view only to
// a frame of the host page's origin, and the host's API answers only its
// own page.
package apps

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/mcplug/mcplug/mcp"
	"golang.org/x/time/rate"
)

//go:embed assets
var assets embed.FS

// Bounds on what a page and its views may ask of the Host.
const (
	// MaxViews is how many views may be open at once; opening one more
	// closes the one opened first.
	MaxViews = 64
	// MaxMessageSize bounds a message from a view, in bytes.
	MaxMessageSize = 4 << 20
	// MaxInFlight bounds a view's requests served at once; one past it
	// is refused with CodeBusy.
	MaxInFlight = 8
	// MessageRate and MessageBurst bound a view's requests per second;
	// one past them is refused with CodeBusy.
	MessageRate  = 50
	MessageBurst = 100
)

// JSON-RPC error codes of the Host's answers to a view.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeBusy           = -32000 // too many requests of one view
	CodeNotAllowed     = -32001 // a tool the view may not call
)

// Options configure a Host; nil means the defaults.
type Options struct {
	// SandboxOrigin is where views run: an http or https origin whose
	// host name is a wildcard, "*." and a domain ("http://*.localhost:8081").
	// The views of each server run on the origin the wildcard names with a
	// label of that server's own (32 hex digits, a keyed hash of the
	// server's name, fixed for the Host's life), so that views of
	// different servers are as foreign to one another as two sites. The
	// Sandbox handler must be reachable at every name under the domain,
	// on the port given: under localhost a browser resolves them all to
	// the loopback address; another domain needs a wildcard DNS record
	// (and, with https, a wildcard certificate). Required; New panics
	// without it.
	SandboxOrigin string

	// HostInfo names the host to views (ui/initialize); nil means
	// "mcplug".
	HostInfo *mcp.Implementation

	// Message receives a view's ui/message (content for the
	// conversation, as if the user wrote it); nil refuses it (the view
	// gets isError). UpdateModelContext receives ui/update-model-context
	// (what the model should know of the view next turn); nil refuses it
	// (CodeMethodNotFound). Either is declared to views only when set.
	Message            func(ctx context.Context, v *ViewInfo, content []mcp.Content) error
	UpdateModelContext func(ctx context.Context, v *ViewInfo, content []mcp.Content, structured json.RawMessage) error

	// ContentTypes are the types of content block ("text", "image",
	// "audio", "resource", "resource_link") a view may send in ui/message
	// and ui/update-model-context; the Host declares them to views, and a
	// message with a block of another type is refused with
	// CodeInvalidParams before it reaches Message or UpdateModelContext.
	// Nil means text alone. New panics on a type it does not know.
	ContentTypes []string

	// Permissions decides which of the browser permissions a view asks
	// for (its _meta.ui.permissions) it gets; nil grants none.
	Permissions func(v *ViewInfo) *mcp.ResourcePermissions

	// Hosts are the host names (with or without a port) the page answers
	// to; a request naming another host in its Host header is refused,
	// so that a site whose name a DNS rebinding pointed at this program
	// cannot read the page. Nil means the loopback names: localhost,
	// 127.0.0.1 and ::1, on any port. (The sandbox answers only the names
	// of SandboxOrigin that belong to a server.)
	Hosts []string

	Logger *slog.Logger
}

// ViewInfo says which view a message comes from.
type ViewInfo struct {
	ID     string // the Host's name for this showing of the view
	Server string
	Tool   string // the tool whose result it shows, as the server names it
	URI    string // the view's ui:// resource
}

// Host serves the host page, its script (host.js, for pages of the
// program's own) and its API. Create it with New.
type Host struct {
	m       *mcp.Manager
	opts    Options
	sandbox sandboxOrigins
	types   map[string]bool // content types views may send
	token   string          // the page's key to the API
	logger  *slog.Logger
	mux     *http.ServeMux

	mu    sync.Mutex
	views map[string]*session
	order []string // ids, oldest first
}

// session is one showing of a view.
type session struct {
	info       ViewInfo
	exposed    string // the tool's exposed name, for the host's own call
	view       *mcp.View
	tool       mcp.Tool
	csp        string
	allow      string // the iframe's allow attribute
	hostOrigin string // of the page that opened it
	label      string // of the sandbox origin of the view's server
	limiter    *rate.Limiter
	inFlight   chan struct{}
}

// New returns a Host for the app tools of m. It panics if
// opts.SandboxOrigin is not an http or https origin with a wildcard host
// name, or opts.ContentTypes names a type it does not know.
func New(m *mcp.Manager, opts *Options) *Host {
	h := &Host{m: m, views: map[string]*session{}}
	if opts != nil {
		h.opts = *opts
	}
	sb, err := parseSandboxOrigin(h.opts.SandboxOrigin)
	if err != nil {
		panic(err.Error())
	}
	h.sandbox = sb
	h.types, err = contentTypes(h.opts.ContentTypes)
	if err != nil {
		panic(err.Error())
	}
	if h.opts.HostInfo == nil {
		h.opts.HostInfo = &mcp.Implementation{Name: "mcplug", Version: "1"}
	}
	h.logger = h.opts.Logger
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.token = randomID()
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /{$}", h.page)
	h.mux.HandleFunc("GET /host.js", h.script)
	h.mux.HandleFunc("GET /page.js", h.script)
	h.mux.Handle("GET /api/tools", h.api(h.tools))
	h.mux.Handle("POST /api/views", h.api(h.open))
	h.mux.Handle("POST /api/views/{id}/call", h.api(h.call))
	h.mux.Handle("POST /api/views/{id}/rpc", h.api(h.rpc))
	h.mux.Handle("DELETE /api/views/{id}", h.api(h.close))
	return h
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ServeHTTP serves the host page (/), its scripts (/host.js, the bridge
// to views a page of the program's own may load, and /page.js) and the
// page's API (/api/…). Mounted under a prefix, strip it (the page's URLs
// are relative).
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w)
	if !h.allowedHost(r.Host) {
		http.Error(w, "apps: not a host name this page answers to", http.StatusMisdirectedRequest)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// allowedHost reports whether a request's Host header names this Host.
func (h *Host) allowedHost(hostport string) bool {
	name := hostport
	if host, port, err := net.SplitHostPort(hostport); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false // a Host header that is not host:port names nothing of ours
		}
		name = host
	} else if strings.ContainsAny(hostport, " ;,'\"") {
		return false
	}
	if h.opts.Hosts == nil {
		switch strings.Trim(name, "[]") {
		case "localhost", "127.0.0.1", "::1":
			return true
		}
		return false
	}
	for _, allowed := range h.opts.Hosts {
		if strings.EqualFold(allowed, hostport) || strings.EqualFold(allowed, name) {
			return true
		}
	}
	return false
}

// secure sets the headers every answer of the Host carries.
func secure(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
}

func (h *Host) page(w http.ResponseWriter, r *http.Request) {
	b, _ := assets.ReadFile("assets/index.html")
	cfg, _ := json.Marshal(map[string]string{"token": h.token, "sandboxOrigin": h.sandbox.pattern()})
	// The page's own CSP: its scripts and nothing else; frames only from the sandbox.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; frame-src "+h.sandbox.pattern()+"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page := strings.Replace(string(b), "{{config}}", htmlAttr(string(cfg)), 1)
	fmt.Fprint(w, page)
}

func (h *Host) script(w http.ResponseWriter, r *http.Request) {
	b, _ := assets.ReadFile("assets" + r.URL.Path)
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Write(b)
}

// htmlAttr escapes s for a double-quoted HTML attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;", "'", "&#39;").Replace(s)
}

// apiError is an answer of the API that is not a success.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// api wraps a handler of the page's API: only the page of this Host may
// call it (its key, same origin), bodies are bounded, answers are JSON.
func (h *Host) api(fn func(w http.ResponseWriter, r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Mcplug-Host") != h.token || (r.Header.Get("Sec-Fetch-Site") != "" && r.Header.Get("Sec-Fetch-Site") != "same-origin") {
			http.Error(w, "apps: not the host page", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r) {
			http.Error(w, "apps: not the host page", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			http.Error(w, "apps: the body must be JSON", http.StatusUnsupportedMediaType)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxMessageSize)
		v, err := fn(w, r)
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			status := http.StatusInternalServerError
			var ae *apiError
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &ae):
				status = ae.status
			case errors.As(err, &mbe):
				status = http.StatusRequestEntityTooLarge
			case errors.Is(err, mcp.ErrUnknownTool):
				status = http.StatusNotFound
			}
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		json.NewEncoder(w).Encode(v)
	})
}

// decode reads the request's JSON body into v.
func decode(r *http.Request, v any) error {
	err := json.NewDecoder(r.Body).Decode(v)
	var mbe *http.MaxBytesError
	if err != nil && !errors.As(err, &mbe) {
		return &apiError{http.StatusBadRequest, "apps: the body: " + err.Error()}
	}
	return err
}

// sameOrigin reports whether origin is the origin r was sent to.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// toolInfo is an app tool as the page sees it.
type toolInfo struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	ResourceURI string          `json:"resourceUri"`
}

func (h *Host) tools(w http.ResponseWriter, r *http.Request) (any, error) {
	tools, err := h.m.AppTools(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]toolInfo, 0, len(tools))
	for _, t := range tools {
		out = append(out, toolInfo{Server: t.Server, Name: t.Tool.Name, Title: t.Tool.Title, Description: t.Tool.Description, InputSchema: t.Tool.InputSchema, ResourceURI: t.UI.ResourceURI})
	}
	return out, nil
}

// openAnswer is what the page needs to show a view.
type openAnswer struct {
	ID            string                   `json:"id"`
	Server        string                   `json:"server"` // the config's name of the view's server
	HTML          string                   `json:"html"`
	Tool          mcp.Tool                 `json:"tool"`
	CSP           *mcp.ResourceCSP         `json:"csp,omitempty"` // what of the view's CSP the host applied
	Permissions   *mcp.ResourcePermissions `json:"permissions,omitempty"`
	Allow         string                   `json:"allow"`
	PrefersBorder bool                     `json:"prefersBorder"`
	Sandbox       string                   `json:"sandbox"` // the proxy's URL
	HostInfo      *mcp.Implementation      `json:"hostInfo"`
	// HostCapabilities are those the Go host serves (message,
	// updateModelContext), for the page's answer to ui/initialize.
	HostCapabilities map[string]any `json:"hostCapabilities"`
}

func (h *Host) open(w http.ResponseWriter, r *http.Request) (any, error) {
	var req struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	tools, err := h.m.AppTools(r.Context())
	if err != nil {
		return nil, err
	}
	var tool *mcp.AppTool
	for i := range tools {
		if tools[i].Server == req.Server && tools[i].Tool.Name == req.Tool {
			tool = &tools[i]
		}
	}
	if tool == nil {
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("apps: server %q has no app tool %q", req.Server, req.Tool)}
	}
	view, err := h.m.View(r.Context(), tool.Server, tool.UI.ResourceURI)
	if err != nil {
		return nil, err
	}
	s := &session{
		info:     ViewInfo{ID: randomID(), Server: tool.Server, Tool: tool.Tool.Name, URI: view.URI},
		exposed:  tool.Name,
		view:     view,
		tool:     tool.Tool,
		limiter:  rate.NewLimiter(MessageRate, MessageBurst),
		inFlight: make(chan struct{}, MaxInFlight),
	}
	var csp *mcp.ResourceCSP
	var perms *mcp.ResourcePermissions
	if view.UI != nil {
		csp = view.UI.CSP
	}
	if view.UI != nil && view.UI.Permissions != nil && h.opts.Permissions != nil {
		perms = grant(view.UI.Permissions, h.opts.Permissions(&s.info))
	}
	var dropped []string
	s.hostOrigin = h.hostOrigin(r)
	if _, under := h.sandbox.under(r.Host); under {
		return nil, &apiError{http.StatusBadRequest, "apps: the host page is on a name of the sandbox's; serve the page under another name or port than SandboxOrigin's"}
	}
	s.csp, csp, dropped = policy(csp, &h.sandbox)
	for _, d := range dropped {
		h.logger.Warn("apps: a view's CSP names a source that is not an origin, or a sandbox's; left out", "server", tool.Server, "view", view.URI, "source", logged(d))
	}
	s.allow = allowList(perms)
	s.label = h.sandbox.label(tool.Server)
	h.add(s)
	a := &openAnswer{ID: s.info.ID, Server: s.info.Server, HTML: view.HTML, Tool: tool.Tool, CSP: csp, Permissions: perms, Allow: s.allow, Sandbox: h.sandbox.origin(s.label) + "/sandbox/" + s.info.ID, HostInfo: h.opts.HostInfo,
		HostCapabilities: h.capabilities()}
	a.PrefersBorder = view.UI != nil && view.UI.PrefersBorder != nil && *view.UI.PrefersBorder
	return a, nil
}

// hostOrigin is the origin of the host page r comes from.
func (h *Host) hostOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (h *Host) add(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.order) >= MaxViews {
		delete(h.views, h.order[0])
		h.order = h.order[1:]
	}
	h.views[s.info.ID] = s
	h.order = append(h.order, s.info.ID)
}

func (h *Host) session(id string) (*session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.views[id]
	if s == nil {
		return nil, &apiError{http.StatusNotFound, "apps: no such view (closed, or one of more than " + fmt.Sprint(MaxViews) + ")"}
	}
	return s, nil
}

func (h *Host) close(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.views[id] == nil {
		return nil, &apiError{http.StatusNotFound, "apps: no such view"}
	}
	delete(h.views, id)
	for i, o := range h.order {
		if o == id {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
	return struct{}{}, nil
}

// call is the host's own call of the tool whose view it shows (the
// user's, or the model's): any tool the model may call.
func (h *Host) call(w http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.session(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	var req struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	var args any
	if len(req.Arguments) > 0 && string(req.Arguments) != "null" {
		args = req.Arguments
	}
	ctx := r.Context()
	res, err := h.m.CallTool(ctx, s.exposed, args)
	if err != nil {
		return nil, err
	}
	return res, nil
}
