package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"

	"github.com/mcplug/mcplug/internal/latelog"
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
// A Stream may offer more than these methods, as an http.ResponseWriter
// may be an http.Flusher: a [MessageReader] hands over each message
// undecoded, a [MessageWriter] takes one encoded. The Connection looks for
// them once, when it opens; a Stream of the program's that offers them is
// read and written as the built-in ones are, and a Stream that wraps
// another should offer what the inner one does. The Streams of this
// package's transports offer the Connection more still (raw lines with
// read deadlines, HTTP headers, failures as Go errors); over Streamable
// HTTP, a Stream that wraps one loses the MCP-Protocol-Version and
// Mcp-Param-* headers: wrap the HTTP client instead.
type Stream interface {
	ReadObject(v any) error
	WriteObject(obj any) error
	Close() error
}

// A MessageReader is a Stream that holds whole messages: ReadMessage
// returns the next one as it arrived (one JSON value, which the caller
// then owns), and is called instead of ReadObject, so that each message is
// decoded once, by the Connection. Its errors are ReadObject's.
type MessageReader interface {
	Stream
	ReadMessage() ([]byte, error)
}

// A MessageWriter is a Stream that sends an encoded message as it is:
// WriteMessage takes one JSON value without a trailing newline, valid only
// during the call, and is called instead of WriteObject. It may be called
// concurrently, as WriteObject may.
type MessageWriter interface {
	Stream
	WriteMessage(msg []byte) error
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
	return newLineStreamWith(rwc, ndjson.StreamOptions{MaxMessageSize: maxMessage, Logger: logger})
}

// newLineStreamWith is newLineStream with the options given; a nil
// Logger means the Connection's, once it names one.
func newLineStreamWith(rwc io.ReadWriteCloser, o ndjson.StreamOptions) *lineStream {
	var late *latelog.Target
	if o.Logger == nil {
		o.Logger, late = latelog.New()
	}
	o.Closed = ErrClosed
	return &lineStream{Stream: ndjson.NewStream(rwc, o), late: late}
}

// lineStream is the NDJSON Stream over a byte stream (internal/ndjson),
// with the optional methods the Connection looks for.
type lineStream struct {
	*ndjson.Stream
	late *latelog.Target // nil when the logger was given
}

func (s *lineStream) writeLine(b []byte) error  { return s.WriteLine(b) }
func (s *lineStream) useLogger(lg *slog.Logger) { s.late.Use(lg) }

// NewInMemoryTransports returns two connected Transports, for tests and for
// running a server in the same process: what one side writes, the other
// reads. Each Transport connects once; a second Connect fails, and
// Manager.Add refuses them (see ErrSingleUseTransport).
func NewInMemoryTransports() (client, server Transport) {
	a, b := net.Pipe()
	return &inMemoryTransport{conn: a}, &inMemoryTransport{conn: b}
}

// inMemoryTransport is one end of NewInMemoryTransports.
type inMemoryTransport struct {
	once sync.Once
	conn net.Conn
}

func (t *inMemoryTransport) Connect(ctx context.Context) (Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var s Stream
	t.once.Do(func() { s = NewStream(t.conn) })
	if s == nil {
		return nil, errors.New("mcp: in-memory transport already connected")
	}
	return s, nil
}
