package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialer is a transport whose every connection is to the server its
// next function gives; dialed gets the number of each dial as it starts.
type dialer struct {
	next   func(n int) (*mcptest.Server, chan struct{}) // the server of dial n, and what the dial waits for first (nil: nothing)
	dialed chan int
	n      int
}

func (d *dialer) Connect(ctx context.Context) (mcp.Stream, error) {
	d.n++
	n := d.n
	srv, wait := d.next(n)
	if d.dialed != nil {
		d.dialed <- n
	}
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return srv.Transport().Connect(ctx)
}

func TestManagerInstructions(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	hold := make(chan struct{})
	defer close(hold)
	gone := &dialer{dialed: make(chan int, 4), next: func(n int) (*mcptest.Server, chan struct{}) {
		if n == 1 {
			return &mcptest.Server{Instructions: "Use c for c."}, nil
		}
		return &mcptest.Server{Instructions: "never seen"}, hold // its reconnection waits
	}}
	renewed := &dialer{dialed: make(chan int, 4), next: func(n int) (*mcptest.Server, chan struct{}) {
		return &mcptest.Server{Instructions: strings.Repeat("b", n)}, nil
	}}
	m := newManager(t, nil, &mcp.ManagerOptions{MaxInstructions: 10})
	require.NoError(t, m.Add("a", (&mcptest.Server{Instructions: "Use a's tools with care. " + strings.Repeat("é", 20)}).Transport()))
	require.NoError(t, m.Add("b", renewed))
	require.NoError(t, m.Add("c", gone))
	require.NoError(t, m.Add("quiet", (&mcptest.Server{}).Transport()))
	assert.Empty(t, m.Instructions(), "nothing is connected yet, and Instructions starts nothing")

	require.NoError(t, m.Connect(ctx))
	assert.Equal(t, []mcp.ServerInstructions{
		{Server: "a", Text: "Use a's to… [truncated]", Length: 45},
		{Server: "b", Text: "b", Length: 1},
		{Server: "c", Text: "Use c for … [truncated]", Length: 12},
	}, m.Instructions(), "sorted by server, each cut at its bound, a server without any left out")

	t.Run("a server reconnected has the instructions of its new connection", func(t *testing.T) {
		require.NoError(t, m.Reconnect(ctx, "b"))
		got := m.Instructions()
		require.Len(t, got, 3)
		assert.Equal(t, mcp.ServerInstructions{Server: "b", Text: "bb", Length: 2}, got[1])
	})
	t.Run("a server lost has none while it is being reconnected", func(t *testing.T) {
		<-gone.dialed // the first
		conn, err := m.Connection(ctx, "c")
		require.NoError(t, err)
		conn.Close()
		assert.Equal(t, 2, <-gone.dialed, "the reconnection has started")
		got := m.Instructions()
		require.Len(t, got, 2)
		assert.Equal(t, "a", got[0].Server)
		assert.Equal(t, "b", got[1].Server)
	})
	t.Run("a closed Manager has none", func(t *testing.T) {
		require.NoError(t, m.Close())
		assert.Empty(t, m.Instructions())
	})
}

func TestDescriptionLimit(t *testing.T) {
	tests := []struct {
		env  string
		want int
	}{{"", 4096}, {"100", 100}, {"0", 4096}, {"-5", 4096}, {"lots", 4096}}
	for _, tt := range tests {
		t.Run("CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH="+tt.env, func(t *testing.T) {
			t.Setenv("CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH", tt.env)
			assert.Equal(t, tt.want, mcp.DescriptionLimit())
		})
	}
}
