package config_test

import (
	"testing"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
)

func TestWhatHoldsASecret(t *testing.T) {
	tests := []struct {
		name, entry string
		secret      bool
	}{
		{"a command alone", `{"command":"x"}`, false},
		{"arguments never count (they are listed wherever the server is)", `{"command":"x","args":["--token","abc"]}`, false},
		{"no env", `{"command":"x","env":{}}`, false},
		{"an env value written out", `{"command":"x","env":{"K":"v"}}`, true},
		{"an env value that refers to a variable", `{"command":"x","env":{"K":"${K}"}}`, false},
		{"two references", `{"command":"x","env":{"K":"${A}${B}"}}`, false},
		{"a reference with a default written out", `{"command":"x","env":{"K":"${K:-s3cret}"}}`, true},
		{"a reference with text around it", `{"command":"x","env":{"K":"pre${K}"}}`, true},
		{"a reference not closed", `{"command":"x","env":{"K":"${K"}}`, true},
		{"an authorization scheme and a reference", `{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`, false},
		{"a token written out", `{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer abc"}}`, true},
		{"any header value written out (a setting cannot be told from a secret)", `{"type":"http","url":"https://h/mcp","headers":{"X-Mode":"fast"}}`, true},
		{"user information in the url", `{"type":"http","url":"https://u:p@h/mcp"}`, true},
		{"a query value in the url", `{"type":"http","url":"https://h/mcp?key=abc"}`, true},
		{"a query value that refers to a variable", `{"type":"http","url":"https://h/mcp?key=${KEY}"}`, false},
		{"a plain url", `{"type":"http","url":"https://h/mcp"}`, false},
		{"an oauth client secret", `{"type":"http","url":"https://h/mcp","oauth":{"clientId":"c","clientSecret":"s"}}`, true},
		{"an oauth client secret by reference", `{"type":"http","url":"https://h/mcp","oauth":{"clientId":"c","clientSecret":"${S}"}}`, false},
		{"an oauth client id alone", `{"type":"http","url":"https://h/mcp","oauth":{"clientId":"c"}}`, false},
		{"a member of another type beside a secret", `{"command":"x","env":5,"headers":{"A":"b"}}`, true},
		{"not an object", `"x"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.secret, config.HoldsSecret(tt.entry))
		})
	}
}
