// Package origin computes the origin of a URL (RFC 6454): what the HTTP
// transports and the authorization client compare before sending
// credentials anywhere.
package origin

import (
	"net/url"
	"strings"
)

// Of returns u's origin as scheme://host:port, lower-cased, with the
// default port made explicit, so that "https://a" and "https://A:443" are
// one origin.
func Of(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
