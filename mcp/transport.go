package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/sourcegraph/jsonrpc2"
)

// A Transport opens a Stream to one MCP server. Connect is called once per
// connection attempt; ctx bounds the opening only, never the Stream's life.
type Transport interface {
	Connect(ctx context.Context) (Stream, error)
}

// TransportFunc adapts a function to a Transport.
type TransportFunc func(ctx context.Context) (Stream, error)

// Connect calls f(ctx).
func (f TransportFunc) Connect(ctx context.Context) (Stream, error) { return f(ctx) }

// A Stream carries JSON-RPC messages. It has the method set of
// jsonrpc2.ObjectStream, so any jsonrpc2 stream is a Stream and custom
// transports need not import jsonrpc2.
//
// ReadObject is called from one goroutine at a time and must return an
// error only when the stream is finished: that error ends the connection.
// WriteObject may be called concurrently. Close unblocks a pending
// ReadObject and releases everything the stream holds.
//
// The Streams of this package's transports offer more than these methods
// (raw lines, HTTP headers, answers read by their caller, failed exchanges
// handed to the call as Go errors), which the Connection uses for speed
// and for the HTTP features; a Stream that wraps one of them (to log its messages, say)
// hides them, and is served through these three methods only: messages
// are decoded once more, and over Streamable HTTP the Connection can no
// longer set the MCP-Protocol-Version and Mcp-Param-* headers. Wrap the
// transport's byte stream or HTTP client instead.
type Stream interface {
	ReadObject(v any) error
	WriteObject(obj any) error
	Close() error
}

var (
	_ jsonrpc2.ObjectStream = Stream(nil)
	_ Stream                = jsonrpc2.ObjectStream(nil)
)

// NewStream returns a Stream that frames messages as newline-delimited
// JSON over rwc, the framing of the stdio transport. Lines that are not
// JSON-RPC messages are skipped; a message may be up to 64 MiB.
//
// Writes are queued and written by a goroutine the Stream owns, so
// WriteObject never blocks on a peer that stops reading, and concurrent
// writers share one write system call. Close stops that goroutine and
// closes rwc.
func NewStream(rwc io.ReadWriteCloser) Stream {
	return newLineStream(rwc, 0, nil)
}

func newLineStream(rwc io.ReadWriteCloser, maxMessage int, logger *slog.Logger) *lineStream {
	var late *lateLogger
	if logger == nil {
		logger, late = newLate()
	}
	s := &lineStream{
		late:     late,
		rwc:      rwc,
		maxQueue: maxWriteQueue,
		r:        bufio.NewReaderSize(rwc, 64<<10),
		codec:    ndjson.Codec{MaxMessageSize: maxMessage, Logger: logger},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go s.writeLoop()
	return s
}

// lineStream is the NDJSON Stream over a byte stream.
type lineStream struct {
	late  *lateLogger // nil when the logger was given
	rwc   io.ReadWriteCloser
	r     *bufio.Reader
	codec ndjson.Codec

	// direct, when set, lets writeLine write a message itself when no one
	// else is writing; what the pipe does not take goes to writeLoop.
	direct *pipeWriter

	maxQueue int // bytes queued for writing past which the peer is taken for stalled

	mu       sync.Mutex
	queued   []byte // encoded messages waiting for the writer
	spare    []byte // a buffer for the next queue; whoever is writing owns it
	writing  bool   // a write to rwc is in progress (writeLoop's or a direct one)
	stopSeen bool   // writeLoop has seen Close's stop
	werr     error  // the first write error; every later write fails with it
	closed   bool
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{} // closed when writeLoop returns
	closing  sync.Once
}

func (s *lineStream) ReadObject(v any) error {
	return s.readErr(s.codec.ReadObject(s.r, v))
}

// readLine returns the next line that may be a message (see
// ndjson.Codec.ReadLine); it is valid until the next read. A read that
// setReadDeadline interrupted fails with an error matching
// os.ErrDeadlineExceeded and loses nothing: the next readLine goes on.
func (s *lineStream) readLine() ([]byte, error) {
	line, err := s.codec.ReadLine(s.r)
	return line, s.readErr(err)
}

func (s *lineStream) detach() bool { return s.codec.Detach() }

// setReadDeadline sets the read deadline of the underlying stream. It
// reports false when the stream has none.
func (s *lineStream) setReadDeadline(t time.Time) bool {
	d, ok := s.rwc.(interface{ SetReadDeadline(time.Time) error })
	return ok && d.SetReadDeadline(t) == nil
}

// readErr reports a failed write as the reason reading ended, if there was
// one: it closed the stream.
func (s *lineStream) readErr(err error) error {
	if err != nil {
		s.mu.Lock()
		werr := s.werr
		s.mu.Unlock()
		if werr != nil {
			return werr
		}
	}
	return err
}

func (s *lineStream) WriteObject(obj any) error {
	b, err := ndjson.Append(nil, obj)
	if err != nil {
		return fmt.Errorf("mcp: encode message: %w", err)
	}
	return s.writeLine(b)
}

// writeLine writes an encoded message, which must end in a newline and
// contain no other; b is not kept. When nothing else is being written and
// the stream has a direct writer, the message is written right here, as
// far as the pipe takes it without waiting; otherwise, and for the rest, it
// is queued for writeLoop. So writeLine never waits for the peer to read.
func (s *lineStream) writeLine(b []byte) error {
	var err error
	s.mu.Lock()
	switch {
	case s.werr != nil:
		err = s.werr
	case s.closed:
		err = ErrClosed
	case len(s.queued)+len(b) > s.maxQueue && len(s.queued) > 0:
		s.mu.Unlock()
		return s.failWrite(&writeStalledError{queued: len(s.queued) + len(b), max: s.maxQueue}, false)
	case s.writing: // the writer takes it next, or hands it to writeLoop
		s.queued = append(s.queued, b...)
		s.mu.Unlock()
		return nil
	case s.direct == nil || len(s.queued) > 0:
		s.queued = append(s.queued, b...)
		s.mu.Unlock()
		s.wakeWriter()
		return nil
	default:
		s.writing = true
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}

	// While this write runs, other writers queue their messages; they go
	// out in the next rounds, one system call for all.
	buf, owned := b, false
	for round := 1; ; round++ {
		n, err := s.direct.try(buf)
		if err != nil {
			return s.failWrite(err, true)
		}
		s.mu.Lock()
		if n < len(buf) { // the pipe is full: the rest goes first, by writeLoop
			s.queued = append(append([]byte(nil), buf[n:]...), s.queued...)
		}
		if owned && cap(buf) <= 1<<20 {
			s.spare = buf[:0]
		}
		if n < len(buf) || len(s.queued) == 0 || round == maxDirectRounds {
			s.writing = false
			wake := len(s.queued) > 0 || s.closed
			s.mu.Unlock()
			if wake {
				s.wakeWriter()
			}
			return nil
		}
		buf, owned = s.queued, true
		s.queued, s.spare = s.spare, nil
		s.mu.Unlock()
	}
}

// maxDirectRounds bounds how many times a caller writing directly writes
// what others queued meanwhile, before leaving it to writeLoop.
const maxDirectRounds = 4

// maxWriteQueue bounds the bytes waiting to be written to a server. A
// server that stops reading while it keeps sending requests would make the
// answers pile up without end; past this bound the connection fails.
const maxWriteQueue = 64 << 20

// httpMaxQueue is maxWriteQueue for the messages waiting to be POSTed
// (tests lower it).
var httpMaxQueue = maxWriteQueue

// writeStalledError ends a connection whose server stopped reading.
type writeStalledError struct{ queued, max int }

func (e *writeStalledError) Error() string {
	return fmt.Sprintf("mcp: the server stopped reading: %d bytes wait to be written, more than the maximum of %d", e.queued, e.max)
}

// failWrite ends writing after a failed write: the peer may have seen half
// a message, so the stream is closed (which ends the reader too) and every
// later write fails. It returns the error writes now fail with.
func (s *lineStream) failWrite(err error, writer bool) error {
	s.mu.Lock()
	if writer { // the write in progress was the caller's
		s.writing = false
	}
	if s.werr == nil && !s.closed {
		if _, ok := err.(*writeStalledError); ok {
			s.werr = err
		} else {
			s.werr = fmt.Errorf("mcp: write to server: %w", err)
		}
	}
	err = s.werr
	if err == nil {
		err = ErrClosed
	}
	s.mu.Unlock()
	s.rwc.Close()
	s.wakeWriter() // writeLoop may wait for the write that just failed
	return err
}

func (s *lineStream) wakeWriter() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued messages until Close or a write error. A failed
// or partial write is fatal: the stream is closed, so the reader ends too.
func (s *lineStream) writeLoop() {
	defer close(s.done)
	stopping := false
	for {
		s.mu.Lock()
		if s.writing || len(s.queued) == 0 {
			busy := s.writing // a direct write wakes this loop when it ends
			s.mu.Unlock()
			switch {
			case stopping && !busy:
				return
			case stopping:
				<-s.wake
			default:
				select {
				case <-s.stop:
					stopping = true // write what is queued, then stop
					s.mu.Lock()
					s.stopSeen = true
					s.mu.Unlock()
				case <-s.wake:
				}
			}
			continue
		}
		buf := s.queued
		s.queued, s.spare = s.spare[:0], nil // never buf: the writer owns buf until it is done
		s.writing = true
		s.mu.Unlock()
		if _, err := s.rwc.Write(buf); err != nil {
			s.failWrite(err, true)
			return
		}
		s.mu.Lock()
		s.writing = false
		if cap(buf) <= 1<<20 {
			s.spare = buf[:0]
		}
		s.mu.Unlock()
	}
}

func (s *lineStream) Close() error {
	var err error
	s.closing.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.stop)
		// Give queued messages a moment to be written, unless the peer
		// does not read; closing rwc unblocks a pending write.
		timer := time.NewTimer(flushTimeout)
		select {
		case <-s.done:
		case <-timer.C:
		}
		timer.Stop()
		err = s.rwc.Close()
		<-s.done
	})
	return err
}

// flushTimeout bounds how long Close waits for queued messages to be
// written.
const flushTimeout = 100 * time.Millisecond

// NewInMemoryTransports returns two connected Transports, for tests and for
// running a server in the same process: what one side writes, the other
// reads. Each Transport connects once; a second Connect fails.
func NewInMemoryTransports() (client, server Transport) {
	a, b := net.Pipe()
	return onceTransport(a), onceTransport(b)
}

func onceTransport(c net.Conn) Transport {
	var once sync.Once
	return TransportFunc(func(ctx context.Context) (Stream, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var s Stream
		once.Do(func() { s = NewStream(c) })
		if s == nil {
			return nil, errors.New("mcp: in-memory transport already connected")
		}
		return s, nil
	})
}

func (s *lineStream) useLogger(lg *slog.Logger) { s.late.use(lg) }
