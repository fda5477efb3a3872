package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A path that links to a device is never opened: opening a serial port
// raises its DTR line and resets many boards. inotify sees every open of
// the node, here a FIFO standing in for the device.
func TestALinkToADeviceIsNeverOpened(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "ttyUSB0")
	require.NoError(t, syscall.Mkfifo(node, 0o600))
	link := filepath.Join(dir, ".mcp.json")
	require.NoError(t, os.Symlink(node, link))

	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	require.NoError(t, err)
	defer syscall.Close(fd)
	_, err = syscall.InotifyAddWatch(fd, node, syscall.IN_OPEN)
	require.NoError(t, err)

	_, err = Read(link, 64)
	assert.ErrorIs(t, err, ErrNotRegular)
	f, err := Open(link, 64)
	assert.ErrorIs(t, err, ErrNotRegular)
	assert.Nil(t, f)

	buf := make([]byte, 4096)
	n, err := syscall.Read(fd, buf)
	assert.True(t, errors.Is(err, syscall.EAGAIN), "no open of the node was seen (read %d bytes of events, %v)", n, err)

	// The watch works: an open of the node is seen.
	g, err := os.OpenFile(node, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	g.Close()
	n, _ = syscall.Read(fd, buf)
	assert.Positive(t, n, "the watch sees an open")
}
