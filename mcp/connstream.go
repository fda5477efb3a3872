package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplug/mcplug/internal/jsonrpc"
	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/sourcegraph/jsonrpc2"
)

// connStream sits between a Connection's Stream and jsonrpc2. It takes the
// responses to the Connection's own requests out of the stream before
// jsonrpc2 sees them, records why the stream ended (jsonrpc2 does not keep
// it), and decides which goroutine reads.
//
// One goroutine at a time reads the stream: the reader. On a stream of
// lines whose reads can be interrupted (stdio, in-memory), a call that
// finds no reader becomes it. It reads until its own response arrives,
// routing other responses to their calls and handing the server's
// requests and notifications to the dispatcher (as jsonrpc2 does), then
// lets go. So a call made while no other is in flight writes its request
// and reads its response itself, with no hand-off between goroutines. If
// the call's ctx ends while it reads, a read deadline interrupts it (a line
// half read is kept for the next reader).
//
// jsonrpc2's read goroutine, in ReadObject, is the background reader. It
// takes over when a reading call lets go while other calls still wait,
// and once no call has read for idleRead, so that the server's messages are
// read between calls too. It lets go after a response when no call waits.
// On other streams it is the only reader.
type connStream struct {
	Stream
	lines    lineIO // the Stream's raw lines, when it has them
	lead     bool   // calls may read: lines whose reads can be interrupted
	c        *Connection
	readDone chan struct{} // closed when ReadObject has returned its error
	once     sync.Once

	reading atomic.Bool // reader != noReader, for a look without the lock

	mu          sync.Mutex
	reader      readerID
	tickets     readerID
	interrupted bool          // a past read deadline is set to stop the reader
	idleSince   time.Time     // when a call last let go of reading
	idle        time.Duration // idleRead; tests lengthen it
	lastSeen    readerID      // the reader when the background reader last looked
	bgWait      time.Duration // how long the background reader sleeps while a call reads
	end         error         // why reading ended
	wake        chan struct{}
	timer       *time.Timer // the background reader's; only it uses the timer

	poster directPoster     // the Stream, when it answers the writer of a request
	own    func(ndjson.Top) // routes a response a call read itself
}

// A readerID names the goroutine that reads: a call's ticket, or one of
// these.
type readerID uint64

const (
	noReader readerID = iota
	background
)

// idleRead is how long the stream may go unread between calls before the
// background reader takes over.
const idleRead = time.Millisecond

// maxBackoff bounds the background reader's sleep while one call reads.
const maxBackoff = time.Second

// aLongTimeAgo is a read deadline that has passed: it interrupts a read.
var aLongTimeAgo = time.Unix(1, 0)

// headerWriter is a Stream that sends HTTP headers with a message, and
// speaks the protocol version it is told: Streamable HTTP.
type headerWriter interface {
	writeWithHeaders(b []byte, h http.Header) error
	setProtocolVersion(v string, modern bool)
}

// lineIO is a Stream that gives access to raw lines: this package's
// NDJSON streams.
type lineIO interface {
	readLine() ([]byte, error)
	writeLine(b []byte) error
	setReadDeadline(t time.Time) bool
	// detach hands the last line read over to the caller when it is a
	// large one, so it need not be copied; see ndjson.Codec.Detach.
	detach() bool
}

// directPoster is a Stream on which the answer to a request comes back to
// its writer (Streamable HTTP): a call sends its request and reads the
// answer in its own goroutine. postRequest reports false, having sent
// nothing, when the request must be written as any other message.
type directPoster interface {
	postRequest(ctx context.Context, b []byte, h http.Header, own func(ndjson.Top)) bool
}

// rawReader is a Stream that holds whole messages, each its own slice (the
// HTTP transports' inbox): they are handed over as they are, not decoded
// into a json.RawMessage first.
type rawReader interface {
	readRaw() ([]byte, error)
}

// failureRouter is a Stream whose failed exchanges fail only their
// request (the HTTP transports: a POST that failed, an answer that does
// not decode): the Connection names where such a failure goes, and the
// call gets the Go error as it is (an *HTTPStatusError, a
// *RedirectError, ErrBadResult). A stream given no route answers the
// request with a JSON-RPC error response saying what failed.
type failureRouter interface {
	routeFailures(func(id []byte, err error))
}

// loggerUser is a Stream that takes the Connection's logger for what it
// logs itself. Every built-in Stream is one; a Stream wrapped by the
// program keeps the logger its transport was given.
type loggerUser interface {
	useLogger(*slog.Logger)
}

// aborter is a Stream that can end at once, without the grace periods of
// Close (a child process killed): for a connection whose handshake failed.
type aborter interface {
	abort() error
}

// The Streams of this package and the optional interfaces each offers.
// A Stream of the program's own offers none: it is read and written
// through the Stream methods alone.
var (
	_ headerWriter  = httpStream{}
	_ directPoster  = httpStream{}
	_ rawReader     = httpStream{}
	_ eraCache      = httpStream{}
	_ sessionIDer   = httpStream{}
	_ failureRouter = httpStream{}
	_ loggerUser    = httpStream{}
	_ rawReader     = sseStream{}
	_ failureRouter = sseStream{}
	_ loggerUser    = sseStream{}
	_ lineIO        = (*lineStream)(nil)
	_ loggerUser    = (*lineStream)(nil)
	_ lineIO        = commandStream{}
	_ loggerUser    = commandStream{}
	_ aborter       = commandStream{}
)

func newConnStream(s Stream, c *Connection) *connStream {
	cs := &connStream{
		Stream:    s,
		c:         c,
		readDone:  make(chan struct{}),
		wake:      make(chan struct{}, 1),
		idle:      idleRead,
		idleSince: time.Now(), // the handshake's call may read at once
		tickets:   background, // calls' tickets come after it
	}
	if l, ok := s.(lineIO); ok {
		cs.lines = l
		cs.lead = l.setReadDeadline(time.Time{})
	}
	if r, ok := s.(failureRouter); ok {
		r.routeFailures(c.failRequest)
	}
	if p, ok := s.(directPoster); ok {
		cs.poster = p
		cs.own = func(top ndjson.Top) {
			if top.IsResponse() {
				c.route(top, true)
			}
		}
	}
	return cs
}

// ReadObject hands jsonrpc2 the server's next request or notification.
// Responses are routed to the calls waiting for them on the way.
func (s *connStream) ReadObject(v any) error {
	for {
		line, err := s.backgroundNext()
		if err != nil {
			s.finish(err)
			s.once.Do(func() { close(s.readDone) })
			return err
		}
		if err := ndjson.DecodeFresh(line, v); err != nil {
			s.c.logger.Warn("mcp: skipped a line that is not a JSON-RPC message", "err", err, "line", preview(line))
			continue
		}
		return nil
	}
}

// backgroundNext returns the next message for jsonrpc2, reading whenever
// the background reader is the reader.
func (s *connStream) backgroundNext() ([]byte, error) {
	for {
		s.mu.Lock()
		if s.end != nil {
			err := s.end
			s.mu.Unlock()
			return nil, err
		}
		wait := time.Duration(0) // until woken
		switch s.reader {
		case background:
		case noReader:
			if idle := time.Since(s.idleSince); !s.lead || idle >= s.idle {
				s.take(background)
			} else {
				wait = s.idle - idle
			}
		default:
			// A call reads. It lets go without waking us unless we sleep
			// long: we look again after idle, and back off while the same
			// call goes on reading.
			wait = backOff(s.reader == s.lastSeen, s.bgWait, s.idle)
			s.lastSeen, s.bgWait = s.reader, wait
		}
		reading := s.reader == background
		s.mu.Unlock()
		if reading {
			line, err := s.next()
			switch {
			case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
				s.clearInterrupt()
			case err != nil:
				return nil, err
			case !s.dispatch(line, background):
				return line, nil
			}
			continue
		}
		s.sleep(wait)
	}
}

// backOff is how long the background reader sleeps while a call reads:
// idle at first, then twice as long each time it finds the same call still
// reading (sameCall), up to maxBackoff. Never 0, which would mean "until
// woken", and a call that lets go does not wake it.
func backOff(sameCall bool, last, idle time.Duration) time.Duration {
	if !sameCall {
		return idle
	}
	return min(max(2*last, idle), maxBackoff)
}

// sleep waits for a wake-up, or for d when d > 0.
func (s *connStream) sleep(d time.Duration) {
	if d <= 0 {
		<-s.wake
		return
	}
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.wake:
		s.timer.Stop()
	case <-s.timer.C:
	}
}

func (s *connStream) wakeBackground() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next returns the next message's bytes.
func (s *connStream) next() ([]byte, error) {
	if s.lines != nil {
		return s.lines.readLine()
	}
	if rr, ok := s.Stream.(rawReader); ok {
		return rr.readRaw()
	}
	var raw json.RawMessage
	if err := s.Stream.ReadObject(&raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// dispatch serves a line the reader r has read: a response goes to its
// call. It reports false for a message the background reader returns to
// jsonrpc2; a call hands such a message to the dispatcher itself, as
// jsonrpc2 would, so the server's messages are served in the order read.
func (s *connStream) dispatch(line []byte, r readerID) bool {
	top, ok := ndjson.ScanTop(line)
	switch {
	case ok && top.IsResponse():
		waiting := s.c.route(top, s.lines == nil || s.lines.detach())
		if r == background && s.lead && waiting == 0 {
			s.mu.Lock()
			if s.reader == background {
				s.setReader(noReader)
				s.idleSince = time.Now()
			}
			s.mu.Unlock()
		}
		return true
	case r == background:
		return false
	}
	req := new(jsonrpc2.Request)
	if !ok || top.Method == nil {
		s.c.logger.Warn("mcp: skipped a line that is not a JSON-RPC message", "line", preview(line))
	} else if err := json.Unmarshal(line, req); err != nil {
		s.c.logger.Warn("mcp: skipped a line that is not a JSON-RPC message", "err", err, "line", preview(line))
	} else {
		s.c.disp.Handle(context.Background(), s.c.conn, req)
	}
	return true
}

// await returns the reply to pc, or ctx's error. When no one reads, the
// caller reads until the reply arrives.
func (s *connStream) await(ctx context.Context, pc *jsonrpc.Call) (jsonrpc.Reply, error) {
	if t := s.tryLead(); t != noReader {
		return s.readFor(ctx, t, pc)
	}
	if ctx.Done() == nil {
		return <-pc.C, nil
	}
	select {
	case r := <-pc.C:
		return r, nil
	case <-ctx.Done():
		return jsonrpc.Reply{}, context.Cause(ctx)
	}
}

// setReader makes r the reader. s.mu is held.
func (s *connStream) setReader(r readerID) {
	s.reader = r
	s.reading.Store(r != noReader)
}

// tryLead makes the caller the reader, if there is none.
func (s *connStream) tryLead() readerID {
	if !s.lead || s.reading.Load() { // someone reads: no need for the lock
		return noReader
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader != noReader || s.end != nil {
		return noReader
	}
	s.tickets++
	s.take(s.tickets)
	return s.tickets
}

// take makes r the reader. s.mu is held.
func (s *connStream) take(r readerID) {
	s.setReader(r)
	if s.interrupted { // meant for the reader before
		s.lines.setReadDeadline(time.Time{})
		s.interrupted = false
	}
}

// readFor reads as reader t until pc's reply arrives or ctx ends.
func (s *connStream) readFor(ctx context.Context, t readerID, pc *jsonrpc.Call) (jsonrpc.Reply, error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { s.interrupt(t) })
		defer stop()
	}
	for {
		select {
		case r := <-pc.C:
			s.letGo(t)
			return r, nil
		default:
		}
		line, err := s.lines.readLine()
		switch {
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			s.clearInterrupt()
			if ctx.Err() != nil {
				s.letGo(t)
				return jsonrpc.Reply{}, context.Cause(ctx)
			}
		case err != nil:
			s.finish(err) // fails pc too
		default:
			s.dispatch(line, t)
		}
	}
}

// letGo ends t's turn as reader: the background reader goes on at once if
// calls wait, and after idleRead otherwise.
func (s *connStream) letGo(t readerID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader != t {
		return
	}
	if s.end == nil && s.c.pending.Count() > 0 {
		s.setReader(background)
		s.wakeBackground()
		return
	}
	s.setReader(noReader)
	s.idleSince = time.Now()
	if s.bgWait > s.idle { // it backed off during a long call
		s.bgWait = 0
		s.wakeBackground()
	}
}

// interrupt stops reader t's read, if t still reads.
func (s *connStream) interrupt(t readerID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader == t && !s.interrupted {
		s.interrupted = s.lines.setReadDeadline(aLongTimeAgo)
	}
}

func (s *connStream) clearInterrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupted {
		s.lines.setReadDeadline(time.Time{})
		s.interrupted = false
	}
}

// finish records that reading ended with err: every pending call fails,
// later ones are refused, and the background reader returns err.
func (s *connStream) finish(err error) {
	s.c.setCause(err)
	s.c.pending.Fail(&closedError{cause: s.c.getCause()})
	s.mu.Lock()
	if s.end == nil {
		s.end = err
	}
	s.mu.Unlock()
	s.wakeBackground()
}

// Close closes the Stream, which ends a read in progress, and stops the
// background reader.
func (s *connStream) Close() error {
	err := s.Stream.Close()
	s.finish(ErrClosed)
	return err
}

// route delivers a response to the call waiting for it, and returns how
// many calls still wait. The result is copied unless the line is owned
// (not a buffer the next read reuses).
func (c *Connection) route(top ndjson.Top, owned bool) (waiting int) {
	id, err := strconv.ParseUint(string(top.ID), 10, 64)
	r := jsonrpc.Reply{}
	switch {
	case top.Error != nil:
		r.Err = c.responseError(top.Error)
	case owned:
		r.Result = top.Result
	default:
		r.Result = bytes.Clone(top.Result)
	}
	delivered := false
	if err == nil {
		delivered, waiting = c.pending.Deliver(id, r)
	} else {
		waiting = c.pending.Count()
	}
	if !delivered {
		c.logger.Debug("mcp: dropped a response no call waits for (late, duplicate or unknown id)", "id", string(top.ID))
	}
	return waiting
}

// failRequest fails the call waiting for the request id with err, a
// failure of its exchange (see failureRouter).
func (c *Connection) failRequest(id []byte, err error) {
	n, perr := strconv.ParseUint(string(id), 10, 64)
	if perr == nil {
		if delivered, _ := c.pending.Deliver(n, jsonrpc.Reply{Err: err}); delivered {
			return
		}
	}
	c.logger.Debug("mcp: a failed exchange no call waits for", "id", string(id), "err", err)
}

// writeRequest writes an encoded request (ending in a newline); h, when
// set, are headers for the stream to send with it. On a stream that
// answers the writer (Streamable HTTP) the request is sent and its answer
// read and routed before writeRequest returns, unless ctx ends first.
func (s *connStream) writeRequest(ctx context.Context, b []byte, h http.Header) error {
	if s.poster != nil && s.poster.postRequest(ctx, b[:len(b)-1], h, s.own) {
		return nil
	}
	return s.writeLineWith(b, h)
}

// writeLineWith writes an encoded message; h, when set, are headers for
// the stream to send with it (Streamable HTTP).
func (s *connStream) writeLineWith(b []byte, h http.Header) error {
	var err error
	switch hw, ok := s.Stream.(headerWriter); {
	case s.lines != nil:
		err = s.lines.writeLine(b)
	case ok && h != nil:
		err = hw.writeWithHeaders(b[:len(b)-1], h)
	default:
		err = s.Stream.WriteObject(json.RawMessage(b[:len(b)-1]))
	}
	if err != nil && !errors.Is(err, ErrClosed) {
		s.failed(err)
		return &closedError{cause: s.c.getCause()}
	}
	return err
}

func (s *connStream) WriteObject(obj any) error {
	err := s.Stream.WriteObject(obj)
	if err != nil {
		s.failed(err)
	}
	return err
}

// failed ends the connection after a write error: the peer may have seen
// half a message.
func (s *connStream) failed(err error) {
	s.c.setCause(err)
	go s.c.conn.Close() // bounded by the Stream's Close
}
