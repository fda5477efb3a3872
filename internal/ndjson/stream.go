package ndjson

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// StreamOptions configure a Stream; the zero value is the default.
type StreamOptions struct {
	MaxMessageSize int          // see Codec; zero means DefaultMaxMessageSize
	Logger         *slog.Logger // gets what the Codec skips; nil means slog.Default()
	MaxQueue       int          // bytes queued for writing past which the peer is taken for stalled; zero means MaxWriteQueue
	// Direct, when set, is the pipe the stream writes to: a message
	// written while nothing else is being written goes out from the
	// caller's goroutine (on unix; os.Pipe's ends are non-blocking there).
	Direct *os.File
	// Closed is what writes fail with once the stream is closed.
	Closed error
	// ReadFrom, when set, is the pipe rwc reads from: a read that would
	// wait gives its buffer back first, so an idle stream holds none.
	ReadFrom *os.File
}

// NewStream returns a Stream over rwc. It starts no goroutine: one writes
// only while messages wait to be written.
func NewStream(rwc io.ReadWriteCloser, o StreamOptions) *Stream {
	if o.MaxQueue <= 0 {
		o.MaxQueue = MaxWriteQueue
	}
	if o.Closed == nil {
		o.Closed = io.ErrClosedPipe
	}
	s := &Stream{
		closedErr: o.Closed,
		rwc:       rwc,
		maxQueue:  o.MaxQueue,
		r:         newLineReader(rwc, o.ReadFrom),
		codec:     Codec{MaxMessageSize: o.MaxMessageSize, Logger: o.Logger},
	}
	if o.Direct != nil {
		s.direct = newPipeWriter(o.Direct, o.Closed)
	}
	return s
}

// Stream is newline-delimited JSON over a byte stream, read through a
// Codec. Writes are queued and written by a goroutine the Stream starts
// while messages wait (writeLoop), so a write never blocks on a peer that
// stops reading, and concurrent writers share one write system call; with
// a direct writer, a message written while nothing else is being written
// goes out from the caller's goroutine, as far as the pipe takes it at
// once. Its read buffer grows with the lines read and shrinks back after
// them (see lineReader).
type Stream struct {
	closedErr error // what writes fail with once the stream is closed
	rwc       io.ReadWriteCloser
	r         *lineReader
	codec     Codec

	// direct, when set, lets WriteLine write a message itself when no one
	// else is writing; what the pipe does not take goes to writeLoop.
	direct *pipeWriter

	maxQueue int // bytes queued for writing past which the peer is taken for stalled

	mu      sync.Mutex
	queued  []byte // encoded messages waiting for the writer
	spare   []byte // a buffer for the next queue; whoever is writing owns it
	writing bool   // a write to rwc is in progress (writeLoop's or a direct one)
	looping bool   // writeLoop runs
	werr    error  // the first write error; every later write fails with it
	closed  bool
	quiet   chan struct{} // Close's: closed once nothing is being written
	closing sync.Once
}

func (s *Stream) ReadObject(v any) error {
	return s.readErr(s.codec.readObject(s.r, v))
}

// ReadLine returns the next line that may be a message (see
// Codec.ReadLine); it is valid until the next read. A read that
// SetReadDeadline interrupted fails with an error matching
// os.ErrDeadlineExceeded and loses nothing: the next ReadLine goes on.
func (s *Stream) ReadLine() ([]byte, error) {
	line, err := s.codec.ReadLine(s.r)
	return line, s.readErr(err)
}

// LastTop is the top level of the last line read, when it was scanned (see
// Codec.LastTop).
func (s *Stream) LastTop() (Top, bool) { return s.codec.LastTop() }

// Detach hands the last line read over to the caller (see Codec.Detach).
func (s *Stream) Detach() bool { return s.codec.Detach() }

// SetReadDeadline sets the read deadline of the underlying stream. It
// reports false when the stream has none.
func (s *Stream) SetReadDeadline(t time.Time) bool {
	d, ok := s.rwc.(interface{ SetReadDeadline(time.Time) error })
	return ok && d.SetReadDeadline(t) == nil
}

// readErr reports a failed write as the reason reading ended, if there was
// one: it closed the stream.
func (s *Stream) readErr(err error) error {
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

func (s *Stream) WriteObject(obj any) error {
	b, err := Append(nil, obj)
	if err != nil {
		return fmt.Errorf("mcp: encode message: %w", err)
	}
	return s.WriteLine(b)
}

// WriteLine writes an encoded message, which must end in a newline and
// contain no other; b is not kept. When nothing else is being written and
// the stream has a direct writer, the message is written right here, as
// far as the pipe takes it without waiting; otherwise, and for the rest, it
// is queued for writeLoop. So writeLine never waits for the peer to read.
func (s *Stream) WriteLine(b []byte) error {
	var err error
	s.mu.Lock()
	switch {
	case s.werr != nil:
		err = s.werr
	case s.closed:
		err = s.closedErr
	case len(s.queued)+len(b) > s.maxQueue && len(s.queued) > 0:
		s.mu.Unlock()
		return s.failWrite(&WriteStalledError{Queued: len(s.queued) + len(b), Max: s.maxQueue}, false)
	case s.writing: // the writer takes it next, or hands it to writeLoop
		s.queued = append(s.queued, b...)
		s.mu.Unlock()
		return nil
	case s.direct == nil || len(s.queued) > 0:
		s.queued = append(s.queued, b...)
		s.startWriter()
		s.mu.Unlock()
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
			if len(s.queued) > 0 {
				s.startWriter()
			}
			s.settle()
			s.mu.Unlock()
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

// MaxWriteQueue bounds the bytes waiting to be written to a peer. A
// server that stops reading while it keeps sending requests would make the
// answers pile up without end; past this bound the stream fails.
const MaxWriteQueue = 64 << 20

// WriteStalledError ends a stream whose peer stopped reading: Queued bytes
// wait to be written, more than Max.
type WriteStalledError struct{ Queued, Max int }

func (e *WriteStalledError) Error() string {
	return fmt.Sprintf("mcp: the server stopped reading: %d bytes wait to be written, more than the maximum of %d", e.Queued, e.Max)
}

// failWrite ends writing after a failed write: the peer may have seen half
// a message, so the stream is closed (which ends the reader too) and every
// later write fails. It returns the error writes now fail with.
func (s *Stream) failWrite(err error, writer bool) error {
	s.mu.Lock()
	if writer { // the write in progress was the caller's
		s.writing = false
	}
	if s.werr == nil && !s.closed {
		if _, ok := err.(*WriteStalledError); ok {
			s.werr = err
		} else {
			s.werr = fmt.Errorf("mcp: write to server: %w", err)
		}
	}
	err = s.werr
	if err == nil {
		err = s.closedErr
	}
	s.settle()
	s.mu.Unlock()
	s.rwc.Close()
	return err
}

// startWriter starts writeLoop for what is queued, unless it runs; s.mu
// is held.
func (s *Stream) startWriter() {
	if !s.looping {
		s.looping = true
		go s.writeLoop()
	}
}

// settle tells Close, if it waits, that nothing is being written any
// more; s.mu is held.
func (s *Stream) settle() {
	if s.quiet != nil && !s.writing && !s.looping {
		close(s.quiet)
		s.quiet = nil
	}
}

// writeLoop writes queued messages until none is left, or a write fails.
// A failed or partial write is fatal: the stream is closed, so the reader
// ends too. A direct write leaves the rest to it, and starts it again if
// it has returned.
func (s *Stream) writeLoop() {
	for {
		s.mu.Lock()
		if s.writing || len(s.queued) == 0 || s.werr != nil {
			s.looping = false // a direct writer starts another for what it leaves
			s.settle()
			s.mu.Unlock()
			return
		}
		buf := s.queued
		s.queued, s.spare = s.spare[:0], nil // never buf: the writer owns buf until it is done
		s.writing = true
		s.mu.Unlock()
		if _, err := s.rwc.Write(buf); err != nil {
			s.mu.Lock()
			s.looping = false
			s.mu.Unlock()
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

// Close lets what is queued be written (at most flushTimeout) and closes
// the byte stream; once it returns, nothing more is written.
func (s *Stream) Close() error {
	var err error
	s.closing.Do(func() {
		s.mu.Lock()
		s.closed = true
		var quiet chan struct{}
		if s.writing || s.looping {
			quiet = make(chan struct{})
			s.quiet = quiet
		}
		s.mu.Unlock()
		if quiet != nil {
			// Give queued messages a moment to be written, unless the peer
			// does not read; closing rwc unblocks a pending write.
			timer := time.NewTimer(flushTimeout)
			select {
			case <-quiet:
			case <-timer.C:
			}
			timer.Stop()
		}
		err = s.rwc.Close()
		if quiet != nil {
			<-quiet
		}
	})
	return err
}

// flushTimeout bounds how long Close waits for queued messages to be
// written.
const flushTimeout = 100 * time.Millisecond
