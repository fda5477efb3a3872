package apps

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// sandboxOrigins are the origins views run on: one a server, named by a
// label of its own under the wildcard of Options.SandboxOrigin.
type sandboxOrigins struct {
	scheme string // http or https
	domain string // what follows "*.", in lower case
	port   string // "" for the scheme's default
	key    []byte // of the labels' hash
}

// labelLen is the length of a server's label: 128 bits in hex.
const labelLen = 32

// domainName is a DNS name of letters, digits and hyphens.
var domainName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// parseSandboxOrigin reads Options.SandboxOrigin: scheme://*.domain[:port].
func parseSandboxOrigin(s string) (sandboxOrigins, error) {
	bad := func(why string) (sandboxOrigins, error) {
		return sandboxOrigins{}, fmt.Errorf("apps: SandboxOrigin %q %s; give a wildcard origin such as http://*.localhost:8081", s, why)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("is not an http or https origin")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
		return bad("has more than an origin")
	}
	domain, ok := strings.CutPrefix(strings.ToLower(u.Hostname()), "*.")
	if !ok {
		return bad("has no wildcard host name")
	}
	labels := strings.Split(domain, ".")
	if !domainName.MatchString(domain) || len(domain)+1+labelLen > 253 || strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return bad("names no domain under its wildcard")
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad("has a port that is not one")
		}
		port = strconv.FormatUint(n, 10)
		if (u.Scheme == "http" && n == 80) || (u.Scheme == "https" && n == 443) {
			port = "" // an origin leaves its scheme's port out
		}
	}
	o := sandboxOrigins{scheme: u.Scheme, domain: domain, port: port, key: make([]byte, 32)}
	rand.Read(o.key)
	return o, nil
}

// hostport is what follows "label." in a sandbox origin.
func (o *sandboxOrigins) hostport() string {
	if o.port == "" {
		return o.domain
	}
	return o.domain + ":" + o.port
}

// pattern is the wildcard origin, as a CSP source.
func (o *sandboxOrigins) pattern() string {
	return o.scheme + "://*." + o.hostport()
}

// label is the label of a server's origin: a keyed hash of its name, so
// that a name cannot be read from it and a server cannot choose it.
func (o *sandboxOrigins) label(server string) string {
	m := hmac.New(sha256.New, o.key)
	m.Write([]byte(server))
	return hex.EncodeToString(m.Sum(nil))[:labelLen]
}

// origin is the origin of a label.
func (o *sandboxOrigins) origin(label string) string {
	return o.scheme + "://" + label + "." + o.hostport()
}

// under reports whether a Host header names the sandbox's domain or a
// name under it, on the sandbox's port, and returns what precedes the
// domain ("" for the domain itself).
func (o *sandboxOrigins) under(hostport string) (string, bool) {
	name, port := strings.ToLower(hostport), ""
	if h, p, err := net.SplitHostPort(name); err == nil {
		name, port = h, p
	}
	if port != o.port {
		return "", false
	}
	if name == o.domain {
		return "", true
	}
	sub, ok := strings.CutSuffix(name, "."+o.domain)
	return sub, ok && sub != ""
}

// labelOf is the label of the sandbox origin a Host header names.
func (o *sandboxOrigins) labelOf(hostport string) (string, bool) {
	label, ok := o.under(hostport)
	if !ok || len(label) != labelLen || strings.Trim(label, "0123456789abcdef") != "" {
		return "", false
	}
	return label, true
}

// covers reports whether a CSP source's host (its first label may be
// "*") matches a name under the sandbox's domain: a view that lists one
// could frame or fetch another server's origin.
func (o *sandboxOrigins) covers(host string) bool {
	host = strings.ToLower(host)
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		return rest == o.domain || strings.HasSuffix(o.domain, "."+rest) || strings.HasSuffix(rest, "."+o.domain)
	}
	return strings.HasSuffix(host, "."+o.domain)
}

// Sandbox returns the handler of the sandbox origins: the proxy page of
// each open view (/sandbox/{id}), on the origin of the view's server,
// under the view's CSP, framed only by the host page. Serve it where
// every name of Options.SandboxOrigin reaches it. It answers a request
// for another name with 421, and one for a view of another server's
// origin with 404.
func (h *Host) Sandbox() http.Handler {
	return http.HandlerFunc(h.serveSandbox)
}

func (h *Host) serveSandbox(w http.ResponseWriter, r *http.Request) {
	secure(w)
	// What is not a view's proxy gets no origin and runs nothing: a view
	// that framed it could otherwise script a document of its own origin
	// that no CSP binds.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	// Never in one agent cluster with a neighbour: document.domain stays
	// as it is.
	w.Header().Set("Origin-Agent-Cluster", "?1")
	label, ok := h.sandbox.labelOf(r.Host)
	if !ok {
		http.Error(w, "apps: not a host name this sandbox answers to", http.StatusMisdirectedRequest)
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/sandbox/")
	if r.Method != http.MethodGet || !ok {
		http.NotFound(w, r)
		return
	}
	s, err := h.session(id)
	if err != nil || s.label != label {
		http.NotFound(w, r)
		return
	}
	b, _ := assets.ReadFile("assets/sandbox.html")
	cfg, _ := json.Marshal(map[string]string{"hostOrigin": s.hostOrigin, "allow": s.allow})
	// The view's CSP, which the view's document inherits, and frames of
	// the host's origin only.
	w.Header().Set("Content-Security-Policy", s.csp+"; frame-ancestors "+s.hostOrigin)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, strings.Replace(string(b), "{{config}}", htmlAttr(string(cfg)), 1))
}
