package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAFailedExchangeFailsItsRequestWithTheGoError(t *testing.T) {
	cause := &HTTPStatusError{StatusCode: 502, Body: "bad gateway"}
	t.Run("through the Connection's route, as it is", func(t *testing.T) {
		b := newInbox()
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
		b := newInbox()
		b.failRequest([]byte("8"), cause)
		msg, err := b.take()
		require.NoError(t, err)
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error *Error          `json:"error"`
		}
		require.NoError(t, json.Unmarshal(msg, &resp))
		assert.Equal(t, "8", string(resp.ID))
		require.NotNil(t, resp.Error)
		assert.Equal(t, int64(CodeInternalError), resp.Error.Code)
		assert.Equal(t, cause.Error(), resp.Error.Message)
		assert.Nil(t, resp.Error.Data, "no reference into anything: the text is all")
	})
	t.Run("a response that does not decode fails its call with ErrBadResult", func(t *testing.T) {
		b := newInbox()
		var got error
		b.routeFailures(func(_ []byte, err error) { got = err })
		b.put([]byte(`{"jsonrpc":"2.0","id":9,"result":"not the number the reader wants"}`))
		b.put([]byte(`{"jsonrpc":"2.0","method":"notifications/message"}`))
		var next struct {
			Method string
			Result int
		}
		require.NoError(t, b.readObject(&next))
		assert.True(t, errors.Is(got, ErrBadResult), "got %v", got)
		assert.Equal(t, "notifications/message", next.Method, "the stream goes on with the next message")
	})
}
