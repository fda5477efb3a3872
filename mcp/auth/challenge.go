package auth

import (
	"net/http"
	"strings"
)

// challenge is a Bearer challenge of a WWW-Authenticate header (RFC 6750
// section 3, RFC 9728 section 5.1).
type challenge struct {
	resourceMetadata string
	scope            []string
	err              string
}

// parseChallenges reads the Bearer challenge of a response's
// WWW-Authenticate headers; ok is false when there is none.
func parseChallenges(h http.Header) (c challenge, ok bool) {
	for _, v := range h.Values("Www-Authenticate") {
		for _, ch := range splitChallenges(v) {
			if !strings.EqualFold(ch.scheme, "Bearer") && !strings.EqualFold(ch.scheme, "DPoP") {
				continue
			}
			c = challenge{
				resourceMetadata: ch.params["resource_metadata"],
				scope:            boundScopes(strings.Fields(ch.params["scope"])),
				err:              ch.params["error"],
			}
			return c, true
		}
	}
	return challenge{}, false
}

type rawChallenge struct {
	scheme string
	params map[string]string
}

// splitChallenges parses one WWW-Authenticate value (RFC 9110 section
// 11.6.1): challenges, each a scheme and auth-params, where a value is a
// token or a quoted string. A token68 is skipped.
func splitChallenges(v string) []rawChallenge {
	var out []rawChallenge
	i := 0
	skipSpace := func() {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
	}
	token := func() string {
		start := i
		for i < len(v) && !strings.ContainsRune(" \t,=\"", rune(v[i])) {
			i++
		}
		return v[start:i]
	}
	for i < len(v) {
		skipSpace()
		for i < len(v) && v[i] == ',' {
			i++
			skipSpace()
		}
		scheme := token()
		if scheme == "" {
			if i < len(v) {
				i++ // a stray character
			}
			continue
		}
		ch := rawChallenge{scheme: scheme, params: map[string]string{}}
		for {
			skipSpace()
			save := i
			name := token()
			skipSpace()
			if name == "" || i >= len(v) || v[i] != '=' {
				i = save // the next challenge's scheme, or the end
				break
			}
			i++ // '='
			skipSpace()
			var val string
			if i < len(v) && v[i] == '"' {
				i++
				var b strings.Builder
				for i < len(v) && v[i] != '"' {
					if v[i] == '\\' && i+1 < len(v) {
						i++
					}
					b.WriteByte(v[i])
					i++
				}
				i++ // closing quote
				val = b.String()
			} else {
				val = token()
				for i < len(v) && v[i] == '=' { // token68 padding
					i++
				}
			}
			ch.params[strings.ToLower(name)] = val
			skipSpace()
			if i < len(v) && v[i] == ',' {
				i++
				continue
			}
			break
		}
		out = append(out, ch)
	}
	return out
}

// Bounds of the scopes a server names (in a challenge or in its metadata):
// past them the rest is dropped, so that a server cannot make the client
// ask for an authorization URL of any size.
const (
	maxScopes    = 64
	maxScopeSize = 256
)

func boundScopes(scopes []string) []string {
	out := scopes[:0:0]
	for _, s := range scopes {
		if len(out) == maxScopes {
			break
		}
		if len(s) <= maxScopeSize {
			out = append(out, s)
		}
	}
	return out
}
