//go:build unix

package stdio

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errClosed = errors.New("closed")

type exited struct {
	code   int
	stderr string
}

func (e *exited) Error() string { return fmt.Sprintf("exited %d: %s", e.code, e.stderr) }

func options() Options {
	return Options{ShutdownTimeout: 200 * time.Millisecond, Closed: errClosed,
		Exit: func(code int, stderr string, err error) error { return &exited{code, stderr} }}
}

func TestAProcessThatExitsReportsItsStatusAndStderr(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", `echo '{"jsonrpc":"2.0","method":"hello"}'; echo 'boom: no config' >&2; exit 3`), options())
	require.NoError(t, err)
	var msg map[string]any
	require.NoError(t, p.ReadObject(&msg))
	assert.Equal(t, "hello", msg["method"])
	err = p.ReadObject(&msg)
	var e *exited
	require.ErrorAs(t, err, &e, "the end of stdout is the process's exit")
	assert.Equal(t, 3, e.code)
	assert.Contains(t, e.stderr, "boom: no config")
	require.NoError(t, p.Close())
	assert.ErrorIs(t, p.WriteObject(map[string]any{"jsonrpc": "2.0", "method": "late"}), errClosed)
}

func TestCloseEndsAProcessThatIgnoresStdinAndSIGTERM(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", `trap '' TERM; while :; do sleep 1; done`), options())
	require.NoError(t, err)
	require.NoError(t, p.Close()) // stdin closed, 200 ms, SIGTERM ignored, 200 ms, SIGKILL to the group
	assert.Equal(t, -1, p.cmd.ProcessState.ExitCode(), "it was killed by a signal, having ignored the others")
	var msg map[string]any
	assert.ErrorIs(t, p.ReadObject(&msg), errClosed)
}

func TestAProcessThatCannotStartSaysSo(t *testing.T) {
	_, err := Start(exec.Command("/nonexistent/server"), options())
	assert.ErrorContains(t, err, "start server")
}

// A busy machine may record an exit long after the server's stdout ended:
// the exit is reported all the same, not a bare EOF.
func TestAnExitRecordedLateIsStillTheExit(t *testing.T) {
	opts := options()
	exit := opts.Exit
	opts.Exit = func(code int, stderr string, err error) error {
		time.Sleep(4 * eofGrace) // a slow machine, not a wait for a result
		return exit(code, stderr, err)
	}
	p, err := Start(exec.Command("sh", "-c", `echo 'fatal: no token' >&2; exit 3`), opts)
	require.NoError(t, err)
	defer p.Close()
	var msg map[string]any
	err = p.ReadObject(&msg)
	var e *exited
	require.ErrorAs(t, err, &e, "the end of stdout is the process's exit")
	assert.Equal(t, 3, e.code)
	assert.Contains(t, e.stderr, "fatal: no token")
}

// What a server wrote to stderr before it exited is in its tail, however
// late the tail's reader gets to it, even while a grandchild holds the
// pipe open.
func TestStderrWrittenBeforeTheExitIsKeptHoweverLateItIsRead(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"a server alone", `echo first >&2; read x; echo 'fatal: no token' >&2; exit 3`},
		{"a server whose grandchild holds stderr", `echo first >&2; read x; echo 'fatal: no token' >&2; (sleep 60 <&- >&- &); exit 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &blockingWriter{got: make(chan struct{}), release: make(chan struct{})}
			cmd := exec.Command("sh", "-c", tt.script)
			cmd.Stderr = w
			p, err := Start(cmd, options())
			require.NoError(t, err)
			defer p.Close()
			<-w.got // the reader of stderr is held in the copy of "first"
			require.NoError(t, p.WriteLine([]byte("go\n")))
			require.Eventually(t, p.reaped.Load, time.Minute, time.Millisecond, "the server exits")
			time.Sleep(4 * exitGrace) // a slow machine, not a wait for a result
			close(w.release)
			var msg map[string]any
			var e *exited
			require.ErrorAs(t, p.ReadObject(&msg), &e)
			assert.Equal(t, 3, e.code)
			assert.Contains(t, e.stderr, "fatal: no token")
		})
	}
}

// What a server wrote to stdout before it exited is read, however late
// the reader gets to it, even while a grandchild holds the pipe open; a
// grandchild's pipe is still closed once it holds nothing unread.
func TestStdoutWrittenBeforeTheExitIsReadHoweverLateItIsRead(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", `echo '{"jsonrpc":"2.0","id":1,"result":{}}'; (sleep 60 <&- 2>&- &); exit 0`), options())
	require.NoError(t, err)
	defer p.Close()
	require.Eventually(t, p.reaped.Load, time.Minute, time.Millisecond, "the server exits")
	time.Sleep(4 * exitGrace) // a slow machine, not a wait for a result
	var msg map[string]any
	require.NoError(t, p.ReadObject(&msg), "the reply written before the exit")
	assert.EqualValues(t, 1, msg["id"])
	select {
	case <-p.waitDone: // stdout closed, though the grandchild holds it
	case <-time.After(time.Minute):
		t.Fatal("stdout was left open to the grandchild")
	}
}

// blockingWriter holds its first Write until release is closed.
type blockingWriter struct {
	got, release chan struct{}
	once         sync.Once
}

func (w *blockingWriter) Write(b []byte) (int, error) {
	w.once.Do(func() {
		close(w.got)
		<-w.release
	})
	return len(b), nil
}
