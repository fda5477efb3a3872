package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
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

// messageStream is a program's own Stream that offers MessageReader and
// MessageWriter, counting which methods the Connection uses.
type messageStream struct {
	inner                              mcp.Stream
	objReads, objWrites, reads, writes atomic.Int32
}

func (s *messageStream) ReadObject(v any) error {
	s.objReads.Add(1)
	return s.inner.ReadObject(v)
}

func (s *messageStream) WriteObject(obj any) error {
	s.objWrites.Add(1)
	return s.inner.WriteObject(obj)
}

func (s *messageStream) Close() error { return s.inner.Close() }

func (s *messageStream) ReadMessage() ([]byte, error) {
	s.reads.Add(1)
	var raw json.RawMessage
	err := s.inner.ReadObject(&raw)
	return raw, err
}

func (s *messageStream) WriteMessage(msg []byte) error {
	s.writes.Add(1)
	return s.inner.WriteObject(json.RawMessage(bytes.Clone(msg)))
}

var (
	_ mcp.MessageReader = (*messageStream)(nil)
	_ mcp.MessageWriter = (*messageStream)(nil)
)

// A Stream of the program's that offers MessageReader and MessageWriter
// is read and written through them alone: requests, the server's requests
// and the replies to them.
func TestAProgramsStreamIsReadAndWrittenAsMessages(t *testing.T) {
	noLeaks(t)
	srv := &mcptest.Server{}
	srv.AddTool(mcp.Tool{Name: "roots"}, func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
		roots, err := r.Roots(ctx)
		if err != nil {
			return nil, err
		}
		return mcptest.TextResult(roots[0].URI), nil
	})
	ms := &messageStream{}
	tr := mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		inner, err := srv.Transport().Connect(ctx)
		ms.inner = inner
		return ms, err
	})
	c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tr, &mcp.Options{Logger: quiet, ProtocolVersion: mcp.LatestLegacyVersion, Roots: []mcp.Root{{URI: "file:///w"}}})
	require.NoError(t, err)
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "roots", nil)
	require.NoError(t, err)
	assert.Equal(t, "file:///w", res.Content[0].Text, "the server's request was read and answered")
	require.NoError(t, c.Close())
	assert.Zero(t, ms.objReads.Load(), "no ReadObject")
	assert.Zero(t, ms.objWrites.Load(), "no WriteObject")
	assert.GreaterOrEqual(t, ms.reads.Load(), int32(3), "initialize, roots/list and tools/call read as messages")
	assert.GreaterOrEqual(t, ms.writes.Load(), int32(4), "initialize, initialized, the roots reply and tools/call written as messages")
}

// failingWrites is a message Stream whose writes fail once broken is
// closed, and whose Close waits for release: the close a write failure
// starts cannot be what ends the connection.
type failingWrites struct {
	messageStream
	broken, release chan struct{}
}

func (s *failingWrites) WriteMessage(msg []byte) error {
	select {
	case <-s.broken:
		return errors.New("broken pipe")
	default:
		return s.messageStream.WriteMessage(msg)
	}
}

func (s *failingWrites) Close() error {
	<-s.release
	return s.messageStream.Close()
}

// A failed write ends the connection before the call returns: Err says
// so, and the next call is refused at once rather than sent on it (a
// Manager then waits for the restart instead of calling a dead server).
func TestAFailedWriteEndsTheConnectionAtOnce(t *testing.T) {
	noLeaks(t)
	fw := &failingWrites{broken: make(chan struct{}), release: make(chan struct{})}
	tr := mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
		inner, err := (&mcptest.Server{}).Transport().Connect(ctx)
		fw.inner = inner
		return fw, err
	})
	c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tr, &mcp.Options{Logger: quiet})
	require.NoError(t, err)
	defer func() { close(fw.release); c.Close() }()
	close(fw.broken)
	_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "x"})
	require.ErrorIs(t, err, mcp.ErrClosed)
	assert.ErrorIs(t, c.Err(), mcp.ErrClosed, "ended when the failed call returned")
	assert.ErrorContains(t, c.Err(), "broken pipe", "with the write's error as the cause")
	_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "y"})
	assert.ErrorIs(t, err, mcp.ErrClosed)
}
