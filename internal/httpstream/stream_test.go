package httpstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"testing/iotest"

	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadBody(t *testing.T) {
	const max = 3*exactRead + 100
	data := bytes.Repeat([]byte("0123456789abcdef"), (3*exactRead+256)/16)
	tests := []struct {
		name     string
		sent     int
		declared int64
		want     int   // bytes returned
		err      error // or this error
	}{
		{"an empty body", 0, 0, 0, nil},
		{"a small body of its declared length", 10, 10, 10, nil},
		{"a body of exactly the length read at once", exactRead, exactRead, exactRead, nil},
		{"a body one byte longer, read in a growing buffer", exactRead + 1, exactRead + 1, exactRead + 1, nil},
		{"a body three times as long", 3*exactRead + 5, 3*exactRead + 5, 3*exactRead + 5, nil},
		{"a body shorter than declared", 100, 200, 0, io.ErrUnexpectedEOF},
		{"a long body shorter than declared", exactRead + 10, 3 * exactRead, 0, io.ErrUnexpectedEOF},
		{"a body of unknown length", 5000, -1, 5000, nil},
		{"a body of unknown length past the bound stops one byte past it", len(data), -1, max + 1, nil},
		{"a declared length past the bound stops one byte past it", len(data), int64(len(data)), max + 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{ContentLength: tt.declared, Body: io.NopCloser(iotest.HalfReader(bytes.NewReader(data[:tt.sent])))}
			b, err := readBody(resp, max)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, len(b))
			assert.True(t, bytes.Equal(data[:tt.want], b), "the bytes read are the bytes sent")
		})
	}
}

// countingBody is an SSE body that gives all it has, and its end, in one
// read, and counts the reads.
type countingBody struct {
	data   []byte
	reads  int
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.reads++
	n := copy(p, b.data)
	b.data = b.data[n:]
	if len(b.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

func (b *countingBody) Close() error { b.closed = true; return nil }

// A response stream that ended in the read that brought the response has
// nothing left to drain: it is not read again, and no goroutine is
// started to read it.
func TestAStreamThatEndedWithItsResponseIsNotDrained(t *testing.T) {
	s := New(Options{Config: Config{URL: "http://127.0.0.1:1/mcp", Logger: slog.New(slog.DiscardHandler),
		Errors: &Errors{Closed: errors.New("closed"), BadResult: errors.New("bad result")}}})
	defer s.Close()
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`)
	top, ok := ndjson.ScanTop(req)
	require.True(t, ok)
	body := &countingBody{data: []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")}
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}
	var got []byte
	x := &exchange{b: req, top: top, own: func(top ndjson.Top) { got = top.Result }}
	s.receive(context.Background(), resp, x, func(err error) { t.Errorf("failed: %v", err) })
	assert.Equal(t, `{}`, string(got), "the response went to its call")
	assert.Equal(t, 1, body.reads, "the stream was read again after its end")
	assert.True(t, body.closed)
}
