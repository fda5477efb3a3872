package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManagerKeepsSecretsOutOfStatusAndLogs(t *testing.T) {
	t.Setenv("MCPLUG_TEST_SECRET", "s3cr3t")
	cfg, _ := config.Parse(strings.NewReader(`{"mcpServers": {
		"remote": {"type": "http", "url": "http://user:pa55@127.0.0.1:1/mcp?api_key=${MCPLUG_TEST_SECRET}", "headers": {"X-Key": "${MCPLUG_TEST_SECRET}"}},
		"legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse?token=${MCPLUG_TEST_SECRET}"},
		"named": {"type": "http", "url": "http://${MCPLUG_TEST_SECRET}@127.0.0.1:1/mcp"},
		"stdio": {"command": "/nonexistent/${MCPLUG_TEST_UNSET_X:-cmd}", "env": {"TOKEN": "${MCPLUG_TEST_SECRET}"}},
		"bad": {"type": "http", "url": "http://127.0.0.1:1/", "headers": {"Authorization": "Bearer s3cr3t ${"}}
	}}`), "cfg.json")
	var logs bytes.Buffer
	m := NewManager(cfg, &ManagerOptions{ConnectTimeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.Error(t, m.Connect(ctx))
	var text strings.Builder
	for _, st := range m.Status() {
		require.Error(t, st.Err, st.Name)
		text.WriteString(st.Err.Error() + "\n")
	}
	text.WriteString(logs.String())
	assert.NotContains(t, text.String(), "s3cr3t")
	assert.NotContains(t, text.String(), "pa55")
	assert.Contains(t, text.String(), "remote", "the errors are there, without their secrets")
}
