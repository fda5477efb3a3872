package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSaveApproval(t *testing.T) {
	_, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"proj": {"command": "proj"}}}`)
	require.NoError(t, config.SaveTrust(project))
	local := filepath.Join(project, ".claude", "settings.local.json")
	testdir.Write(t, local, `{"permissions": {"allow": ["Bash"]}, "disabledMcpjsonServers": ["proj", "other"]}`)
	require.NoError(t, config.SaveApproval(project, "proj", true))
	cfg, err := config.Load(project)
	require.NoError(t, err)
	assert.Equal(t, config.Approved, cfg.Servers["proj"].Approval)
	b, err := os.ReadFile(local)
	require.NoError(t, err)
	assert.JSONEq(t, `{"permissions": {"allow": ["Bash"]}, "enabledMcpjsonServers": ["proj"], "disabledMcpjsonServers": ["other"]}`, string(b), "other settings are kept")

	require.NoError(t, config.SaveApproval(project, "proj", false))
	cfg, _ = config.Load(project)
	assert.Equal(t, config.Rejected, cfg.Servers["proj"].Approval)

	fresh := t.TempDir()
	require.NoError(t, config.SaveApproval(fresh, "x", true))
	info, err := os.Stat(filepath.Join(fresh, ".claude", "settings.local.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestSaveApprovalNeverWritesThroughASymlink(t *testing.T) {
	t.Run("a settings.local.json that links elsewhere", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		userSettings := filepath.Join(home, ".claude", "settings.json")
		testdir.Write(t, userSettings, `{}`)
		require.NoError(t, os.MkdirAll(filepath.Join(project, ".claude"), 0o755))
		require.NoError(t, os.Symlink(userSettings, filepath.Join(project, ".claude", "settings.local.json")))
		err := config.SaveApproval(project, "evil", true)
		require.ErrorIs(t, err, config.ErrNotRegularFile)
		b, _ := os.ReadFile(userSettings)
		assert.Equal(t, `{}`, string(b), "the user's own settings are untouched")
	})
	t.Run("a .claude folder that links elsewhere", func(t *testing.T) {
		home, project := testdir.Scratch(t)
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(home, ".claude"), filepath.Join(project, ".claude")))
		err := config.SaveApproval(project, "evil", true)
		require.ErrorIs(t, err, config.ErrNotRegularFile)
		assert.NoFileExists(t, filepath.Join(home, ".claude", "settings.local.json"))
	})
}
