//go:build unix

package ndjson

import (
	"errors"
	"os"
	"syscall"
)

// pipeWriter writes to a non-blocking pipe without waiting: a write the
// pipe cannot take at once is left, whole or in part, to the stream's
// writer goroutine. It lets a caller write its own request when no one else
// is writing, with no hand-off to another goroutine.
type pipeWriter struct {
	closed error // what a write to a closed pipe fails with
	rc     syscall.RawConn
	buf    []byte // set for the duration of one try
	n      int
	err    error
	fn     func(fd uintptr) bool // p.write, bound once so a try does not allocate
}

// newPipeWriter returns a pipeWriter for f, or nil when f cannot be
// written without blocking. f must be a pipe made with os.Pipe: those are
// non-blocking on unix.
func newPipeWriter(f *os.File, closed error) *pipeWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	p := &pipeWriter{rc: rc, closed: closed}
	p.fn = p.write
	return p
}

func (p *pipeWriter) write(fd uintptr) bool {
	for {
		n, err := syscall.Write(int(fd), p.buf)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			n, err = 0, nil
		}
		p.n, p.err = max(n, 0), err
		return true // never wait for the pipe to drain: the writer goroutine does
	}
}

// try writes as much of b as the pipe takes now. It must not be called
// concurrently with itself or with other writes to f.
func (p *pipeWriter) try(b []byte) (int, error) {
	p.buf = b
	err := p.rc.Write(p.fn)
	p.buf = nil
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return 0, p.closed
		}
		return 0, err
	}
	return p.n, p.err
}
