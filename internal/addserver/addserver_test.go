package addserver_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/addserver"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func connect(t *testing.T) *mcp.Connection {
	t.Helper()
	client, server := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- addserver.Serve(server, server); server.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.TransportFunc(func(context.Context) (mcp.Stream, error) {
		return mcp.NewStream(client), nil
	}), nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		<-done
	})
	return c
}

func TestAddServer(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) }) // runs after the connection's cleanup
	c := connect(t)
	ctx := context.Background()
	assert.Equal(t, "addserver", c.InitializeResult().ServerInfo.Name)

	tools, err := c.Tools(ctx)
	require.NoError(t, err)
	require.Len(t, tools, 1, "add and nothing else")
	assert.Equal(t, "add", tools[0].Name)

	res, err := c.CallTool(ctx, "add", map[string]float64{"a": 17, "b": 25})
	require.NoError(t, err)
	assert.Equal(t, "42", res.Text())
	assert.JSONEq(t, `{"sum":42}`, string(res.StructuredContent))

	res, err = c.CallTool(ctx, "add", map[string]float64{"a": 0.5, "b": -2})
	require.NoError(t, err)
	assert.Equal(t, "-1.5", res.Text())

	res, err = c.CallTool(ctx, "add", map[string]any{"a": 1})
	require.NoError(t, err)
	assert.True(t, res.IsError, "a missing argument is a tool error the model can read")

	res, err = c.CallTool(ctx, "add", map[string]any{"a": "one", "b": 2})
	require.NoError(t, err)
	assert.True(t, res.IsError)

	_, err = c.CallTool(ctx, "sub", nil)
	var rpcErr *mcp.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, int64(mcp.CodeInvalidParams), rpcErr.Code)

	require.NoError(t, c.Call(ctx, "ping", nil, nil))
	err = c.Call(ctx, "resources/list", nil, nil)
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, int64(mcp.CodeMethodNotFound), rpcErr.Code)
}
