//go:build unix

package ndjson

import (
	"os"
	"syscall"
)

// pipeConn is f's raw connection, for reads that wait for f without a
// buffer; nil when it has none.
func pipeConn(f *os.File) syscall.RawConn {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// rawRead is one read(2) of fd, retried on EINTR; syscall.EAGAIN when
// nothing can be read now.
func rawRead(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		if err != syscall.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}
