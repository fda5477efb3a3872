package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConnectHandshake(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var seen []mcptest.Message
	srv := &mcptest.Server{Name: "hello", Instructions: "be nice", OnMessage: func(m *mcptest.Message) {
		mu.Lock()
		seen = append(seen, *m)
		mu.Unlock()
	}}
	c := connect(t, srv.Transport())
	init := c.InitializeResult()
	assert.Equal(t, "hello", init.ServerInfo.Name)
	assert.Equal(t, "be nice", init.Instructions)
	assert.Equal(t, mcp.LatestLegacyVersion, init.ProtocolVersion)
	assert.False(t, c.Modern())
	require.NotNil(t, init.Capabilities.Tools)

	_, err := c.Tools(ctxTimeout(t, 5*time.Second)) // a round trip orders the notification before it
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(seen), 3)
	assert.Equal(t, "server/discover", seen[0].Method, "the probe comes first")
	assert.JSONEq(t, "1", string(seen[0].ID), "request ids start at 1")
	assert.Equal(t, "ping", seen[1].Method, "with a ping, to tell a live server that ignores the probe from one still starting")
	seen = seen[2:] // a legacy server: it answered the probe with an error
	assert.Equal(t, "initialize", seen[0].Method)
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		ClientInfo      struct{ Name string }
	}
	require.NoError(t, json.Unmarshal(seen[0].Params, &p))
	assert.Equal(t, "2025-11-25", p.ProtocolVersion)
	assert.Equal(t, "mcplug", p.ClientInfo.Name)
	assert.Equal(t, "notifications/initialized", seen[1].Method)
	assert.Nil(t, seen[1].ID)
}

func TestConnectVersions(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run("the server answering "+v+" is accepted", func(t *testing.T) {
			noLeaks(t)
			c := connect(t, (&mcptest.Server{ProtocolVersion: v}).Transport())
			assert.Equal(t, v, c.InitializeResult().ProtocolVersion)
		})
	}
	t.Run("any other version is an error that closes the transport", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{ProtocolVersion: "1999-01-01"}
		_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet})
		var ve *mcp.VersionError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "1999-01-01", ve.Version)
		assert.Contains(t, err.Error(), "2025-11-25")
	})
}

func TestCallAndNotify(t *testing.T) {
	noLeaks(t)
	got := make(chan mcptest.Message, 1)
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"custom/echo":  func(s *mcptest.Session, m *mcptest.Message) { s.Reply(m.ID, m.Params) },
		"custom/event": func(s *mcptest.Session, m *mcptest.Message) { got <- *m },
	}}
	c := connect(t, srv.Transport())
	var out map[string]int
	require.NoError(t, c.Call(ctxTimeout(t, 5*time.Second), "custom/echo", map[string]int{"a": 1}, &out))
	assert.Equal(t, map[string]int{"a": 1}, out)
	require.NoError(t, c.Notify(ctxTimeout(t, 5*time.Second), "custom/event", map[string]int{"b": 2}))
	m := <-got
	assert.JSONEq(t, `{"b":2}`, string(m.Params))
	assert.Nil(t, m.ID)
}

func TestCancellation(t *testing.T) {
	noLeaks(t)
	cancelled := make(chan json.RawMessage, 1)
	requested := make(chan json.RawMessage, 1)
	srv := &mcptest.Server{
		Handlers: map[string]mcptest.Handler{
			"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
				var p struct{ Name string }
				json.Unmarshal(m.Params, &p)
				if p.Name == "hang" {
					requested <- m.ID
					return // never answers
				}
				s.Reply(m.ID, mcptest.TextResult("fine"))
			},
			"notifications/cancelled": func(s *mcptest.Session, m *mcptest.Message) { cancelled <- m.Params },
		},
	}
	c := connect(t, srv.Transport())

	start := time.Now()
	_, err := c.CallTool(ctxTimeout(t, 200*time.Millisecond), "hang", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Minute, "the server never answers: a call without its ctx waits for ever")

	id := <-requested
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	require.NoError(t, json.Unmarshal(<-cancelled, &p))
	assert.JSONEq(t, string(id), string(p.RequestID), "the server is told which request was cancelled")
	assert.NotEmpty(t, p.Reason)

	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "other", nil)
	require.NoError(t, err, "the next call still works")
	assert.Equal(t, "fine", res.Text())
}

func TestLateAndDuplicateResponsesAreDropped(t *testing.T) {
	// A cancelled call is forgotten at once; its late response, and a
	// duplicate of another, find no call and are dropped (with a debug log).
	noLeaks(t)
	var hung json.RawMessage
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		if p.Name == "hang" {
			hung = m.ID
			return
		}
		s.Reply(m.ID, mcptest.TextResult("next"))
		s.Reply(hung, mcptest.TextResult("late"))
		s.Reply(m.ID, mcptest.TextResult("again"))
	}}}
	logs := &logRecorder{}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: slog.New(logs)})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxTimeout(t, 50*time.Millisecond), "hang", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "next", nil)
	require.NoError(t, err)
	assert.Equal(t, "next", res.Text())
	require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second))) // the server wrote both strays before this answer
	assert.Equal(t, 2, logs.count("dropped a response no call waits for"))
	assert.NoError(t, c.Err())
}

// logRecorder keeps every message logged, at any level.
type logRecorder struct {
	mu     sync.Mutex
	msgs   []string
	levels []slog.Level
}

func slogOf(l *logRecorder) *slog.Logger { return slog.New(l) }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	l.levels = append(l.levels, r.Level)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }
func (l *logRecorder) contains(s string) bool             { return l.levelOf(s) != "" }

// count returns how many messages contain s.
func (l *logRecorder) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// levelOf returns the level of the first message containing s, or "".
func (l *logRecorder) levelOf(s string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, m := range l.msgs {
		if strings.Contains(m, s) {
			return l.levels[i].String()
		}
	}
	return ""
}

func TestResponsesOutOfOrder(t *testing.T) {
	noLeaks(t)
	const n = 100
	var mu sync.Mutex
	var held []*mcptest.Message
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		mu.Lock()
		held = append(held, m)
		batch := held
		if len(held) == n {
			held = nil
		}
		mu.Unlock()
		if len(batch) < n {
			return
		}
		for i := len(batch) - 1; i >= 0; i-- { // answer in reverse order
			var p struct{ Arguments struct{ Text string } }
			json.Unmarshal(batch[i].Params, &p)
			s.Reply(batch[i].ID, mcptest.TextResult(p.Arguments.Text))
		}
	}}}
	c := connect(t, srv.Transport())
	ctx := ctxTimeout(t, 10*time.Second)
	var wg sync.WaitGroup
	errs := make([]error, n)
	texts := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.CallTool(ctx, "echo", map[string]string{"text": fmt.Sprint("call-", i)})
			errs[i] = err
			if err == nil {
				texts[i] = res.Text()
			}
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprint("call-", i), texts[i], "each caller gets its own response")
	}
}

func TestCloseWithPendingCalls(t *testing.T) {
	noLeaks(t)
	const n = 5
	arrived := make(chan struct{}, n)
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(*mcptest.Session, *mcptest.Message) {
		arrived <- struct{}{}
	}}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet})
	require.NoError(t, err)
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.CallTool(context.Background(), "hang", nil)
			errs <- err
		}()
	}
	for range n {
		<-arrived
	}
	require.NoError(t, c.Close())
	for range n {
		assert.ErrorIs(t, <-errs, mcp.ErrClosed)
	}
	<-c.Done()
	assert.ErrorIs(t, c.Err(), mcp.ErrClosed)
	assert.NoError(t, c.Close(), "Close is idempotent")
	_, err = c.CallTool(context.Background(), "x", nil)
	assert.ErrorIs(t, err, mcp.ErrClosed, "a call after Close fails at once")
}

func TestConnectErrors(t *testing.T) {
	t.Run("a transport that fails to open", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := mcp.Connect(context.Background(), mcp.TransportFunc(func(context.Context) (mcp.Stream, error) {
			return nil, boom
		}), nil)
		assert.ErrorIs(t, err, boom)
		assert.True(t, strings.HasPrefix(err.Error(), "mcp: connect: "))
	})
	t.Run("a cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := mcp.Connect(ctx, (&mcptest.Server{}).Transport(), nil)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("in-memory transports connect once", func(t *testing.T) {
		noLeaks(t)
		client, server := mcp.NewInMemoryTransports()
		ss, err := server.Connect(context.Background())
		require.NoError(t, err)
		go func() { // a server made of the same stream code
			for {
				var m json.RawMessage
				if ss.ReadObject(&m) != nil {
					return
				}
			}
		}()
		cs, err := client.Connect(context.Background())
		require.NoError(t, err)
		_, err = client.Connect(context.Background())
		assert.Error(t, err)
		require.NoError(t, cs.Close())
		require.NoError(t, ss.Close())
	})
}

func TestTypedNilParams(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{"resources/list": replying(`{"resources":[]}`)}}
	c := connect(t, srv.Transport())
	_, err := c.Resources(ctxTimeout(t, 5*time.Second))
	require.NoError(t, err)
	assert.Nil(t, rec.params("resources/list")[0], "nil params are omitted, not sent as null")
}
