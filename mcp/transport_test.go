package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
)

func TestInMemoryTransportsCarryMessagesBothWays(t *testing.T) {
	noLeaks(t)
	client, server := mcp.NewInMemoryTransports()
	ctx := ctxTimeout(t, 5*time.Second)
	cs, err := client.Connect(ctx)
	require.NoError(t, err)
	ss, err := server.Connect(ctx)
	require.NoError(t, err)

	_, err = client.Connect(ctx)
	assert.ErrorContains(t, err, "already connected", "each end connects once")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = server.Connect(cancelled)
	assert.ErrorIs(t, err, context.Canceled)

	require.NoError(t, cs.WriteObject(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"}))
	var got map[string]any
	require.NoError(t, ss.ReadObject(&got))
	assert.Equal(t, "ping", got["method"])
	require.NoError(t, ss.WriteObject(json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)))
	require.NoError(t, cs.ReadObject(&got))
	assert.Equal(t, map[string]any{}, got["result"])

	require.NoError(t, cs.Close())
	assert.Error(t, ss.ReadObject(&got), "the other end sees the close")
	ss.Close()
}
