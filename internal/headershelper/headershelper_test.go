//go:build unix

package headershelper

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunGivesThePrintedHeadersWithinItsBounds(t *testing.T) {
	tests := []struct {
		name, command string
		want          map[string]string
		err           string
	}{
		{name: "a JSON object of strings", command: `echo '{"Authorization":"Bearer t","X-Team":"go"}'`,
			want: map[string]string{"Authorization": "Bearer t", "X-Team": "go"}},
		{name: "it runs in the folder given", command: `printf '{"Dir":"%s"}' "$(basename "$PWD")"`, want: map[string]string{"Dir": "headers"}},
		{name: "a failure is its status, never its output", command: `echo 'secret-token'; exit 3`, err: "exit status 3"},
		{name: "anything but an object of strings", command: `echo '{"n": 1}'`, err: "JSON object of strings"},
		{name: "more output than the bound", command: `head -c 70000 /dev/zero | tr '\0' x`, err: "printed more than 65536 bytes"},
	}
	dir := t.TempDir() + "/headers"
	require.NoError(t, os.Mkdir(dir, 0o700))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Run(context.Background(), tt.command, dir)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.NotContains(t, err.Error(), "secret-token")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("past the time bound, with a child that keeps the pipe open", func(t *testing.T) {
		// Only this case runs with a short bound: the others must not
		// depend on how fast sh starts on a loaded machine.
		old := Timeout
		Timeout = 200 * time.Millisecond
		t.Cleanup(func() { Timeout = old })
		_, err := Run(context.Background(), `sleep 30 & sleep 30`, dir)
		assert.ErrorContains(t, err, "did not finish within 200ms")
	})
	t.Run("the caller's ctx ends it too", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Run(ctx, "sleep 30", dir)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("no error quotes the output", func(t *testing.T) {
		_, err := Run(context.Background(), `echo '{"Authorization": 42}' ; echo secret-token`, dir)
		require.Error(t, err)
		assert.False(t, strings.Contains(err.Error(), "secret-token"))
	})
}
