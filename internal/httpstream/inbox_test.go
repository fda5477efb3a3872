package httpstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The errors of package mcp, as the tests here stand them in.
var (
	errClosed    = errors.New("mcp: connection closed")
	errBadResult = errors.New("mcp: malformed result")
)

func TestAFailedExchangeFailsItsRequestWithTheGoError(t *testing.T) {
	cause := errors.New("mcp: http status 502: bad gateway")
	t.Run("through the Connection's route, as it is", func(t *testing.T) {
		b := newInbox(errBadResult)
		var gotID []byte
		var got error
		b.routeFailures(func(id []byte, err error) { gotID, got = id, err })
		b.failRequest([]byte("7"), cause)
		assert.Equal(t, "7", string(gotID))
		assert.Same(t, cause, got)
		b.mu.Lock()
		defer b.mu.Unlock()
		assert.Empty(t, b.queue, "nothing stands for it in the stream")
	})
	t.Run("with no route, as an error response that says what failed", func(t *testing.T) {
		b := newInbox(errBadResult)
		b.failRequest([]byte("8"), cause)
		msg, err := b.take()
		require.NoError(t, err)
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int64
				Message string
				Data    json.RawMessage
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(msg, &resp))
		assert.Equal(t, "8", string(resp.ID))
		require.NotNil(t, resp.Error)
		assert.Equal(t, int64(-32603), resp.Error.Code)
		assert.Equal(t, cause.Error(), resp.Error.Message)
		assert.Nil(t, resp.Error.Data, "no reference into anything: the text is all")
	})
	t.Run("a response that does not decode fails its call with ErrBadResult", func(t *testing.T) {
		b := newInbox(errBadResult)
		var got error
		b.routeFailures(func(_ []byte, err error) { got = err })
		b.put([]byte(`{"jsonrpc":"2.0","id":9,"result":"not the number the reader wants"}`))
		b.put([]byte(`{"jsonrpc":"2.0","method":"notifications/message"}`))
		var next struct {
			Method string
			Result int
		}
		require.NoError(t, b.readObject(&next))
		assert.True(t, errors.Is(got, errBadResult), "got %v", got)
		assert.Equal(t, "notifications/message", next.Method, "the stream goes on with the next message")
	})
}

// FuzzInbox: whatever a server sends over HTTP, reading it never ends the
// connection: a message that does not decode is skipped, or stands for an
// error of its call.
func FuzzInbox(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[tru]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x"}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := newInbox(errBadResult)
		in.put(b)
		in.put([]byte(`{"jsonrpc":"2.0","method":"after"}`))
		in.end(errClosed)
		var msgs []json.RawMessage
		for {
			var raw json.RawMessage
			if err := in.readObject(&raw); err != nil {
				if !errors.Is(err, errClosed) {
					t.Fatalf("reading ended with %v", err)
				}
				break
			}
			msgs = append(msgs, raw)
		}
		if len(msgs) == 0 || !bytes.Contains(msgs[len(msgs)-1], []byte(`"after"`)) {
			t.Fatalf("the message after %q was lost: %q", b, msgs)
		}
	})
}
