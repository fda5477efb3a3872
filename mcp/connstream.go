package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcplug/mcplug/internal/jsonrpc"
	"github.com/mcplug/mcplug/internal/ndjson"
)

// connStream is a Connection's engine over its Stream: its jsonrpc.Reader
// reads every message once, whoever reads (a call may read its own
// answer): responses go to their calls, the server's requests and
// notifications to the dispatcher; it records why the stream ended. Its
// writes, of requests and of replies alike, pick the stream's fastest
// path. It is the Reader's Conn.
type connStream struct {
	Stream
	r       jsonrpc.Reader
	lines   lineIO        // the Stream's raw lines, when it has them
	headers headerWriter  // the Stream, when it sends headers (Streamable HTTP)
	writer  MessageWriter // the Stream, when it takes messages encoded
	c       *Connection

	poster directPoster     // the Stream, when it answers the writer of a request
	own    func(ndjson.Top) // routes a response a call read itself

	closeOnce sync.Once
	closeErr  error
}

var _ jsonrpc.Conn = (*connStream)(nil)

// headerWriter is a Stream that sends HTTP headers with a message, and
// speaks the protocol version it is told: Streamable HTTP.
type headerWriter interface {
	writeWithHeaders(b []byte, h http.Header) error
	setProtocolVersion(v string, modernEra bool)
}

// lineIO is a Stream of raw lines whose reads a deadline interrupts:
// this package's NDJSON streams.
type lineIO interface {
	jsonrpc.Lines
	writeLine(b []byte) error
}

// directPoster is a Stream on which the answer to a request comes back to
// its writer (Streamable HTTP): a call sends its request and reads the
// answer in its own goroutine. postRequest reports false, having sent
// nothing, when the request must be written as any other message.
type directPoster interface {
	postRequest(ctx context.Context, b []byte, h http.Header, own func(ndjson.Top)) bool
	// postNotification sends a notification and returns once the server
	// has taken it, or ctx has ended; false, having sent nothing, when it
	// must be written as any other message.
	postNotification(ctx context.Context, b []byte) bool
}

// objectMessages reads a Stream that is no MessageReader through
// ReadObject.
type objectMessages struct{ Stream }

func (s objectMessages) ReadMessage() ([]byte, error) {
	var raw json.RawMessage
	if err := s.ReadObject(&raw); err != nil {
		return nil, err
	}
	return raw, nil
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

// The optional interfaces the NDJSON stream offers.
var (
	_ lineIO     = (*lineStream)(nil)
	_ loggerUser = (*lineStream)(nil)
)

func newConnStream(s Stream, c *Connection) *connStream {
	cs := &connStream{Stream: s, c: c}
	var lines jsonrpc.Lines
	var msgs jsonrpc.Messages
	switch st := s.(type) {
	case lineIO:
		cs.lines, lines = st, st
	case MessageReader:
		msgs = st
	default:
		msgs = objectMessages{s}
	}
	cs.r.Init(lines, msgs, cs)
	cs.headers, _ = s.(headerWriter)
	cs.writer, _ = s.(MessageWriter)
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

// await returns the reply to pc, or ctx's error; a call may read it
// itself.
func (s *connStream) await(ctx context.Context, pc *jsonrpc.Call) (jsonrpc.Reply, error) {
	return s.r.Await(ctx, pc)
}

// Route implements jsonrpc.Conn.
func (s *connStream) Route(top ndjson.Top, owned bool) int { return s.c.route(top, owned) }

// Serve implements jsonrpc.Conn: a message of the server's, read once,
// goes to the dispatcher; a line that is not one is skipped.
func (s *connStream) Serve(line []byte, top ndjson.Top, owned bool) {
	req, err := readRequest(top, owned)
	if err != nil {
		s.c.logger.Warn("mcp: skipped a line that is not a JSON-RPC message", "err", err, "line", preview(line))
		return
	}
	s.c.dispatcher().handle(req)
}

// Waiting implements jsonrpc.Conn.
func (s *connStream) Waiting() int { return s.c.pending.Count() }

// End implements jsonrpc.Conn: every pending call fails, and later ones
// are refused. A call of the program's had the cause when one was
// pending, or followed its task (it fails at its next step).
func (s *connStream) End(err error) {
	s.c.setCause(err)
	if s.c.pending.Fail(&closedError{cause: s.c.getCause()}) > 0 || s.c.tasks.following() {
		s.c.endTold.Store(true)
	}
}

// Close closes the Stream, which ends a read in progress, and stops the
// background reader. Only the first Close closes: later ones return
// ErrClosed.
func (s *connStream) Close() error {
	err := ErrClosed
	s.closeOnce.Do(func() {
		s.closeErr = s.Stream.Close()
		s.r.Finish(ErrClosed)
		err = s.closeErr
	})
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

// writeAwaited writes an encoded notification (ending in a newline) and,
// on a stream that answers the writer, returns once the server has taken
// it, unless ctx ends first: the handshake's notifications/initialized.
func (s *connStream) writeAwaited(ctx context.Context, b []byte, h http.Header) error {
	if s.poster != nil && h == nil && s.poster.postNotification(ctx, b[:len(b)-1]) {
		return nil
	}
	return s.writeLineWith(b, h)
}

// writeLineWith writes an encoded message; h, when set, are headers for
// the stream to send with it (Streamable HTTP).
func (s *connStream) writeLineWith(b []byte, h http.Header) error {
	var err error
	switch {
	case s.lines != nil:
		err = s.lines.writeLine(b)
	case s.headers != nil && h != nil:
		err = s.headers.writeWithHeaders(b[:len(b)-1], h)
	case s.writer != nil:
		err = s.writer.WriteMessage(b[:len(b)-1])
	default:
		err = s.Stream.WriteObject(json.RawMessage(b[:len(b)-1]))
	}
	if err != nil && !errors.Is(err, ErrClosed) {
		s.failed(err)
		return &closedError{cause: s.c.getCause()}
	}
	return err
}

// failed ends the connection after a write error: the peer may have seen
// half a message. It has ended when failed returns (Err says so, and no
// call is sent on it); the Stream is closed in the background.
func (s *connStream) failed(err error) {
	s.r.Finish(err) // the cause, and every waiting call fails
	go s.Close()    // bounded by the Stream's Close
}

// sessionIDer is a Stream with a session id (Streamable HTTP).
type sessionIDer interface{ sessionID() string }

// eraCache is a Stream that remembers the era of its server across
// connections: Streamable HTTP, per transport.
type eraCache interface {
	knownEra() string
	rememberEra(e string)
}
