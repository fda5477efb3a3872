package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeadersHelperBounds(t *testing.T) {
	remote := func(t *testing.T, helper string) *mcp.Config {
		b, err := json.Marshal(map[string]any{"r": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": helper}})
		require.NoError(t, err)
		cfg, err := mcp.ParseConfig(strings.NewReader(string(b)), "cfg.json")
		require.NoError(t, err)
		return cfg
	}
	t.Run("output past 64 KiB fails the server, and the helper is killed", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		_, err := remote(t, `echo $$ > `+pidFile+`; exec yes '"padding"'`).Servers["r"].Transport()
		require.ErrorIs(t, err, mcp.ErrHeadersHelper)
		assert.Contains(t, err.Error(), "more than 65536 bytes")
		b, rerr := os.ReadFile(pidFile)
		require.NoError(t, rerr)
		var pid int
		_, _ = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
		assert.True(t, gone(pid), "the helper's process is gone")
	})
	t.Run("Manager.Close does not wait for a helper that hangs", func(t *testing.T) {
		noLeaks(t)
		marker := filepath.Join(t.TempDir(), "running")
		m := newManager(t, remote(t, `touch `+marker+`; sleep 30`), nil)
		started := make(chan error, 1)
		go func() { started <- m.Connect(context.Background()) }()
		require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, 10*time.Second, time.Millisecond, "the helper runs")
		begin := time.Now()
		require.NoError(t, m.Close())
		assert.Less(t, time.Since(begin), 5*time.Second, "Close kills the helper rather than wait out its 10 s")
		<-started
	})
	t.Run("a project server's helper runs only in a trusted workspace", func(t *testing.T) {
		home, project := scratch(t)
		ran := filepath.Join(t.TempDir(), "ran")
		writeFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"r": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headersHelper": "touch `+ran+`; echo {}"}}}`)
		writeFile(t, filepath.Join(home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
		cfg, err := mcp.LoadConfig(project)
		require.NoError(t, err)
		require.Equal(t, mcp.Approved, cfg.Servers["r"].Approval, "approved by the user, yet the workspace is not trusted")
		_, err = cfg.Servers["r"].Transport()
		require.ErrorIs(t, err, mcp.ErrHeadersHelper)
		assert.ErrorContains(t, err, "not trusted")
		assert.NoFileExists(t, ran)

		require.NoError(t, mcp.SaveTrust(project))
		cfg, err = mcp.LoadConfig(project)
		require.NoError(t, err)
		_, err = cfg.Servers["r"].Transport()
		require.NoError(t, err)
		assert.FileExists(t, ran)
	})
}

func TestHeadersHelper(t *testing.T) {
	entry := func(helper string) *mcp.ServerConfig {
		b, err := json.Marshal(map[string]any{"r": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"X-Static": "s", "Authorization": "static"}, "headersHelper": helper}})
		require.NoError(t, err)
		cfg, err := mcp.ParseConfig(strings.NewReader(string(b)), "cfg.json")
		require.NoError(t, err)
		return cfg.Servers["r"]
	}
	t.Run("its JSON output adds headers, and wins", func(t *testing.T) {
		tr, err := entry(`printf '{"Authorization": "Bearer from-helper"}'`).Transport()
		require.NoError(t, err)
		h := tr.(*mcp.StreamableHTTPTransport).Headers
		assert.Equal(t, "Bearer from-helper", h.Get("Authorization"))
		assert.Equal(t, "s", h.Get("X-Static"))
	})
	t.Run("a failing helper fails the connection without quoting its output", func(t *testing.T) {
		_, err := entry(`echo '{"Authorization": "Bearer s3cret"}'; exit 3`).Transport()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "exit status 3")
		assert.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("output that is not a JSON object of strings is refused", func(t *testing.T) {
		_, err := entry(`echo 'token=s3cret'`).Transport()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("a slow helper is bounded", func(t *testing.T) {
		defer mcp.SetHeadersHelperTimeout(100 * time.Millisecond)()
		start := time.Now()
		_, err := entry(`sleep 30`).Transport()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "did not finish")
		assert.Less(t, time.Since(start), 5*time.Second)
	})
}
