package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leadNext makes the next call on c read its own answer: the background
// reader is kept from taking over between calls, and a ping leaves the
// stream without a reader.
func leadNext(t *testing.T, c *mcp.Connection) {
	t.Helper()
	mcp.SetIdleRead(c, time.Hour)
	require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second)))
}

func TestACallThatReadsCanBeCancelled(t *testing.T) {
	// The call reads the stream itself when its ctx ends, in the middle of a
	// line: the call returns at once, and the line is read whole afterwards.
	noLeaks(t)
	halfSent, resume := make(chan struct{}), make(chan struct{})
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"split in two"}}` + "\n"
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		s.WriteRaw(note[:40]) // net.Pipe: returns once the client has read it
		close(halfSent)
		<-resume
		s.WriteRaw(note[40:])
		s.Reply(m.ID, mcptest.TextResult("too late"))
	}}}
	logs := make(chan *mcp.LoggingMessage, 1)
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger:         quiet,
		LoggingMessage: func(_ *mcp.Connection, m *mcp.LoggingMessage) { logs <- m },
	})
	require.NoError(t, err)
	defer c.Close()
	leadNext(t, c)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "x", nil)
		done <- err
	}()
	<-halfSent
	require.True(t, mcp.CallReads(c), "the call reads its own answer")
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	assert.False(t, mcp.CallReads(c), "the call let go of reading")

	close(resume)
	select {
	case m := <-logs:
		assert.Equal(t, mcp.LevelInfo, m.Level)
		assert.JSONEq(t, `"split in two"`, string(m.Data))
	case <-time.After(5 * time.Second):
		t.Fatal("the line split by the interruption was lost")
	}
	require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second)), "the connection goes on")
}

func TestACallThatReadsServesTheServer(t *testing.T) {
	// While a call reads, the server's requests and notifications reach the
	// client's handlers in order, and other calls get their answers.
	noLeaks(t)
	var order []string
	var mu sync.Mutex
	record := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	rootsAnswered := make(chan struct{})
	srv := &mcptest.Server{
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Notify("notifications/resources/updated", map[string]any{"uri": "a"})
			s.Request("r1", "roots/list", nil)
			s.Notify("notifications/resources/updated", map[string]any{"uri": "b"})
			go func() { // the answer to roots/list comes before the call's
				<-rootsAnswered
				s.Reply(m.ID, mcptest.TextResult("done"))
			}()
		}},
		OnMessage: func(m *mcptest.Message) {
			if m.Method == "" && string(m.ID) == `"r1"` {
				record("roots answered")
				close(rootsAnswered)
			}
		},
	}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger:          quiet,
		Roots:           []mcp.Root{{URI: "file:///tmp"}},
		ResourceUpdated: func(_ *mcp.Connection, uri string) { record("updated " + uri) },
	})
	require.NoError(t, err)
	defer c.Close()
	leadNext(t, c)

	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text())
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 3
	}, 5*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "updated a", order[0])
	assert.Contains(t, order[1:], "updated b")
	assert.Contains(t, order[1:], "roots answered")
}

func TestManyCallersGetTheirOwnAnswers(t *testing.T) {
	// Callers take turns reading; some give up half-way. Every call that
	// returns a result has its own, and the connection stays usable.
	for _, tr := range []struct {
		name string
		new  func() mcp.Transport
	}{
		{"in memory", func() mcp.Transport { return (&mcptest.Server{}).Transport() }},
		{"over stdio", func() mcp.Transport { return child("basic") }},
	} {
		t.Run(tr.name, func(t *testing.T) {
			noLeaks(t)
			c := connect(t, tr.new())
			var wg sync.WaitGroup
			var mu sync.Mutex
			answered, gaveUp := 0, 0
			for g := range 16 {
				wg.Go(func() {
					for i := range 40 {
						ctx, cancel := context.WithCancel(context.Background())
						if i%5 == g%5 {
							ctx, cancel = context.WithTimeout(context.Background(), time.Duration(i*7)*time.Microsecond)
						}
						text := fmt.Sprintf("caller %d call %d", g, i)
						res, err := c.CallTool(ctx, "echo", map[string]string{"text": text})
						cancel()
						mu.Lock()
						if err == nil {
							answered++
							assert.Equal(t, text, res.Text())
						} else {
							gaveUp++
							assert.ErrorIs(t, err, context.DeadlineExceeded)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			assert.Equal(t, 16*40, answered+gaveUp)
			assert.GreaterOrEqual(t, answered, 16*32)
			require.NoError(t, c.Ping(ctxTimeout(t, 5*time.Second)))
		})
	}
}

func TestAReadingCallSeesTheServerExit(t *testing.T) {
	// The call that reads is the one to find the server gone: it fails with
	// the exit, and so does every later call.
	noLeaks(t)
	tr := child("crash-on-call")
	c := connect(t, tr)
	leadNext(t, c)
	_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "crash", nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, mcp.ErrClosed)
	var exit *mcp.ExitError
	require.True(t, errors.As(err, &exit), "got %v", err)
	assert.Equal(t, 2, exit.Code)
	assert.Contains(t, exit.Stderr, "panic: boom")
	_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "echo", map[string]string{"text": "x"})
	assert.ErrorIs(t, err, mcp.ErrClosed)
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not end")
	}
}

func TestTheServerIsReadPromptlyAfterALongCall(t *testing.T) {
	// While one call reads for long, the background reader looks less and
	// less often; when the call lets go, it is woken, so what the server
	// sends next is served at once, not after the reader's long sleep.
	noLeaks(t)
	release := make(chan struct{})
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
		<-release
		s.Reply(m.ID, mcptest.TextResult("done"))
		s.Notify("notifications/resources/updated", map[string]any{"uri": "after"})
	}}}
	updated := make(chan time.Time, 1)
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger:          quiet,
		ResourceUpdated: func(*mcp.Connection, string) { updated <- time.Now() },
	})
	require.NoError(t, err)
	defer c.Close()
	leadNext(t, c)

	returned := make(chan time.Time, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "x", nil)
		assert.NoError(t, err)
		returned <- time.Now()
	}()
	require.Eventually(t, func() bool { return mcp.CallReads(c) }, 5*time.Second, time.Millisecond)
	mcp.SetIdleRead(c, time.Millisecond) // as usual from here on
	require.Eventually(t, func() bool { return mcp.BackgroundSleep(c) >= 500*time.Millisecond },
		10*time.Second, time.Millisecond, "the background reader backs off while the call reads")
	close(release)
	end := <-returned
	select {
	case at := <-updated:
		assert.Less(t, at.Sub(end), 250*time.Millisecond, "the notification after the answer waited for the background reader's sleep")
	case <-time.After(5 * time.Second):
		t.Fatal("the notification after the call was never served")
	}
}
