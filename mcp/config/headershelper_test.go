package config_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeadersHelperBounds(t *testing.T) {
	remote := func(t *testing.T, helper string) *config.Config {
		b, err := json.Marshal(map[string]any{"r": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": helper}})
		require.NoError(t, err)
		cfg, err := config.Parse(strings.NewReader(string(b)), "cfg.json")
		require.NoError(t, err)
		return cfg
	}
	t.Run("output past 64 KiB fails the server, and the helper is killed", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		_, err := remote(t, `echo $$ > `+pidFile+`; exec yes '"padding"'`).Servers["r"].HTTPHeader(context.Background())
		require.ErrorIs(t, err, config.ErrHeadersHelper)
		assert.Contains(t, err.Error(), "more than 65536 bytes")
		b, rerr := os.ReadFile(pidFile)
		require.NoError(t, rerr)
		var pid int
		_, _ = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
		assert.True(t, testproc.Gone(pid), "the helper's process is gone")
	})
	t.Run("a project server's helper runs only in a trusted workspace", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		ran := filepath.Join(t.TempDir(), "ran")
		testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"r": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": "touch `+ran+`; echo {}"}}}`)
		testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
		cfg, err := config.Load(project)
		require.NoError(t, err)
		require.Equal(t, config.Approved, cfg.Servers["r"].Approval, "approved by the user, yet the workspace is not trusted")
		_, err = cfg.Servers["r"].HTTPHeader(context.Background())
		require.ErrorIs(t, err, config.ErrHeadersHelper)
		assert.ErrorContains(t, err, "not trusted")
		assert.NoFileExists(t, ran)

		require.NoError(t, config.SaveTrust(project))
		cfg, err = config.Load(project)
		require.NoError(t, err)
		_, err = cfg.Servers["r"].HTTPHeader(context.Background())
		require.NoError(t, err)
		assert.FileExists(t, ran)
	})
}

func TestHeadersHelper(t *testing.T) {
	entry := func(helper string) *config.Server {
		b, err := json.Marshal(map[string]any{"r": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"X-Static": "s", "Authorization": "static"}, "headersHelper": helper}})
		require.NoError(t, err)
		cfg, err := config.Parse(strings.NewReader(string(b)), "cfg.json")
		require.NoError(t, err)
		return cfg.Servers["r"]
	}
	t.Run("its JSON output adds headers, and wins", func(t *testing.T) {
		h, err := entry(`printf '{"Authorization": "Bearer from-helper"}'`).HTTPHeader(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "Bearer from-helper", h.Get("Authorization"))
		assert.Equal(t, "s", h.Get("X-Static"))
	})
	t.Run("a failing helper fails the connection without quoting its output", func(t *testing.T) {
		_, err := entry(`echo '{"Authorization": "Bearer s3cret"}'; exit 3`).HTTPHeader(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "exit status 3")
		assert.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("output that is not a JSON object of strings is refused", func(t *testing.T) {
		_, err := entry(`echo 'token=s3cret'`).HTTPHeader(context.Background())
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("a slow helper is bounded", func(t *testing.T) {
		defer config.SetHeadersHelperTimeout(100 * time.Millisecond)()
		start := time.Now()
		_, err := entry(`sleep 30`).HTTPHeader(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "did not finish")
		assert.Less(t, time.Since(start), 5*time.Second)
	})
}
