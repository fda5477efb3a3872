package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzReadSSE: any stream gives events and never a panic or an event past
// the maximum, and the reader ends.
func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("id: 1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Add([]byte("event: endpoint\ndata: /messages\r\n\r\n: comment\ndata: a\ndata: b\n\n"))
	f.Add([]byte("data: " + strings.Repeat("x", 300) + "\n\n"))
	f.Add([]byte("retry: -5\nretry: 99999999999999999999\nid\ndata\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 256
		n := 0
		err := Read(bytes.NewReader(b), max, func(ev Event) bool {
			n++
			if len(ev.Data) > max {
				t.Fatalf("an event of %d bytes passed the maximum of %d", len(ev.Data), max)
			}
			if ev.Retry < 0 {
				t.Fatalf("a negative retry %v", ev.Retry)
			}
			return true
		})
		var tl *TooLargeError
		if err != nil && !errors.As(err, &tl) {
			t.Fatalf("unexpected error %v", err)
		}
		if n > len(b) {
			t.Fatalf("%d events from %d bytes", n, len(b))
		}
	})
}

func TestReadGivesEachEventAsTheServerWroteIt(t *testing.T) {
	stream := "id: 1\nretry: 250\ndata: {\"a\":1}\n\n" + // an event with id and retry
		": a comment\r\nevent: endpoint\r\ndata: /messages?s=1\r\n\r\n" + // CRLF, a comment, a type
		"data: line one\ndata: line two\n\n" + // data lines joined
		"id: 7\ndata:\n\n" + // a priming event: an id, no data
		"data: after the stop\n\n"
	var got []Event
	err := Read(strings.NewReader(stream), 1024, func(ev Event) bool {
		got = append(got, ev)
		return len(got) < 4
	})
	require.NoError(t, err)
	assert.Equal(t, []Event{
		{ID: "1", Data: []byte(`{"a":1}`), Retry: 250 * time.Millisecond},
		{Type: "endpoint", Data: []byte("/messages?s=1")},
		{Data: []byte("line one\nline two")},
		{ID: "7", Data: []byte{}},
	}, got, "the events before fn said stop")
}

func TestReadRefusesAnEventPastTheBound(t *testing.T) {
	for name, stream := range map[string]string{
		"one long line":       "data: " + strings.Repeat("x", 10<<10) + "\n\n",
		"many lines together": strings.Repeat("data: "+strings.Repeat("x", 100)+"\n", 100) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			err := Read(strings.NewReader(stream), 4<<10, func(Event) bool {
				t.Fatal("no event past the bound is given")
				return true
			})
			var tl *TooLargeError
			require.ErrorAs(t, err, &tl)
			assert.Equal(t, 4<<10, tl.Max)
			assert.Greater(t, tl.Size, int64(4<<10))
		})
	}
}

// The SSE spec ends a line with CR, LF or CRLF; a stream may mix them,
// and a CRLF may be split between two reads.
func TestALineMayEndInALoneCR(t *testing.T) {
	tests := []struct{ name, stream string }{
		{"CR", "id: 1\rdata: a\rdata: b\r\rdata: c\r\r"},
		{"LF", "id: 1\ndata: a\ndata: b\n\ndata: c\n\n"},
		{"CRLF", "id: 1\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"},
		{"mixed", "id: 1\rdata: a\r\ndata: b\n\r\ndata: c\r\r"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 1 << 10} {
			t.Run(tt.name, func(t *testing.T) {
				var got []Event
				err := Read(&chunked{b: []byte(tt.stream), n: chunk}, 1<<10, func(ev Event) bool {
					got = append(got, ev)
					return true
				})
				require.NoError(t, err)
				require.Len(t, got, 2, "chunks of %d bytes", chunk)
				assert.Equal(t, Event{ID: "1", Data: []byte("a\nb")}, got[0])
				assert.Equal(t, Event{Data: []byte("c")}, got[1])
			})
		}
	}
	t.Run("an event ended by CR is given before more bytes arrive", func(t *testing.T) {
		r, w := io.Pipe()
		got := make(chan Event, 1)
		defer w.Close()
		go Read(r, 1<<10, func(ev Event) bool { got <- ev; return false })
		go w.Write([]byte("data: now\r\r")) // and nothing more: the reader must not wait for a LF
		select {
		case ev := <-got:
			assert.Equal(t, "now", string(ev.Data))
		case <-time.After(10 * time.Second):
			t.Fatal("the event ended by CR was not given")
		}
	})
}

// chunked gives b at most n bytes a read.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// ReadIdle, which gives its buffer back whenever it has nothing buffered,
// reads every stream as Read does, whatever the sizes of the reads.
func FuzzReadIdleAgreesWithRead(f *testing.F) {
	f.Add([]byte("id: 1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 1)
	f.Add([]byte("event: endpoint\ndata: /messages\r\n\r\n: comment\ndata: a\ndata: b\n\n"), 3)
	f.Add([]byte("data: "+strings.Repeat("x", 5000)+"\r\rdata: y\n\n"), 7)
	f.Add([]byte("data: "+strings.Repeat("é", 3000)+"\n\ndata: z"), 4096)
	f.Fuzz(func(t *testing.T, b []byte, chunk int) {
		chunk = max(1, chunk%8192)
		const max = 8 << 10
		read := func(f func(io.Reader, int, func(Event) bool) error) ([]Event, error) {
			var evs []Event
			err := f(&chunked{b: b, n: chunk}, max, func(ev Event) bool {
				evs = append(evs, ev)
				return true
			})
			return evs, err
		}
		want, wantErr := read(Read)
		got, gotErr := read(ReadIdle)
		assert.Equal(t, want, got)
		assert.Equal(t, wantErr, gotErr)
	})
}
