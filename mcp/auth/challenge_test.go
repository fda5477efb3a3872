package auth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   challenge
		ok     bool
	}{
		{"resource metadata and scope", []string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write"`},
			challenge{resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource", scope: []string{"files:read", "files:write"}}, true},
		{"after another scheme", []string{`Basic realm="x", Bearer error="insufficient_scope", scope="w"`},
			challenge{err: "insufficient_scope", scope: []string{"w"}}, true},
		{"tokens without quotes", []string{`Bearer realm=example,scope=read,error=invalid_token`},
			challenge{err: "invalid_token", scope: []string{"read"}}, true},
		{"escaped quotes", []string{`Bearer error_description="say \"hi\"", scope="a"`}, challenge{scope: []string{"a"}}, true},
		{"in a second header", []string{`Basic realm="x"`, `Bearer scope="b"`}, challenge{scope: []string{"b"}}, true},
		{"scheme in any case", []string{`bearer scope="c"`}, challenge{scope: []string{"c"}}, true},
		{"none", []string{`Basic realm="x"`}, challenge{}, false},
		{"scopes past the bounds are dropped", []string{`Bearer scope="` + strings.Repeat("x", 300) + " " + strings.Repeat("s ", 100) + `"`},
			challenge{scope: slices.Repeat([]string{"s"}, maxScopes)}, true},
		{"garbage", []string{`="",,, "`}, challenge{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.values {
				h.Add("WWW-Authenticate", v)
			}
			got, ok := parseChallenges(h)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://x", scope="a b", error="insufficient_scope"`)
	f.Add(`Basic realm="x", Bearer scope=y`)
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{"Www-Authenticate": {v}}
		parseChallenges(h) // must not panic or loop
	})
}

func TestCovers(t *testing.T) {
	tests := []struct {
		resource, server string
		want             bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},
		{"https://MCP.example.com:443/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/mc", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp/tenant", "https://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false},
		{"https://evil.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp", false},
		{"mcp.example.com", "https://mcp.example.com/mcp", false},
	}
	for _, tt := range tests {
		u := mustParse(t, tt.server)
		assert.Equal(t, tt.want, covers(tt.resource, u), "%s covers %s", tt.resource, tt.server)
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
