package apps

import (
	"regexp"
	"strings"

	"github.com/mcplug/mcplug/mcp"
)

// source is what a CSP may take from a server as an origin: a scheme
// that reaches the network, a host (its first label may be "*"), a port,
// a path; nothing that would end the directive or add a keyword.
var source = regexp.MustCompile(`^(https|http|wss|ws)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?(/[A-Za-z0-9._~/%!$&()*+=@-]*)?$`)

// policy returns the Content-Security-Policy of a view, and the part of
// its _meta.ui.csp it applied: nothing from the network but what that
// lists, by kind. Scripts and styles inlined in the view run, and what
// the view makes itself loads, as the extension's reference host allows:
// data: and blob: scripts, styles, images, fonts and media, and blob:
// workers (PDF.js starts one that imports its code from a data: URL),
// which stay under this policy. A source that is not an origin, or that
// names a sandbox origin (a view could frame or fetch another server's),
// is left out and returned.
func policy(csp *mcp.ResourceCSP, sandbox *sandboxOrigins) (string, *mcp.ResourceCSP, []string) {
	if csp == nil {
		csp = &mcp.ResourceCSP{}
	}
	var dropped []string
	list := func(srcs []string) []string {
		var out []string
		for _, s := range srcs {
			if source.MatchString(s) && !sandbox.covers(sourceHost(s)) {
				out = append(out, s)
			} else {
				dropped = append(dropped, s)
			}
		}
		return out
	}
	applied := &mcp.ResourceCSP{ResourceDomains: list(csp.ResourceDomains), ConnectDomains: list(csp.ConnectDomains), FrameDomains: list(csp.FrameDomains), BaseURIDomains: list(csp.BaseURIDomains)}
	res, conn, frames, bases := applied.ResourceDomains, applied.ConnectDomains, applied.FrameDomains, applied.BaseURIDomains
	dir := func(name string, fixed []string, srcs []string) string {
		all := append(append([]string{}, fixed...), srcs...)
		if len(all) == 0 {
			all = []string{"'none'"}
		}
		return name + " " + strings.Join(all, " ")
	}
	local := []string{"data:", "blob:"}
	p := strings.Join([]string{
		"default-src 'none'",
		dir("script-src", []string{"'unsafe-inline'", "'unsafe-eval'", "data:", "blob:"}, res),
		dir("style-src", []string{"'unsafe-inline'", "data:", "blob:"}, res),
		dir("img-src", local, res),
		dir("font-src", local, res),
		dir("media-src", local, res),
		dir("worker-src", []string{"blob:"}, res),
		dir("connect-src", nil, conn),
		dir("frame-src", nil, frames),
		dir("base-uri", nil, bases),
		"object-src 'none'",
		"form-action 'none'",
	}, "; ")
	return p, applied, dropped
}

// sourceHost is the host of a source that matches source.
func sourceHost(s string) string {
	_, rest, _ := strings.Cut(s, "://")
	rest, _, _ = strings.Cut(rest, "/")
	host, _, _ := strings.Cut(rest, ":")
	return host
}

// grant is what of asked the host grants.
func grant(asked, granted *mcp.ResourcePermissions) *mcp.ResourcePermissions {
	if asked == nil || granted == nil {
		return nil
	}
	pick := func(a, g *struct{}) *struct{} {
		if a != nil && g != nil {
			return &struct{}{}
		}
		return nil
	}
	return &mcp.ResourcePermissions{
		Camera:         pick(asked.Camera, granted.Camera),
		Microphone:     pick(asked.Microphone, granted.Microphone),
		Geolocation:    pick(asked.Geolocation, granted.Geolocation),
		ClipboardWrite: pick(asked.ClipboardWrite, granted.ClipboardWrite),
	}
}

// allowList is the iframe allow attribute of the permissions granted.
func allowList(p *mcp.ResourcePermissions) string {
	if p == nil {
		return ""
	}
	var out []string
	for _, f := range []struct {
		on   *struct{}
		name string
	}{{p.Camera, "camera"}, {p.Microphone, "microphone"}, {p.Geolocation, "geolocation"}, {p.ClipboardWrite, "clipboard-write"}} {
		if f.on != nil {
			out = append(out, f.name)
		}
	}
	return strings.Join(out, "; ")
}
