package stdio

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A server's stdout pipe holds a quarter MiB, not the 64 KiB Linux gives a
// pipe, so a large result comes in a few reads.
func TestTheStdoutPipeIsEnlarged(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "cat > /dev/null"), options())
	require.NoError(t, err)
	defer p.Close()
	var size int
	rc, err := p.stdoutR.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, rc.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }))
	require.NoError(t, err)
	assert.Equal(t, stdoutPipeSize, size)
}
