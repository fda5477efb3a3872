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
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		readers.Put(br)
	}()
	var ev Event
	var data bytes.Buffer
	hasData := false
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull && len(long) <= max {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > max {
				return &TooLargeError{Size: int64(len(long)), Max: max}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
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

// readers are the buffered readers of SSE streams: small, since a line
// longer than the buffer is gathered apart, and reused from one answer to
// the next.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
