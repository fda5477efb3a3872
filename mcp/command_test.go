package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandServer(t *testing.T) {
	parallel(t)
	t.Run("a child process serves tools and is gone after Close", func(t *testing.T) {
		noLeaks(t)
		tr := child("basic")
		c := connect(t, tr)
		tools, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		assert.Len(t, tools, 2)
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "add", map[string]int{"a": 17, "b": 25})
		require.NoError(t, err)
		assert.Equal(t, "42", res.Text())
		require.NoError(t, c.Close())
		assert.True(t, gone(pidOf(tr.Command)), "the server process is reaped by Close")
		assert.ErrorIs(t, c.Err(), mcp.ErrClosed)
		var exit *mcp.ExitError
		assert.False(t, errors.As(c.Err(), &exit), "a server we closed did not die on its own")
	})
	t.Run("banner and log lines on stdout are skipped", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, child("noisy"))
		for range 3 {
			res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "echo", map[string]string{"text": "hi"})
			require.NoError(t, err)
			assert.Equal(t, "hi", res.Text())
		}
	})
	t.Run("a 16 MiB single-line result arrives whole", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, child("huge"))
		const size = 16 << 20
		res, err := c.CallTool(ctxTimeout(t, 60*time.Second), "big", map[string]int{"size": size})
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		assert.Len(t, res.Content[0].Text, size)
		assert.Equal(t, testproc.BigText(size), res.Content[0].Text)
	})
	t.Run("large results in a row each keep their own text", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, child("huge"))
		sizes := []int{3 << 20, 2<<20 + 1, 100, 3 << 20}
		var results []*mcp.CallToolResult
		for _, size := range sizes {
			res, err := c.CallTool(ctxTimeout(t, 30*time.Second), "big", map[string]int{"size": size})
			require.NoError(t, err)
			results = append(results, res)
		}
		for i, size := range sizes { // checked once all have arrived
			assert.True(t, results[i].Text() == testproc.BigText(size), "result %d (%d bytes) is intact", i, size)
		}
	})
	t.Run("a message past the maximum fails that call only", func(t *testing.T) {
		noLeaks(t)
		tr := child("huge")
		tr.MaxMessageSize = 1 << 20
		c := connect(t, tr)
		_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "big", map[string]int{"size": 2 << 20})
		var tl *mcp.MessageTooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, 1<<20, tl.Max)
		assert.Greater(t, tl.Size, int64(2<<20))
		assert.Contains(t, err.Error(), "MaxMessageSize")
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "big", map[string]int{"size": 100})
		require.NoError(t, err, "the connection survives")
		assert.Len(t, res.Text(), 100)
	})
	t.Run("64 MiB written to stderr while serving does not block the server", func(t *testing.T) {
		noLeaks(t)
		var copied countingWriter
		tr := child("stderr-flood")
		tr.Command.Stderr = &copied
		c := connect(t, tr)
		res, err := c.CallTool(ctxTimeout(t, 60*time.Second), "flood-done", nil)
		require.NoError(t, err)
		assert.Equal(t, "done", res.Text())
		require.NoError(t, c.Close())
		assert.Equal(t, int64(64<<20), copied.n.Load(), "stderr is also copied to Command.Stderr")
	})
}

func TestCommandServerDies(t *testing.T) {
	t.Run("exit before answering initialize fails Connect with the exit status and the stderr tail", func(t *testing.T) {
		noLeaks(t)
		tr := child("exit-before-init")
		start := time.Now()
		c, err := mcp.Connect(ctxTimeout(t, time.Minute), tr, &mcp.Options{Logger: quiet})
		require.Error(t, err)
		require.Nil(t, c)
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 3, exit.Code)
		assert.Contains(t, exit.Stderr, "fatal: API_TOKEN is not set")
		assert.Contains(t, err.Error(), "API_TOKEN is not set", "the message carries the stderr tail")
		assert.ErrorIs(t, err, mcp.ErrClosed)
		assert.True(t, gone(pidOf(tr.Command)))
		t.Logf("Connect failed after %v (including process start)", time.Since(start))
	})
	t.Run("a crash during a call fails it with the exit status and stderr", func(t *testing.T) {
		noLeaks(t)
		tr := child("crash-on-call")
		c := connect(t, tr)
		_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "crash", nil)
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit)
		assert.ErrorIs(t, err, mcp.ErrClosed)
		assert.Equal(t, 2, exit.Code)
		assert.Contains(t, exit.Stderr, "panic: boom")
		<-c.Done()
		assert.ErrorAs(t, c.Err(), &exit)
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "echo", nil)
		assert.ErrorIs(t, err, mcp.ErrClosed)
	})
	t.Run("a server that exits while a grandchild holds its stdout fails pending calls at its exit", func(t *testing.T) {
		noLeaks(t)
		pidFile := filepath.Join(t.TempDir(), "pid")
		tr := child("grandchild", testproc.EnvPIDFile+"="+pidFile)
		c := connect(t, tr)
		gc := readPID(t, pidFile)
		// The grandchild sleeps until it is killed: a call that waited for
		// the end of stdout would end with its ctx, a minute on.
		_, err := c.CallTool(ctxTimeout(t, time.Minute), "exit", nil)
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit, "the call fails with the server's exit, not at its deadline")
		assert.Equal(t, 1, exit.Code)
		assert.False(t, gone(gc), "the grandchild still held stdout when the call failed")
		require.NoError(t, c.Close())
		require.Eventually(t, func() bool { return gone(gc) }, time.Minute, 5*time.Millisecond,
			"the grandchild in the server's process group is killed")
	})
}

func TestCommandShutdown(t *testing.T) {
	parallel(t)
	t.Run("a server that ignores stdin closing and SIGTERM is killed after both grace periods", func(t *testing.T) {
		noLeaks(t)
		tr := child("stubborn")
		c := connect(t, tr)
		start := time.Now()
		closeWithin(t, c, time.Minute) // the server ignores all but SIGKILL: without it, Close would never return
		elapsed := time.Since(start)
		assert.True(t, gone(pidOf(tr.Command)))
		assert.GreaterOrEqual(t, elapsed, 2*tr.ShutdownTimeout, "stdin close and SIGTERM get their grace")
	})
	t.Run("a grandchild that keeps stdout open does not hold Close", func(t *testing.T) {
		noLeaks(t)
		pidFile := filepath.Join(t.TempDir(), "pid")
		tr := child("grandchild", testproc.EnvPIDFile+"="+pidFile)
		c := connect(t, tr)
		gc := readPID(t, pidFile)
		closeWithin(t, c, time.Minute) // the grandchild sleeps until killed: Close would never return if it waited for it
		assert.True(t, gone(pidOf(tr.Command)))
		require.Eventually(t, func() bool { return gone(gc) }, time.Minute, 5*time.Millisecond)
	})
	t.Run("a server that never answers initialize makes Connect return at its deadline", func(t *testing.T) {
		noLeaks(t)
		tr := child("never-init")
		tr.ShutdownTimeout = time.Minute // grace periods that stand for never
		start := time.Now()
		_, err := mcp.Connect(ctxTimeout(t, 500*time.Millisecond), tr, &mcp.Options{Logger: quiet})
		elapsed := time.Since(start)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, elapsed, time.Minute, "cleanup does not wait out the grace periods")
		assert.True(t, gone(pidOf(tr.Command)), "the server is killed before Connect returns")
	})
	t.Run("a server that stops reading stdin cannot hold a call past its deadline", func(t *testing.T) {
		noLeaks(t)
		tr := child("stop-reading")
		c := connect(t, tr)
		big := map[string]string{"text": strings.Repeat("a", 256<<10)} // more than a pipe holds
		start := time.Now()
		_, err := c.CallTool(ctxTimeout(t, 300*time.Millisecond), "echo", big)
		elapsed := time.Since(start)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, elapsed, time.Minute, "the call returns at its deadline, not when the server reads again (never)")
		_, err = c.CallTool(ctxTimeout(t, 100*time.Millisecond), "echo", nil)
		require.ErrorIs(t, err, context.DeadlineExceeded, "later calls time out too, they do not hang")
		require.NoError(t, c.Close())
		assert.True(t, gone(pidOf(tr.Command)))
	})
	t.Run("the Connect context ending later does not touch the connection", func(t *testing.T) {
		noLeaks(t)
		tr := child("basic")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, err := mcp.Connect(ctx, tr, &mcp.Options{Logger: quiet})
		require.NoError(t, err)
		defer c.Close()
		cancel() // the Connect context ends once the connection is up
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "add", map[string]int{"a": 1, "b": 2})
		require.NoError(t, err)
		assert.Equal(t, "3", res.Text())
		assert.False(t, gone(pidOf(tr.Command)))
	})
	t.Run("Close while calls are pending fails them and returns", func(t *testing.T) {
		noLeaks(t)
		tr := child("stop-reading")
		c := connect(t, tr)
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.CallTool(context.Background(), "echo", nil)
			}()
		}
		require.NoError(t, c.Close())
		wg.Wait()
		for _, err := range errs {
			assert.ErrorIs(t, err, mcp.ErrClosed)
		}
	})
}

func TestCommandTransportErrors(t *testing.T) {
	t.Run("a command that does not exist", func(t *testing.T) {
		tr := child("basic")
		tr.Command.Path = "/nonexistent/server"
		_, err := mcp.Connect(context.Background(), tr, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/nonexistent/server")
	})
	t.Run("a command already used", func(t *testing.T) {
		noLeaks(t)
		tr := child("basic")
		c := connect(t, tr)
		c.Close()
		_, err := mcp.Connect(context.Background(), tr, nil)
		assert.ErrorContains(t, err, "already started")
	})
}

// closeWithin closes c, failing the test if Close has not returned after
// d, a bound that stands for never.
func closeWithin(t *testing.T, c *mcp.Connection, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(d):
		t.Fatalf("Close has not returned after %v", d)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	require.NoError(t, err)
	return pid
}

type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

func TestLargeRequestsOverStdio(t *testing.T) {
	// Requests larger than a pipe holds are written in parts, whole and in
	// order, also while other callers write.
	noLeaks(t)
	c := connect(t, child("basic"))
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			text := strings.Repeat(string(rune('a'+g)), 300<<10+g)
			if g%2 == 1 {
				text = fmt.Sprintf("small %d", g)
			}
			for range 3 {
				res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]string{"text": text})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, len(text), len(res.Text()))
				assert.True(t, res.Text() == text, "caller %d got its own text back", g)
			}
		})
	}
	wg.Wait()
}
