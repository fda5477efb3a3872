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

// policy returns the Content-Security-Policy of a view: nothing from the
// network but what its _meta.ui.csp lists, by kind (scripts and styles
// inlined in the view run; data: and blob: images, fonts and media
// load). Sources that are not origins are left out and returned.
func policy(csp *mcp.ResourceCSP) (string, []string) {
	if csp == nil {
		csp = &mcp.ResourceCSP{}
	}
	var dropped []string
	list := func(srcs []string) []string {
		var out []string
		for _, s := range srcs {
			if source.MatchString(s) {
				out = append(out, s)
			} else {
				dropped = append(dropped, s)
			}
		}
		return out
	}
	res, conn, frames, bases := list(csp.ResourceDomains), list(csp.ConnectDomains), list(csp.FrameDomains), list(csp.BaseURIDomains)
	dir := func(name string, fixed []string, srcs []string) string {
		all := append(append([]string{}, fixed...), srcs...)
		if len(all) == 0 {
			all = []string{"'none'"}
		}
		return name + " " + strings.Join(all, " ")
	}
	p := strings.Join([]string{
		"default-src 'none'",
		dir("script-src", []string{"'unsafe-inline'", "'unsafe-eval'", "blob:"}, res),
		dir("style-src", []string{"'unsafe-inline'"}, res),
		dir("img-src", []string{"data:", "blob:"}, res),
		dir("font-src", []string{"data:"}, res),
		dir("media-src", []string{"data:", "blob:"}, res),
		dir("worker-src", []string{"blob:"}, nil),
		dir("connect-src", nil, conn),
		dir("frame-src", nil, frames),
		dir("base-uri", nil, bases),
		"object-src 'none'",
		"form-action 'none'",
	}, "; ")
	return p, dropped
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
