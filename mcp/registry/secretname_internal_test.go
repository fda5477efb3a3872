package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestANameThatSaysItHoldsASecretIsTakenAsOne(t *testing.T) {
	tests := []struct {
		name   string
		secret bool
	}{
		{"GITHUB_TOKEN", true},
		{"X-Ref-Api-Key", true},
		{"--motherduck-token", true},
		{"Authorization", true},
		{"--connectionString", true}, // mongodb://user:pass@…
		{"MDB_MCP_CONNECTION_STRING", true},
		{"DATABASE_URL", true},
		{"POSTGRES_DSN", true},
		{"db-uri", true},
		{"NEO4J_RESPONSE_TOKEN_LIMIT", false},
		{"MAX_TOKENS", false},
		{"NEO4J_URI", false},
		{"LOG_LEVEL", false},
		{"--read-only", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.secret, looksSecret(tt.name), tt.name)
	}
}
