package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// setPipeSize asks for a pipe of n bytes; the OS may give less.
func setPipeSize(f *os.File, n int) {
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n) })
	}
}
