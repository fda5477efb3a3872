package config

// The serverUrl entries of the organisation's policy: a pattern and a
// server's URL are each parsed and reduced to what names a server
// (scheme, host, port, path, query) before they are compared, so that a
// '*' matches within one part and every spelling of a host is the host.

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// errUnparsable is the error of a server URL the policy cannot read as
// the HTTP client would; such a URL is never allowed by a serverUrl entry
// and is denied by every one.
var errUnparsable = errors.New("the URL cannot be parsed")

// serverURL is a server's URL reduced to what the policy compares.
type serverURL struct {
	scheme string // lower-case
	host   string // lower-case ASCII (IDNA), no trailing dot; an IPv6 address in brackets, canonical, without its zone
	port   int    // the port connected to: the URL's, or its scheme's default
	path   string // percent-encoding normalised, dot segments removed, "/" when empty
	query  string // percent-encoding normalised
}

// defaultPort is the port of a scheme when its URL names none (0: none).
func defaultPort(scheme string) int {
	switch scheme {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	}
	return 0
}

// parseServerURL parses raw as the HTTP client does and reduces it: the
// scheme and host lower-cased, a host of other scripts or of full-width
// letters in its IDNA form (as net/http dials it), one trailing dot
// removed, the default port dropped; the user information, the
// fragment and an IPv6 address's zone left out (none names the server). A URL with a backslash,
// white space or a control character, a host given in percent-encoding,
// with an empty label, or a number that is not a plain dotted IPv4
// address (127.1, 0x7f.1, 2130706433: resolvers read them as addresses)
// is errUnparsable.
func parseServerURL(raw string) (*serverURL, error) {
	if i := strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }); i >= 0 {
		return nil, fmt.Errorf("%w: it has a backslash, white space or a control character", errUnparsable)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnparsable, errors.Unwrap(err))
	}
	if u.Opaque != "" || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%w: it has no scheme://host", errUnparsable)
	}
	s := &serverURL{scheme: strings.ToLower(u.Scheme)}
	if s.host, err = normalHost(u.Host, u.Hostname()); err != nil {
		return nil, err
	}
	s.port = defaultPort(s.scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("%w: its port is not a number from 0 to 65535", errUnparsable)
		}
		s.port = n
	}
	s.path = removeDotSegments(normalEscapes(u.EscapedPath()))
	if s.path == "" {
		s.path = "/"
	}
	s.query = normalEscapes(u.RawQuery)
	return s, nil
}

// normalHost reduces the host of a URL (hostport as written, hostname
// without its port and brackets).
func normalHost(hostport, hostname string) (string, error) {
	if strings.HasPrefix(hostport, "[") {
		a, err := netip.ParseAddr(hostname)
		if err != nil {
			return "", fmt.Errorf("%w: its IPv6 address is not one", errUnparsable)
		}
		// A zone (fe80::1%eth0) names the interface the address is
		// reached through, not another server.
		a = a.WithZone("")
		if a.Is4In6() { // the client connects to it over IPv4
			return a.Unmap().String(), nil
		}
		return "[" + a.String() + "]", nil
	}
	h := hostname
	if strings.ContainsRune(hostport, '%') {
		return "", fmt.Errorf("%w: its host is percent-encoded", errUnparsable)
	}
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%w: its host is not a valid international domain name", errUnparsable)
		}
		h = a
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" || strings.HasPrefix(h, ".") || strings.Contains(h, "..") || strings.HasSuffix(h, ".") {
		return "", fmt.Errorf("%w: its host has an empty label", errUnparsable)
	}
	if looksNumeric(h) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() {
			return "", fmt.Errorf("%w: its host is a number that is not a dotted IPv4 address", errUnparsable)
		}
		return a.String(), nil
	}
	return h, nil
}

// looksNumeric reports whether a host's last label is a number (decimal
// or 0x hexadecimal), which resolvers and browsers read as an IPv4
// address.
func looksNumeric(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		last = rest
		return strings.Trim(last, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// normalEscapes decodes the percent-encoded characters that need none
// (letters, digits, '-', '.', '_', '~') and upper-cases the hex digits
// of the others (RFC 3986, 6.2.2), so /%6Dcp is /mcp and %2e%2e is "..".
func normalEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c := unhex(s[i+1])<<4 | unhex(s[i+2])
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
				b.WriteByte(c)
			} else {
				b.WriteString(strings.ToUpper(s[i : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// removeDotSegments resolves "." and ".." segments of a path, as a
// server does (RFC 3986, 5.2.4): /public/../admin is /admin.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	var out []string
	segs := strings.Split(p, "/")
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// urlPattern is a serverUrl entry, parsed: "*" alone (every URL), or
// scheme://host[:port][/path][?query] where '*' is a wildcard within the
// part it is in.
type urlPattern struct {
	any      bool
	scheme   string // "*": any
	host     string // a glob over the reduced host
	port     int    // -1: any port; 0: the scheme's default, or any with a '*' in the host
	path     string // a glob over the reduced path; "" when the pattern has none (any path and query)
	query    string // a glob over the reduced query
	hasQuery bool
}

// parseURLPattern parses a serverUrl entry. Its host is reduced as a
// server's is (lower case, IDNA, one trailing dot dropped); a pattern
// with user information, a backslash or white space, or without a
// scheme is an error.
func parseURLPattern(p string) (*urlPattern, error) {
	if p == "*" {
		return &urlPattern{any: true}, nil
	}
	if strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) >= 0 {
		return nil, errors.New("it has a backslash, white space or a control character")
	}
	scheme, rest, ok := strings.Cut(p, "://")
	scheme = strings.ToLower(scheme)
	if !ok || scheme == "" || scheme != "*" && strings.Trim(scheme, "abcdefghijklmnopqrstuvwxyz0123456789+.-") != "" {
		return nil, errors.New(`it needs a scheme, as "https://host/path" (a '*' stands for any characters of one part)`)
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	if strings.Contains(authority, "@") {
		return nil, errors.New("a pattern names a host, not a user: user information ('@') is not matched")
	}
	pat := &urlPattern{scheme: scheme}
	host := authority
	if strings.HasPrefix(authority, "[") {
		i := strings.IndexByte(authority, ']')
		if i < 0 {
			return nil, errors.New("its IPv6 address has no ']'")
		}
		host = authority[:i+1]
		if port, ok := strings.CutPrefix(authority[i+1:], ":"); ok {
			if err := pat.setPort(port); err != nil {
				return nil, err
			}
		} else if authority[i+1:] != "" {
			return nil, errors.New("its IPv6 address is followed by something other than a port")
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil {
			return nil, fmt.Errorf("%s is not an IPv6 address", host)
		}
		a = a.WithZone("") // as a server's
		pat.host = "[" + a.String() + "]"
		if a.Is4In6() {
			pat.host = a.Unmap().String()
		}
	} else {
		if i := strings.LastIndexByte(authority, ':'); i >= 0 {
			host = authority[:i]
			if err := pat.setPort(authority[i+1:]); err != nil {
				return nil, err
			}
		}
		h, err := patternHost(host)
		if err != nil {
			return nil, err
		}
		pat.host = h
	}
	rest, _, _ = strings.Cut(rest, "#") // a fragment names no server
	path, query, hasQuery := strings.Cut(rest, "?")
	pat.path = removeDotSegments(normalEscapes(path))
	pat.query, pat.hasQuery = normalEscapes(query), hasQuery
	if pat.path == "" && hasQuery {
		pat.path = "/"
	}
	return pat, nil
}

func (pat *urlPattern) setPort(port string) error {
	switch {
	case port == "*":
		pat.port = -1
	case port == "":
	default:
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 || strings.Trim(port, "0123456789") != "" {
			return fmt.Errorf("its port %q is not a number from 0 to 65535, nor '*'", port)
		}
		pat.port = n
		if n == 0 {
			pat.port = -2 // port 0 itself, not "none"
		}
	}
	return nil
}

// patternHost reduces the host of a pattern: labels without a '*' as a
// server's host is reduced, those with one lower-cased (and ASCII only).
func patternHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("it has no host")
	}
	if strings.ContainsAny(h, "%[]") {
		return "", errors.New("its host is percent-encoded or malformed")
	}
	if !strings.Contains(h, "*") {
		return normalHost(h, h)
	}
	h = strings.TrimSuffix(h, ".")
	labels := strings.Split(h, ".")
	for i, l := range labels {
		switch {
		case l == "":
			return "", errors.New("its host has an empty label")
		case strings.Contains(l, "*"):
			if !isASCII(l) {
				return "", errors.New("a host label with a '*' must be ASCII (write other scripts in their xn-- form)")
			}
			labels[i] = strings.ToLower(l)
		case !isASCII(l):
			a, err := idna.Lookup.ToASCII(l)
			if err != nil {
				return "", fmt.Errorf("its host label %q is not a valid international domain name", l)
			}
			labels[i] = a
		default:
			labels[i] = strings.ToLower(l)
		}
	}
	return strings.Join(labels, "."), nil
}

// matches reports whether the pattern matches u. A deny entry (deny)
// matches more than an allow entry, so that what it names cannot be
// reached another way: a deny pattern without a port matches every port
// of its host, without a query every query, and its path matches with
// or without a trailing slash. An allow pattern without a port matches
// only the scheme's default port (any port when its host has a '*', as
// Claude Code has it), and without a query only a URL without one,
// unless its path ends in '*'.
func (pat *urlPattern) matches(u *serverURL, deny bool) bool {
	if pat.any {
		return true
	}
	if pat.scheme != "*" && pat.scheme != u.scheme {
		return false
	}
	if !glob(pat.host, u.host) {
		return false
	}
	switch {
	case pat.port == -1:
	case pat.port == -2:
		if u.port != 0 {
			return false
		}
	case pat.port > 0:
		if u.port != pat.port {
			return false
		}
	case deny || strings.Contains(pat.host, "*"):
	default:
		if u.port != defaultPort(u.scheme) || u.port == 0 {
			return false
		}
	}
	if pat.path == "" {
		return true // scheme://host: every path and query of the host
	}
	if pat.hasQuery && !glob(pat.query, u.query) {
		return false
	}
	if !pat.hasQuery && !deny && u.query != "" && !strings.HasSuffix(pat.path, "*") {
		return false
	}
	if glob(pat.path, u.path) {
		return true
	}
	if deny {
		trimmed := strings.TrimRight(u.path, "/")
		return glob(pat.path, trimmed) || glob(pat.path, trimmed+"/")
	}
	return false
}

// glob reports whether s matches pattern, where '*' stands for any run
// of characters (none too) and every other character for itself.
func glob(pattern, s string) bool {
	star, next := -1, 0 // the last '*' seen, and where in s its run ends
	p, i := 0, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, next = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			next++
			p, i = star+1, next
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
