package origin

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	for raw, want := range map[string]string{
		"https://a.example/x":       "https://a.example:443",
		"HTTPS://A.example:443/":    "https://a.example:443",
		"http://a.example":          "http://a.example:80",
		"http://a.example:8080/mcp": "http://a.example:8080",
		"http://[::1]:3000/cb":      "http://::1:3000",
	} {
		u, err := url.Parse(raw)
		assert.NoError(t, err)
		assert.Equal(t, want, Of(u), raw)
	}
}
