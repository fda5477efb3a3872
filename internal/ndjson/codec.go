// Package ndjson frames JSON-RPC 2.0 messages as newline-delimited JSON, the
// framing of the MCP stdio transport.
//
// [Codec] implements jsonrpc2.ObjectCodec. It is written around one fact of
// sourcegraph/jsonrpc2: any error returned by ReadObject closes the whole
// connection. So ReadObject returns only I/O errors; everything else a peer
// may write on its stdout (banners, log lines, JSON that is not a JSON-RPC
// message) is skipped and reported to the logger, rate-limited. A batch is
// unpacked into its messages, and a message pretty-printed over several
// lines is gathered into one.
package ndjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"time"
)

// DefaultMaxMessageSize is the largest line a Codec accepts when its
// MaxMessageSize is zero.
const DefaultMaxMessageSize = 64 << 20

// CodeMessageTooLarge is the JSON-RPC error code of the response the Codec
// synthesises for a response that exceeded the maximum size. Its data is
// {"messageTooLarge": {"size": N, "max": M}}; see [TooLarge].
const CodeMessageTooLarge = -32099

// keepBuf is the largest line buffer kept between reads; a larger one (a
// huge message) is released once decoded.
const keepBuf = 1 << 20

// TooLargeError reports a message longer than the configured maximum.
type TooLargeError struct {
	Size int64 // bytes in the line, without its newline
	Max  int   // the configured maximum
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("mcp: message of %d bytes exceeds the maximum of %d bytes (raise MaxMessageSize)", e.Size, e.Max)
}

// Codec reads and writes newline-delimited JSON-RPC messages. A Codec keeps
// per-stream state (a line buffer and a log limiter): use one per stream.
// ReadObject must not be called concurrently with itself; WriteObject may be.
type Codec struct {
	// MaxMessageSize bounds one message in bytes; 0 means
	// DefaultMaxMessageSize. A response past it becomes a synthesised error
	// response for its id (code CodeMessageTooLarge) when the id can be
	// found in its first or last bytes; other oversized lines are skipped.
	MaxMessageSize int

	// Logger receives skipped lines (at Warn, rate-limited). Nil discards.
	Logger *slog.Logger

	buf      []byte
	part     partial
	inBuf    bool  // the last line returned lives in buf
	detached bool  // buf was handed over by Detach
	lastSize int64 // bytes in the last line
	limiter  limiter
	multi    *multiline // a message being gathered over several lines
	batch    [][]byte   // the elements of a batch not yet returned
	top      Top        // the top level of the line last returned, when topOK
	topOK    bool
}

// WriteObject implements jsonrpc2.ObjectCodec: one JSON value, one '\n'.
func (c *Codec) WriteObject(w io.Writer, obj any) error {
	b, err := Append(nil, obj)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Append appends the encoding of obj and a newline to dst.
func Append(dst []byte, obj any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return dst, err
	}
	if bytes.IndexByte(b, '\n') >= 0 { // json.Marshal escapes newlines in strings; a raw message may not
		b = compactLine(b)
	}
	dst = append(dst, b...)
	return append(dst, '\n'), nil
}

func compactLine(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return bytes.ReplaceAll(b, []byte{'\n'}, []byte{' '})
	}
	return out.Bytes()
}

// ReadObject implements jsonrpc2.ObjectCodec. It decodes the next JSON-RPC
// message into v (a pointer), skipping lines that are not one. It returns
// only the reader's errors; io.EOF after the last message.
func (c *Codec) ReadObject(r *bufio.Reader, v any) error { return c.readObject(r, v) }

func (c *Codec) readObject(r SliceReader, v any) error {
	for {
		line, err := c.ReadLine(r)
		if err != nil {
			return err
		}
		if err := DecodeFresh(line, v); err != nil {
			c.Skip("not a JSON-RPC message: "+err.Error(), line)
			continue
		}
		return nil
	}
}

// ReadLine returns the next message that may be a JSON-RPC message: a JSON
// object, without its line ending. Other lines are skipped (and logged); an
// oversized response comes back as the error response standing for it.
//
// Two things a peer should not send are understood all the same: a message
// pretty-printed over several lines is gathered into one (see multiline),
// and a batch (a JSON array of messages, which protocol revision 2025-03-26
// allowed) is returned one element at a time. The slice is valid until the
// next call. It returns only the reader's errors.
func (c *Codec) ReadLine(r SliceReader) ([]byte, error) {
	c.top, c.topOK = Top{}, false // nor does the Codec keep a line handed over
	for {
		if len(c.batch) > 0 {
			msg := c.batch[0]
			c.batch[0] = nil
			c.batch = c.batch[1:]
			c.inBuf = false
			return msg, nil
		}
		line, size, tooLarge, err := c.readLine(r)
		if err != nil {
			return nil, err // a message being gathered stays in c.multi
		}
		if tooLarge {
			c.multi = nil
			if resp := c.tooLargeResponse(line, size); resp != nil {
				return resp, nil
			}
			c.skip("message too large, no id found", size, nil)
			continue
		}
		line = bytes.TrimSpace(line)
		if c.multi != nil {
			if msg, ok := c.gather(line); ok {
				line = msg
			} else {
				continue
			}
		}
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' && line[0] != '[' {
			c.skip("not a JSON object", int64(len(line)), line)
			continue
		}
		if line[len(line)-1] == '}' {
			// A whole object, as nearly every line is: its top level is
			// scanned here once, for the caller too (LastTop).
			if top, end, ok := scanTop(line); ok && end == len(line) {
				c.top, c.topOK = top, true
				return line, nil
			}
		}
		if last := line[len(line)-1]; last != '}' && last != ']' || !complete(line) {
			if ok := c.startGather(line); ok {
				continue
			}
			c.skip("not a JSON value", int64(len(line)), line)
			continue
		}
		if line[0] == '[' {
			c.unbatch(line)
			continue
		}
		return line, nil
	}
}

// LastTop is the top level of the line ReadLine returned last (see
// ScanTop), when ReadLine scanned it (a whole object, or one gathered from
// several lines): false for a batch's element, which the caller scans
// itself. Its spans are valid as long as that line; Detach forgets it
// (the caller takes it first).
func (c *Codec) LastTop() (Top, bool) { return c.top, c.topOK }

// startGather begins gathering a message spread over several lines with
// its first line, when that line is the start of a JSON value.
func (c *Codec) startGather(line []byte) bool {
	var sc valueScan
	if sc.feed(line) != scanOpen {
		return false
	}
	c.multi = &multiline{buf: append(make([]byte, 0, 2*len(line)+64), line...), scan: sc}
	return true
}

// gather adds a line to the message being gathered. It returns the whole
// message once its value closes. A line that is a whole JSON-RPC message
// by itself ends the gathering (what came before was not a message) and
// is returned; a gathering that goes wrong or grows past the maximum is
// skipped.
func (c *Codec) gather(line []byte) ([]byte, bool) {
	m := c.multi
	if len(line) > 0 && line[0] == '{' && line[len(line)-1] == '}' {
		if top, ok := ScanTop(line); ok && (top.Method != nil || top.IsResponse()) {
			c.multi = nil
			c.skip("an unfinished JSON value before a message", int64(len(m.buf)), m.buf)
			return line, true
		}
	}
	max := c.MaxMessageSize
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	if len(m.buf)+1+len(line) > max {
		c.multi = nil
		c.skip("a message spread over several lines exceeds the maximum size", int64(len(m.buf)+1+len(line)), nil)
		return nil, false
	}
	m.buf = append(m.buf, '\n')
	m.buf = append(m.buf, line...)
	switch m.scan.feed(line) {
	case scanOpen:
		return nil, false
	case scanDone:
		c.multi = nil
		if !json.Valid(m.buf) {
			c.skip("a message spread over several lines is not valid JSON", int64(len(m.buf)), m.buf)
			return nil, false
		}
		c.inBuf = false
		return m.buf, true
	default:
		c.multi = nil
		c.skip("a value spread over several lines is not JSON", int64(len(m.buf)), m.buf)
		return nil, false
	}
}

// unbatch queues the elements of a batch, each to be returned as a
// message of its own.
func (c *Codec) unbatch(line []byte) {
	own := bytes.Clone(line) // the line's buffer is reused by the next read
	ok := Elements(own, func(v []byte) bool {
		if len(v) == 0 || v[0] != '{' {
			return false
		}
		c.batch = append(c.batch, v)
		return true
	})
	if !ok {
		c.batch = c.batch[:0]
		c.skip("a batch that is not an array of objects", int64(len(line)), line)
	}
}

// complete reports whether line holds one whole JSON value: its brackets
// close, and nothing but space follows.
func complete(line []byte) bool {
	var sc valueScan
	return sc.feed(line) == scanDone
}

// multiline is a message being gathered over several lines.
type multiline struct {
	buf  []byte
	scan valueScan
}

// valueScan follows the nesting of a JSON value fed to it in pieces.
type valueScan struct {
	depth    int
	inString bool
	escaped  bool
	started  bool
	closed   bool
}

const (
	scanOpen = iota // the value goes on
	scanDone        // the value closed, and nothing but space follows
	scanBad         // not a JSON value
)

func (s *valueScan) feed(b []byte) int {
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case s.closed:
			if ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' {
				return scanBad
			}
		case s.inString:
			// Cross a long text with IndexByte, not byte by byte: find the
			// next quote, and count the backslashes just before it (from
			// b[i], which no backslash escapes) to know whether it ends
			// the string.
			if s.escaped {
				s.escaped = false
				continue
			}
			q := bytes.IndexByte(b[i:], '"')
			if q < 0 {
				s.escaped = backslashesBefore(b, len(b), i)%2 == 1
				return scanOpen // the string goes on past this piece
			}
			i += q
			if backslashesBefore(b, i, i-q)%2 == 1 {
				continue // an escaped quote
			}
			s.inString = false
		case ch == '"':
			if !s.started {
				return scanBad
			}
			s.inString = true
		case ch == '{' || ch == '[':
			s.started = true
			s.depth++
		case ch == '}' || ch == ']':
			s.depth--
			if s.depth < 0 {
				return scanBad
			}
			if s.depth == 0 {
				s.closed = true
			}
		case !s.started && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n':
			return scanBad
		}
	}
	if s.closed {
		return scanDone
	}
	return scanOpen
}

// backslashesBefore counts the backslashes just before b[end], back to
// b[from] at most.
func backslashesBefore(b []byte, end, from int) int {
	n := 0
	for j := end - 1; j >= from && b[j] == '\\'; j-- {
		n++
	}
	return n
}

// Skip logs (rate-limited) a line that is skipped for reason.
func (c *Codec) Skip(reason string, line []byte) { c.skip(reason, int64(len(line)), line) }

// DecodeFresh decodes line into a new value of v's type and stores it in v
// only on success, so a failed decode never leaves v half filled.
func DecodeFresh(line []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("ndjson: ReadObject needs a non-nil pointer, got %T", v)
	}
	fresh := reflect.New(rv.Type().Elem())
	if err := json.Unmarshal(line, fresh.Interface()); err != nil {
		return err
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

// readLine returns the next line without its newline. The slice is valid
// until the next call. A line longer than the maximum is consumed whole;
// then tooLarge is set, line holds its first and last bytes (joined) and size
// its full length.
//
// A read error other than the end of the input leaves the part of the line
// read so far in the Codec, and the next call goes on with it: so a read
// interrupted by a deadline loses nothing.
func (c *Codec) readLine(r SliceReader) (line []byte, size int64, tooLarge bool, err error) {
	max := c.MaxMessageSize
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	p := &c.part
	if !p.open {
		switch {
		case cap(c.buf) > keepBuf && c.lastSize <= keepBuf:
			c.buf = nil // a big buffer is kept only while big messages keep coming
		case c.detached: // expect another line like the one detached
			c.buf = make([]byte, 0, c.lastSize+c.lastSize/16+4096)
		}
		c.detached = false
		c.buf = c.buf[:0]
		c.inBuf = false
		*p = partial{open: true, tail: p.tail[:0]}
	}
	for {
		frag, err := r.ReadSlice('\n')
		complete := err == nil
		if complete {
			frag = frag[:len(frag)-1]
		}
		p.size += int64(len(frag))
		switch {
		case p.tooLarge:
			p.tail = keepTail(p.tail, frag)
		case p.size > int64(max):
			p.tooLarge = true
			room := min(headKeep, max) - len(c.buf)
			if room > 0 {
				c.buf = append(c.buf, frag[:min(room, len(frag))]...)
			}
			c.buf = c.buf[:min(len(c.buf), headKeep)]
			p.tail = keepTail(p.tail, frag)
		case complete && len(c.buf) == 0:
			c.endLine()
			return frag, p.size, false, nil // zero-copy: the line fits in r's buffer
		default:
			c.buf = appendGrow(c.buf, frag)
		}
		switch {
		case complete:
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && p.size > 0:
			// A final line without a newline; the next call reports EOF.
		default:
			return nil, 0, false, err // p keeps what was read
		}
		c.endLine()
		if p.tooLarge {
			joined := append(c.buf, ' ')
			joined = append(joined, p.tail...)
			c.buf = nil
			return joined, p.size, true, nil
		}
		c.inBuf = true
		return c.buf, p.size, false, nil
	}
}

// appendGrow appends frag to buf, doubling buf when it must grow, so a long
// line is copied about once as it comes in.
func appendGrow(buf, frag []byte) []byte {
	if need := len(buf) + len(frag); need > cap(buf) {
		grown := make([]byte, len(buf), max(need, 2*cap(buf), 4096))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, frag...)
}

// Detach hands the line ReadLine last returned over to the caller, who may
// then keep it and write to it, when that line is larger than the buffer a
// Codec keeps between reads; the Codec reads the next line into new memory.
// It reports false when the line is still the Codec's (valid until the next
// read).
func (c *Codec) Detach() bool {
	if !c.inBuf || c.lastSize <= keepBuf {
		return false
	}
	c.buf, c.inBuf, c.detached = nil, false, true
	c.top, c.topOK = Top{}, false // its spans are in the line handed over
	return true
}

// partial is the state of the line being read.
type partial struct {
	open     bool  // a line is being read: the next readLine goes on with it
	size     int64 // bytes so far
	tooLarge bool
	tail     []byte // the last bytes of a line that is too large
}

func (c *Codec) endLine() {
	c.part.open = false
	c.lastSize = c.part.size
}

const (
	headKeep = 4096
	tailKeep = 512
)

func keepTail(tail, frag []byte) []byte {
	if len(frag) >= tailKeep {
		return append(tail[:0], frag[len(frag)-tailKeep:]...)
	}
	tail = append(tail, frag...)
	if len(tail) > tailKeep {
		tail = append(tail[:0], tail[len(tail)-tailKeep:]...)
	}
	return tail
}

// tooLargeResponse builds the error response standing for an oversized
// response whose id is found in its head or tail. It returns nil for an
// oversized request or notification, or when no id is found.
func (c *Codec) tooLargeResponse(headTail []byte, size int64) []byte {
	head := headTail[:min(len(headTail), headKeep)]
	id, isResponse := findID(headTail)
	if !isResponse || topLevel(head, "method") != nil {
		return nil
	}
	max := c.MaxMessageSize
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	c.skip("message too large, replaced by an error response", size, nil)
	msg := (&TooLargeError{Size: size, Max: max}).Error()
	out, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    CodeMessageTooLarge,
			"message": msg,
			"data":    map[string]any{"messageTooLarge": map[string]any{"size": size, "max": max}},
		},
	})
	return out
}

// TooLarge reports whether a JSON-RPC error (its code and data) is the one a
// Codec synthesised for an oversized response, and returns its detail.
func TooLarge(code int64, data []byte) (*TooLargeError, bool) {
	if code != CodeMessageTooLarge || len(data) == 0 {
		return nil, false
	}
	var d struct {
		M *struct {
			Size int64 `json:"size"`
			Max  int   `json:"max"`
		} `json:"messageTooLarge"`
	}
	if json.Unmarshal(data, &d) != nil || d.M == nil {
		return nil, false
	}
	return &TooLargeError{Size: d.M.Size, Max: d.M.Max}, true
}

func (c *Codec) skip(reason string, size int64, line []byte) {
	if c.Logger == nil {
		return
	}
	suppressed, ok := c.limiter.allow(time.Now())
	if !ok {
		return
	}
	attrs := []any{"reason", reason, "bytes", size}
	if line != nil {
		attrs = append(attrs, "line", preview(line))
	}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	c.Logger.Warn("mcp: skipped a line that is not a JSON-RPC message", attrs...)
}

func preview(line []byte) string {
	const n = 200
	if len(line) > n {
		return string(line[:n]) + "…"
	}
	return string(line)
}

// limiter lets through a burst of log lines per second and counts the rest.
type limiter struct {
	mu         sync.Mutex
	window     time.Time
	n          int
	suppressed int
}

const logBurst = 10

func (l *limiter) allow(now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) >= time.Second {
		l.window, l.n = now, 0
	}
	if l.n >= logBurst {
		l.suppressed++
		return 0, false
	}
	l.n++
	suppressed, l.suppressed = l.suppressed, 0
	return suppressed, true
}
