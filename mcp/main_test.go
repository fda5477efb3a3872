package mcp_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	testproc.Main() // serve as a child-process server when asked to
	os.Exit(m.Run())
}

var quiet = slog.New(slog.DiscardHandler)

// noLeaks fails the test if a goroutine started during it is still running
// when it ends. Call it first, so that it runs after every other cleanup.
func noLeaks(t *testing.T) {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}

// connect connects to tr and closes the connection when the test ends.
func connect(t *testing.T, tr mcp.Transport) *mcp.Connection {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, tr, &mcp.Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// child returns a CommandTransport running the named mcptest scenario as a
// child process, with short shutdown waits.
func child(scenario string, env ...string) *mcp.CommandTransport {
	return &mcp.CommandTransport{
		Command:         testproc.Command(scenario, env...),
		ShutdownTimeout: 300 * time.Millisecond,
		Logger:          quiet,
	}
}

func gone(pid int) bool { return testproc.Gone(pid) }

func pidOf(cmd *exec.Cmd) int { return cmd.Process.Pid }

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
