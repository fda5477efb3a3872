package ndjson

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// SliceReader is what a Codec reads lines from: a *bufio.Reader, or the
// Stream's lineReader.
type SliceReader interface {
	// ReadSlice returns the bytes up to and including delim, valid until
	// the next call; bufio.ErrBufferFull with the whole buffer when no
	// delim fits in it; the bytes read so far with any other error.
	ReadSlice(delim byte) ([]byte, error)
}

var _ SliceReader = (*bufio.Reader)(nil)

// The read buffers of Streams come in three sizes, each from a pool: a
// stream starts with the smallest, moves up to the next when a line does
// not fit, and, on a pipe, gives its buffer back whenever nothing is
// buffered and the pipe has nothing to read, so that an idle stream holds
// none. A line longer than the largest buffer is gathered by the Codec.
var bufSizes = [...]int{4 << 10, 16 << 10, 64 << 10}

var bufPools [len(bufSizes)]sync.Pool

func getBuf(class int) *[]byte {
	if p, ok := bufPools[class].Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, bufSizes[class])
	return &b
}

func putBuf(class int, p *[]byte) { bufPools[class].Put(p) }

// lineReader is a bufio.Reader whose buffer grows with the lines read,
// shrinks back after them, and is given back while the stream is idle.
type lineReader struct {
	src   io.Reader
	rc    syscall.RawConn // src's, when src is a pipe: reads that would wait give the buffer back first
	bp    *[]byte         // the buffer, from bufPools[class]; nil while none is held
	class int             // the size class of bp, or of the next buffer
	r, w  int             // buf[r:w] is buffered
	peak  int             // the longest line since the buffer was last given back
	err   error           // the read's error, returned once what is buffered is taken

	// rawFill is b.fillRaw, bound once: a read allocates nothing.
	rawFill func(fd uintptr) bool
	n       int   // rawFill's bytes read
	rerr    error // and its error
}

func newLineReader(src io.Reader, f *os.File) *lineReader {
	lr := &lineReader{src: src}
	if f != nil {
		lr.rc = pipeConn(f)
		lr.rawFill = lr.fillRaw
	}
	return lr
}

// fillRaw is one read of the pipe, into a buffer taken now; when the
// pipe has nothing, the buffer is given back (if nothing is buffered) and
// it reports false: the caller waits for the pipe, holding none.
func (b *lineReader) fillRaw(fd uintptr) bool {
	if b.bp == nil {
		b.bp = getBuf(b.class)
	}
	b.n, b.rerr = rawRead(fd, (*b.bp)[b.w:])
	if b.rerr == syscall.EAGAIN {
		b.release() // waiting holds no buffer
		return false
	}
	return true
}

func (b *lineReader) ReadSlice(delim byte) ([]byte, error) {
	from := 0 // bytes already searched
	for {
		if b.bp != nil {
			buf := *b.bp
			if i := bytes.IndexByte(buf[b.r+from:b.w], delim); i >= 0 {
				end := b.r + from + i + 1
				line := buf[b.r:end]
				b.r = end
				b.peak = max(b.peak, len(line))
				return line, nil
			}
			from = b.w - b.r
			if b.err == nil && b.r == 0 && b.w == len(buf) { // full: grow, or give up
				if b.class == len(bufSizes)-1 {
					b.r, b.peak = b.w, len(buf)
					return buf, bufio.ErrBufferFull
				}
				b.grow()
				continue
			}
		}
		if err := b.err; err != nil {
			var line []byte
			if b.bp != nil {
				line = (*b.bp)[b.r:b.w]
				b.r = b.w
			}
			b.err = nil
			return line, err
		}
		b.fill()
	}
}

// grow moves what is buffered to a buffer of the next size.
func (b *lineReader) grow() {
	next := getBuf(b.class + 1)
	n := copy(*next, (*b.bp)[b.r:b.w])
	putBuf(b.class, b.bp)
	b.bp, b.r, b.w = next, 0, n
	b.class++
}

// release gives the buffer back, when nothing is buffered, and picks the
// size of the next one: the smallest that held the longest line since.
func (b *lineReader) release() {
	if b.bp == nil || b.r != b.w {
		return
	}
	putBuf(b.class, b.bp)
	b.bp, b.r, b.w = nil, 0, 0
	next := 0
	for next < len(bufSizes)-1 && bufSizes[next] < 2*b.peak {
		next++
	}
	b.class, b.peak = next, 0
}

// fill reads once into the free end of the buffer, taking one first.
func (b *lineReader) fill() {
	if b.bp != nil && b.r > 0 {
		buf := *b.bp
		b.w = copy(buf, buf[b.r:b.w])
		b.r = 0
	}
	if b.rc == nil {
		if b.bp == nil {
			b.bp = getBuf(b.class)
		}
		n, err := b.src.Read((*b.bp)[b.w:])
		b.w += n
		if err != nil {
			b.err = err
		}
		return
	}
	err := b.rc.Read(b.rawFill)
	n, rerr := b.n, b.rerr
	switch {
	case err != nil:
		b.err = err // closed, or a deadline
	case rerr != nil:
		b.err = &os.PathError{Op: "read", Path: "pipe", Err: rerr}
	case n == 0:
		b.err = io.EOF
	default:
		b.w += n
	}
}

// DrainIdle reads f until it ends, handing each read's bytes to each, and
// holds a buffer only while f has something to read: an idle pipe (a
// child's stderr) costs no memory. It returns the error that ended it;
// io.EOF at the end.
func DrainIdle(f *os.File, each func([]byte)) error {
	rc := pipeConn(f)
	if rc == nil {
		bp := getBuf(0)
		defer putBuf(0, bp)
		for {
			n, err := f.Read(*bp)
			if n > 0 {
				each((*bp)[:n])
			}
			if err != nil {
				return err
			}
		}
	}
	d := &drainer{}
	fill := d.fill
	defer func() {
		if d.bp != nil {
			putBuf(0, d.bp)
		}
	}()
	for {
		err := rc.Read(fill)
		switch {
		case err != nil:
			return err
		case d.rerr != nil:
			return &os.PathError{Op: "read", Path: "pipe", Err: d.rerr}
		case d.n == 0:
			return io.EOF
		}
		each((*d.bp)[:d.n])
	}
}

// DrainBuffered reads what f holds now, without waiting for more,
// handing each read's bytes to each, up to max bytes: once the writers
// of a pipe have exited, what they wrote is all there, even when another
// process still holds the pipe open. Call it after DrainIdle ended with
// os.ErrDeadlineExceeded (f's read deadline is cleared here). It returns
// the bytes read.
func DrainBuffered(f *os.File, max int, each func([]byte)) int {
	rc := pipeConn(f)
	if rc == nil || f.SetReadDeadline(time.Time{}) != nil {
		return 0
	}
	bp := getBuf(0)
	defer putBuf(0, bp)
	total := 0
	for total < max {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = rawRead(fd, (*bp)[:min(len(*bp), max-total)])
			return true // never wait: an empty pipe is the end
		}); err != nil || rerr != nil || n == 0 {
			break
		}
		total += n
		each((*bp)[:n])
	}
	return total
}

// drainer is DrainIdle's read: a buffer only while there is something to
// read.
type drainer struct {
	bp   *[]byte
	n    int
	rerr error
}

func (d *drainer) fill(fd uintptr) bool {
	if d.bp == nil {
		d.bp = getBuf(0)
	}
	d.n, d.rerr = rawRead(fd, *d.bp)
	if d.rerr == syscall.EAGAIN {
		putBuf(0, d.bp)
		d.bp = nil
		return false
	}
	return true
}
