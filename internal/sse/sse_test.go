package sse

import (
	"bytes"
	"errors"
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
