package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigFilesMustBeRegularAndBounded(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		match error
	}{
		{"a symlink to /dev/zero", func(t *testing.T, path string) { require.NoError(t, os.Symlink("/dev/zero", path)) }, config.ErrNotRegularFile},
		{"a named pipe nobody writes", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o644)) }, config.ErrNotRegularFile},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) }, config.ErrNotRegularFile},
		{"a file over the bound", func(t *testing.T, path string) {
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(5<<20))
			require.NoError(t, f.Close())
		}, config.ErrFileTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an error of that file, and hides nothing else", func(t *testing.T) {
			home, project := testdir.Scratch(t)
			testdir.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"mine": {"command": "x"}}}`)
			tt.make(t, filepath.Join(project, ".mcp.json"))
			cfg, err := config.Load(project)
			require.ErrorIs(t, err, tt.match)
			require.Len(t, cfg.Errors, 1)
			assert.Equal(t, filepath.Join(project, ".mcp.json"), cfg.Errors[0].File)
			assert.Equal(t, []string{"mine"}, cfg.Names())
		})
	}
	t.Run("a symlink to a regular file is read", func(t *testing.T) {
		_, project := testdir.Scratch(t)
		target := filepath.Join(t.TempDir(), "servers.json")
		testdir.Write(t, target, `{"mcpServers": {"linked": {"command": "x"}}}`)
		require.NoError(t, os.Symlink(target, filepath.Join(project, ".mcp.json")))
		cfg, err := config.Load(project)
		require.NoError(t, err)
		assert.Equal(t, []string{"linked"}, cfg.Names())
	})
	t.Run("LoadConfigFile has the same rules", func(t *testing.T) {
		_, err := config.LoadFile("/dev/zero")
		assert.ErrorIs(t, err, config.ErrNotRegularFile)
	})
}

func TestConfigFileErrors(t *testing.T) {
	_, err := config.LoadFile(filepath.Join(t.TempDir(), "nope.json"))
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.True(t, errors.Is(err, os.ErrNotExist))

	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": []}`), "x.json")
	require.Error(t, err)
	assert.Empty(t, cfg.Servers)
	assert.Contains(t, err.Error(), `"mcpServers" is not an object`)
}
