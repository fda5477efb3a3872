// Package sse reads server-sent events, as the HTTP transports of MCP
// carry JSON-RPC messages in them, within a bound on their size.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// TooLargeError reports an event (or one line of it) longer than the
// bound: Size bytes so far, past Max.
type TooLargeError struct {
	Size int64
	Max  int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("mcp: sse event of %d bytes exceeds the maximum of %d bytes", e.Size, e.Max)
}

// Event is one server-sent event.
type Event struct {
	ID, Type string        // id and event fields
	Data     []byte        // the data lines, joined by newlines; the Event's own
	Retry    time.Duration // zero when the event sets none
}

// Read reads server-sent events from r and calls fn with each event
// that carries data (priming events with an empty data field are skipped
// but their id and retry are reported through fn too). It returns at the
// end of the stream or when fn returns false; an event or line longer
// than max bytes is a *TooLargeError.
func Read(r io.Reader, max int, fn func(ev Event) bool) error {
	return read(r, max, false, fn)
}

// ReadIdle is Read for a stream that is idle most of the time (the
// server's own messages): while nothing is buffered, it waits holding
// no buffer, and it keeps no large one between events.
func ReadIdle(r io.Reader, max int, fn func(ev Event) bool) error {
	return read(r, max, true, fn)
}

func read(r io.Reader, max int, idle bool, fn func(ev Event) bool) error {
	lr := lineReader{max: max}
	if idle {
		lr.idle = &idleSource{src: r}
	} else {
		lr.br = readers.Get().(*bufio.Reader)
		lr.br.Reset(r)
	}
	defer lr.release()
	var ev Event
	var data bytes.Buffer
	hasData := false
	for {
		line, err := lr.next()
		if err != nil && err != io.EOF {
			return err
		}
		switch {
		case len(line) == 0 && err == nil:
			if hasData || ev.ID != "" || ev.Retry > 0 {
				ev.Data = bytes.Clone(bytes.TrimSuffix(data.Bytes(), []byte{'\n'}))
				if !fn(ev) {
					return nil
				}
			}
			ev, hasData = Event{}, false
			data.Reset()
			if idle && data.Cap() > 4<<10 {
				data = bytes.Buffer{} // a large event's buffer is not kept while idle
			}
		case len(line) > 0 && line[0] == ':': // a comment
		case len(line) > 0:
			field, value, _ := bytes.Cut(line, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(field) {
			case "data":
				data.Write(value)
				data.WriteByte('\n')
				hasData = true
				if data.Len() > max {
					return &TooLargeError{Size: int64(data.Len()), Max: max}
				}
			case "id":
				ev.ID = string(value)
			case "event":
				ev.Type = string(value)
			case "retry":
				if ms, perr := strconv.Atoi(string(value)); perr == nil && ms >= 0 {
					ev.Retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// lineReader reads the lines of an event stream: each ends with CR, LF
// or CRLF, as the SSE spec allows.
type lineReader struct {
	br      *bufio.Reader // from readers; nil while an idle reader waits
	max     int
	afterCR bool // the last line ended with CR: a LF first is its CRLF
	long    []byte
	idle    *idleSource // set for ReadIdle
}

// idleSource is the stream of ReadIdle, which gives its buffered reader
// back while it waits, reading one byte without it: first is that byte,
// read before the rest of src.
type idleSource struct {
	src      io.Reader
	one      [1]byte
	hasFirst bool
}

// release gives the buffered reader back.
func (lr *lineReader) release() {
	if lr.br != nil {
		lr.br.Reset(nil)
		readers.Put(lr.br)
		lr.br = nil
	}
}

// Read is src, after the byte an idle wait read: that byte and what src
// has after it (it has come: the rest of the event is on its way).
func (s *idleSource) Read(p []byte) (int, error) {
	if s.hasFirst && len(p) > 0 {
		s.hasFirst = false
		p[0] = s.one[0]
		n, err := s.src.Read(p[1:])
		return n + 1, err
	}
	return s.src.Read(p)
}

// wait waits for the idle source to have something to read, holding no
// buffered reader.
func (lr *lineReader) wait() error {
	lr.release()
	s := lr.idle
	for {
		n, err := s.src.Read(s.one[:])
		if n == 1 {
			s.hasFirst = true
			lr.br = readers.Get().(*bufio.Reader)
			lr.br.Reset(s)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// next returns the next line without its end; at the end of the stream,
// the last line (perhaps empty) and io.EOF. The line is valid until the
// next call. A line longer than max is a *TooLargeError.
func (lr *lineReader) next() ([]byte, error) {
	lr.long = lr.long[:0]
	for {
		if lr.idle != nil && (lr.br == nil || lr.br.Buffered() == 0 && !lr.idle.hasFirst) {
			if err := lr.wait(); err != nil {
				return lr.long, err
			}
		}
		if lr.br.Buffered() == 0 {
			if _, err := lr.br.Peek(1); err != nil {
				return lr.long, err
			}
		}
		buf, _ := lr.br.Peek(lr.br.Buffered())
		if lr.afterCR {
			lr.afterCR = false
			if buf[0] == '\n' {
				lr.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if len(lr.long)+len(buf) > lr.max {
				return nil, &TooLargeError{Size: int64(len(lr.long) + len(buf)), Max: lr.max}
			}
			lr.long = append(lr.long, buf...)
			lr.br.Discard(len(buf))
			continue
		}
		lr.afterCR = buf[i] == '\r'
		line := buf[:i]
		if len(lr.long) > 0 {
			lr.long = append(lr.long, line...)
			line = lr.long
		}
		if len(line) > lr.max {
			return nil, &TooLargeError{Size: int64(len(line)), Max: lr.max}
		}
		lr.br.Discard(i + 1) // the bytes of line stay in the buffer until the next read
		return line, nil
	}
}

// readers are the buffered readers of SSE streams: small, since a line
// longer than the buffer is gathered apart, and reused from one answer to
// the next.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
