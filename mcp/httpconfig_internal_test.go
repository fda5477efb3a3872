package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransportFailuresAreKeptByTheirStream(t *testing.T) {
	mine, other := &sseStream{in: newInbox()}, &sseStream{in: newInbox()}
	cause := errors.New("dial tcp: connection refused")
	var resp struct {
		Error struct {
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(errorResponse(&mine.in.failures, []byte("7"), cause), &resp))

	_, ok := transportError(other, resp.Error.Data)
	assert.False(t, ok, "another stream's failure is not this one's")
	err, ok := transportError(mine, resp.Error.Data)
	require.True(t, ok)
	assert.Same(t, cause, err, "the failure as it was")
	_, ok = transportError(mine, resp.Error.Data)
	assert.False(t, ok, "taken once")
	_, ok = transportError(nil, resp.Error.Data)
	assert.False(t, ok, "a stream that keeps none: the server's own data")

	t.Run("a closed stream's unread failures go with it", func(t *testing.T) {
		b := newInbox()
		b.put(errorResponse(&b.failures, []byte("8"), cause))
		b.discard()
		b.failures.mu.Lock()
		defer b.failures.mu.Unlock()
		assert.Empty(t, b.failures.m)
	})
}
