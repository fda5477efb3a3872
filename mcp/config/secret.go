package config

import (
	"encoding/json"
	"net/url"
	"strings"
)

// holdsSecret reports whether the server entry raw holds a value that may
// be a secret, written out rather than referred to: a value of its env
// or headers, its oauth clientSecret or idpClientSecret, or the user
// information or a query value of its url. A value made only of ${NAME}
// references without a default, white space and an authorization scheme
// ("Bearer ${TOKEN}") refers to a secret and holds none. A setting cannot
// be told from a secret, so every other such value counts; the command
// and its arguments never do (they are shown wherever the server is
// listed: a secret belongs in env). An entry that is not an object holds
// none.
func holdsSecret(raw []byte) bool {
	var entry struct {
		Env     map[string]any `json:"env"`
		Headers map[string]any `json:"headers"`
		URL     any            `json:"url"`
		OAuth   map[string]any `json:"oauth"`
	}
	if json.Unmarshal(raw, &entry) != nil {
		// A member of an unexpected type: decode what can be decoded.
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return false
		}
		_ = json.Unmarshal(members["env"], &entry.Env)
		_ = json.Unmarshal(members["headers"], &entry.Headers)
		_ = json.Unmarshal(members["url"], &entry.URL)
		_ = json.Unmarshal(members["oauth"], &entry.OAuth)
	}
	for _, m := range []map[string]any{entry.Env, entry.Headers} {
		for _, v := range m {
			if s, ok := v.(string); ok && !refersOnly(s) {
				return true
			}
		}
	}
	for _, k := range []string{"clientSecret", "idpClientSecret"} {
		if s, ok := entry.OAuth[k].(string); ok && !refersOnly(s) {
			return true
		}
	}
	if s, ok := entry.URL.(string); ok {
		u, err := url.Parse(s)
		if err != nil {
			return strings.ContainsAny(s, "@?") // cannot tell: count it
		}
		if u.User != nil && !refersOnly(u.User.String()) {
			return true
		}
		q, _ := url.ParseQuery(u.RawQuery)
		for _, vs := range q {
			for _, v := range vs {
				if !refersOnly(v) {
					return true
				}
			}
		}
	}
	return false
}

// refersOnly reports whether s is made only of ${NAME} references
// without a default, white space, and an authorization scheme before
// them.
func refersOnly(s string) bool {
	s = strings.TrimSpace(s)
	for _, scheme := range []string{"bearer ", "basic ", "token "} {
		if len(s) > len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			s = s[len(scheme):]
			break
		}
	}
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return true
		}
		if !strings.HasPrefix(s, "${") {
			return false
		}
		end := closingBrace(s[2:])
		if end < 0 || strings.Contains(s[2:2+end], ":-") || strings.Contains(s[2:2+end], "${") {
			return false // not closed, or a default written out
		}
		s = s[2+end+1:]
	}
}
