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

// unread is how many bytes the pipe holds that no one has read (0 when
// it cannot tell).
func unread(f *os.File) int {
	n := 0
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil { // FIONREAD
				n = v
			}
		})
	}
	return n
}
