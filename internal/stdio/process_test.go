//go:build unix

package stdio

import (
	"errors"
	"fmt"
	"os/exec"
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
