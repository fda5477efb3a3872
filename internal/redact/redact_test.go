package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/mcp", "https://example.com/mcp"},
		{"https://u:pw@example.com/mcp", "https://REDACTED:REDACTED@example.com/mcp"},
		{"https://ghp_t0ken@example.com/mcp", "https://REDACTED@example.com/mcp"},
		{"https://example.com/mcp?api_key=k&x=1", "https://example.com/mcp?api_key=REDACTED&x=REDACTED"},
		{"https://example.com/mcp#tok", "https://example.com/mcp#REDACTED"},
		{"%%bad?x=1", "REDACTED"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { assert.Equal(t, tt.want, URL(tt.in)) })
	}
}
