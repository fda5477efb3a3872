package mcp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quicTransport is a transport of this test file alone: a fake server
// over a network this package does not know, that says what it reaches.
type quicTransport struct{ srv *mcptest.Server }

func (q quicTransport) Connect(ctx context.Context) (mcp.Stream, error) {
	return q.srv.Transport().Connect(ctx)
}

func (quicTransport) DescribeTransport() (network, address string, port int) {
	return "quic", "192.0.2.7", 4433
}

var _ mcp.TransportDescriber = quicTransport{}

// opsSeen is an Observer that keeps the Operations it sees.
type opsSeen struct {
	mu  sync.Mutex
	ops []mcp.Operation
}

func (o *opsSeen) StartOperation(ctx context.Context, op *mcp.Operation) (context.Context, map[string]string, func(mcp.Outcome)) {
	o.mu.Lock()
	o.ops = append(o.ops, *op)
	o.mu.Unlock()
	return ctx, nil, func(mcp.Outcome) {}
}
func (o *opsSeen) StartHandler(ctx context.Context, op *mcp.Operation, meta map[string]string) (context.Context, func(mcp.Outcome)) {
	return ctx, func(mcp.Outcome) {}
}
func (o *opsSeen) StartSession(op *mcp.Operation) func(error) { return func(error) {} }

func TestATransportOfAProgramsOwnWorksWithTheManagerAndTheObserver(t *testing.T) {
	noLeaks(t)
	obs := &opsSeen{}
	m := newManager(t, nil, &mcp.ManagerOptions{Observer: obs})
	require.NoError(t, m.Add("q", quicTransport{&mcptest.Server{}}))
	ctx := ctxTimeout(t, 10*time.Second)
	res, err := m.CallTool(ctx, "mcp__q__add", map[string]any{"a": 17, "b": 25})
	require.NoError(t, err)
	assert.Equal(t, "42", res.Text())
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var call *mcp.Operation
	for i := range obs.ops {
		if obs.ops[i].Method == "tools/call" {
			call = &obs.ops[i]
		}
	}
	require.NotNil(t, call)
	assert.Equal(t, "quic", call.Transport)
	assert.Equal(t, "192.0.2.7", call.Address)
	assert.Equal(t, 4433, call.Port)
	assert.Equal(t, "q", call.Server)
}
