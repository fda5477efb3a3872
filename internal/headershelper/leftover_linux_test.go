package headershelper

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A helper that starts a background process and exits normally leaves
// nothing running: one such process per connection would pile up.
func TestNothingAHelperStartedOutlivesIt(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	// The background process writes its pid and sleeps; the helper waits
	// for the pid (within its own bound), prints its headers and exits 0.
	cmd := `sh -c 'echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 300' >/dev/null 2>&1 &
while [ ! -s pid ]; do :; done
echo '{"A": "b"}'`
	got, err := Run(context.Background(), cmd, dir)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"A": "b"}, got)
	b, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)

	// pidfd_open and poll: the process has ended (or is gone) within 10 s.
	fd, _, errno := syscall.Syscall(434 /* SYS_PIDFD_OPEN */, uintptr(pid), 0, 0)
	if errno == syscall.ESRCH {
		return // ended and reaped
	}
	require.Zero(t, errno, "pidfd_open")
	defer syscall.Close(int(fd))
	fds := []pollFd{{fd: int32(fd), events: 1 /* POLLIN */}}
	n, _, errno := syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), 1, 10_000)
	require.Zero(t, errno, "poll")
	if n == 0 {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the helper's background process %d still runs", pid)
	}
}

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}
