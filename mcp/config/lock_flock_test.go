//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package config_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The lock of .mcp.json is flock(2) on its folder: another writer holding
// it is waited for within the bound, and let go of when it closes.
func TestTheProjectLockIsHeldOnTheFolder(t *testing.T) {
	_, project := home(t)
	d, err := os.Open(project)
	require.NoError(t, err)
	require.NoError(t, unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	config.SetLockWait(t, 20*time.Millisecond)
	_, err = config.Add(context.Background(), project, config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`))
	assert.ErrorIs(t, err, config.ErrLocked)
	assert.ErrorContains(t, err, project)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	config.SetLockWait(t, time.Hour)
	_, err = config.Add(ctx, project, config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`))
	assert.ErrorIs(t, err, context.Canceled, "the wait ends with ctx")
	require.NoError(t, d.Close())
	_, err = config.Add(context.Background(), project, config.ScopeProject, "a", json.RawMessage(`{"command":"x"}`))
	assert.NoError(t, err)
}
