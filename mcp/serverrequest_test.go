package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replies collects the client's answers to the server's requests, by id
// as the client wrote it.
type replies chan *mcptest.Message

func (r replies) on(m *mcptest.Message) {
	if m.Method == "" && m.ID != nil {
		r <- m
	}
}

// A server request's id is echoed as the server wrote it (escapes,
// signs); a request whose id is neither a string nor an integer, or whose
// id or method is longer than 256 bytes, is skipped, and the connection
// goes on.
func TestTheServersRequestIDsAreEchoedAsWritten(t *testing.T) {
	noLeaks(t)
	got := make(replies, 16)
	lines := []string{
		`{"jsonrpc":"2.0","id":"a\u0062","method":"ping"}`,
		`{"jsonrpc":"2.0","id":-7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"ok","method":7}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"long-method","method":"` + strings.Repeat("m", 300) + `"}`,
		`{"jsonrpc":"2.0","id":"7","method":"no/such"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"last","method":"ping"}`,
	}
	srv := &mcptest.Server{OnMessage: got.on}
	srv.AddTool(mcp.Tool{Name: "ask"}, func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
		for _, l := range lines {
			if err := r.Session.WriteRaw(l + "\n"); err != nil {
				return nil, err
			}
		}
		return mcptest.TextResult("asked"), nil
	})
	c := connect(t, srv.Transport())
	_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "ask", nil)
	require.NoError(t, err)

	want := []struct{ id, result, errCode string }{
		{id: `"a\u0062"`, result: `{}`},
		{id: `-7`, result: `{}`},
		{id: `"7"`, errCode: `-32601`},
		{id: `7`, result: `{}`},
		{id: `"last"`, result: `{}`},
	}
	timeout := time.After(10 * time.Second)
	for _, w := range want { // the dispatcher answers in order: "last" comes last
		select {
		case m := <-got:
			assert.Equal(t, w.id, string(m.ID))
			if w.errCode != "" {
				var e struct{ Code json.Number }
				require.NoError(t, json.Unmarshal(m.Error, &e))
				assert.Equal(t, w.errCode, e.Code.String(), "id %s", w.id)
			} else {
				assert.JSONEq(t, w.result, string(m.Result), "id %s", w.id)
			}
		case <-timeout:
			require.FailNow(t, "no reply", "waiting for id %s", w.id)
		}
	}
	_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "still here"})
	assert.NoError(t, err, "skipped lines leave the connection working")
}

// notifications/cancelled finds the request it names however the server
// spells the id: "s1" and "s\u0031" are one id.
func TestACancellationFindsItsRequestWhateverTheSpelling(t *testing.T) {
	noLeaks(t)
	started, cancelled := make(chan struct{}), make(chan struct{})
	srv := &mcptest.Server{}
	srv.AddTool(mcp.Tool{Name: "sample-then-cancel"}, func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
		if err := r.Session.WriteRaw(`{"jsonrpc":"2.0","id":"s\u0031","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}` + "\n"); err != nil {
			return nil, err
		}
		select {
		case <-started:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := r.Session.Notify("notifications/cancelled", map[string]any{"requestId": "s1"}); err != nil {
			return nil, err
		}
		return mcptest.TextResult("sent"), nil
	})
	opts := &mcp.Options{Logger: quiet, ProtocolVersion: mcp.LatestLegacyVersion, Sampling: func(ctx context.Context, _ *mcp.Connection, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}}
	c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), srv.Transport(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "sample-then-cancel", nil)
	require.NoError(t, err)
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the sampling handler was not cancelled")
	}
}
