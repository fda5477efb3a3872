package mcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// A *CommandTransport can start its exec.Cmd once: a Manager given one
// would retry a lost server for ever, each call waiting to its deadline.
// Add refuses it, naming what to give instead.
func TestManagerRefusesATransportThatConnectsOnce(t *testing.T) {
	noLeaks(t)
	m := newManager(t, nil, &mcp.ManagerOptions{RestartBackoff: time.Millisecond})
	err := m.Add("once", child("crash-on-call"))
	require.ErrorIs(t, err, mcp.ErrSingleUseTransport)
	assert.ErrorContains(t, err, `server "once"`)
	assert.ErrorContains(t, err, "mcp.TransportFunc", "it says what to give instead")
	assert.Empty(t, m.Status(), "nothing was added")

	require.NoError(t, m.Add("again", mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		return child("crash-on-call").Connect(ctx)
	})), "a TransportFunc that builds a new CommandTransport each time is taken")
	ctx := ctxTimeout(t, 30*time.Second)
	_, err = m.CallTool(ctx, "mcp__again__crash", nil)
	require.Error(t, err, "the server exits")
	res, err := m.CallTool(ctx, "mcp__again__echo", map[string]string{"text": "back"})
	require.NoError(t, err, "and is started again")
	assert.Equal(t, "back", res.Text())
	assert.Equal(t, 1, m.Status()[0].Restarts)
	require.NoError(t, m.Close())
	assert.Empty(t, testproc.LiveChildren())
}

// The client end of NewInMemoryTransports connects once too: a Manager
// given it would, once the server is lost, try it again for ever, each
// call waiting to its deadline. Add refuses it, as it refuses a
// *CommandTransport; a TransportFunc that makes a pair and serves the
// other end for each connection is taken.
func TestManagerRefusesAnInMemoryEnd(t *testing.T) {
	noLeaks(t)
	m := newManager(t, nil, nil)
	client, server := mcp.NewInMemoryTransports()
	err := m.Add("pipe", client)
	require.ErrorIs(t, err, mcp.ErrSingleUseTransport)
	assert.ErrorContains(t, err, `server "pipe"`)
	assert.ErrorContains(t, err, "NewInMemoryTransports")
	assert.ErrorContains(t, err, "mcp.TransportFunc", "it says what to give instead")
	assert.Empty(t, m.Status(), "nothing was added")
	s, err := server.Connect(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err, "the refused end's pair is left as it was")
	require.NoError(t, s.Close())
	require.NoError(t, m.Close())
}
