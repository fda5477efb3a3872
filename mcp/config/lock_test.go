package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A repository decides nothing about the writes to its .mcp.json: a
// .mcp.json.lock it ships, of any kind, neither blocks them nor leads
// them anywhere, and is left as it was.
func TestALockARepositoryPlantsIsNoLock(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, lock, elsewhere string)
	}{
		{"a folder with a file in it, as a checkout leaves one", func(t *testing.T, lock, _ string) {
			require.NoError(t, os.MkdirAll(lock, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(lock, ".gitkeep"), nil, 0o644))
		}},
		{"an empty folder, just made", func(t *testing.T, lock, _ string) {
			require.NoError(t, os.Mkdir(lock, 0o755))
		}},
		{"an empty folder, old", func(t *testing.T, lock, _ string) {
			require.NoError(t, os.Mkdir(lock, 0o755))
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(lock, old, old))
		}},
		{"a file", func(t *testing.T, lock, _ string) {
			require.NoError(t, os.WriteFile(lock, []byte("held"), 0o644))
		}},
		{"a link to a folder elsewhere", func(t *testing.T, lock, elsewhere string) {
			require.NoError(t, os.Symlink(elsewhere, lock))
		}},
		{"a link to nothing", func(t *testing.T, lock, elsewhere string) {
			require.NoError(t, os.Symlink(filepath.Join(elsewhere, "made-by-the-write"), lock))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, project := home(t)
			config.SetLockWait(t, 20*time.Millisecond)
			elsewhere := t.TempDir()
			lock := filepath.Join(project, ".mcp.json.lock")
			tt.plant(t, lock, elsewhere)
			before, err := os.Lstat(lock)
			require.NoError(t, err)
			ctx := context.Background()
			_, err = config.Add(ctx, project, config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`))
			require.NoError(t, err)
			_, err = config.Remove(ctx, project, config.ScopeProject, "a")
			require.NoError(t, err)
			after, err := os.Lstat(lock)
			require.NoError(t, err, "what the repository ships is left in place")
			assert.True(t, os.SameFile(before, after))
			entries, err := os.ReadDir(elsewhere)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing is made where a link leads")
		})
	}
}
