package stdio

import (
	"os"

	"golang.org/x/sys/unix"
)

// enlargePipe asks for a pipe of n bytes (a failure keeps the size it
// has: the user's share of pipe memory may be spent).
func enlargePipe(f *os.File, n int) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n) })
	}
}
