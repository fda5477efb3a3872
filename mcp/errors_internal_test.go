package mcp

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestErrorsSayWhatHappenedAndKeepTheirCause(t *testing.T) {
	exit := &exec.ExitError{}
	tests := []struct {
		name string
		err  error
		text string
		is   []error // errors.Is targets it matches
	}{
		{name: "a server's JSON-RPC error", err: &Error{Code: -32601, Message: "method not found"},
			text: "mcp: server error -32601: method not found"},
		{name: "a server that exited keeps the last lines of its stderr, not the first",
			err:  &ExitError{Code: 1, Stderr: "starting\n\nnode:internal/modules\n  throw err;\nError: Cannot find module 'x'\n"},
			text: "mcp: server exited with status 1; stderr: node:internal/modules | throw err; | Error: Cannot find module 'x'"},
		{name: "a server killed by a signal names Wait's error", err: &ExitError{Code: -1, Err: exit},
			text: "mcp: server exited (" + exit.Error() + ")", is: []error{exit}},
		{name: "a message too large says how to raise the bound", err: &MessageTooLargeError{Size: 70 << 20, Max: 64 << 20},
			text: "mcp: message of 73400320 bytes exceeds the maximum of 67108864 bytes (raise MaxMessageSize)"},
		{name: "a version this client does not speak lists those it does", err: &VersionError{Version: "1999-01-01"},
			text: `mcp: server answered with unsupported protocol version "1999-01-01" (supported: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)`},
		{name: "an ended connection matches ErrClosed and wraps its cause once",
			err:  &closedError{cause: &ExitError{Code: 2}},
			text: "mcp: connection closed: server exited with status 2", is: []error{ErrClosed}},
		{name: "a wrapped error is prefixed once", err: wrap("tools/call", &closedError{}),
			text: "mcp: tools/call: connection closed", is: []error{ErrClosed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.text, tt.err.Error())
			for _, target := range tt.is {
				assert.ErrorIs(t, tt.err, target)
			}
		})
	}
	t.Run("a closed connection's cause is found with errors.As", func(t *testing.T) {
		var exitErr *ExitError
		assert.True(t, errors.As(wrap("ping", &closedError{cause: &ExitError{Code: 3}}), &exitErr))
		assert.Equal(t, 3, exitErr.Code)
	})
	t.Run("a stderr tail is bounded", func(t *testing.T) {
		tail := lastLines(strings.Repeat("x", 1000), 3, 400)
		assert.Equal(t, "…"+strings.Repeat("x", 400), tail)
	})
	t.Run("a stderr tail is cut between characters", func(t *testing.T) {
		tail := lastLines(strings.Repeat("é", 300), 3, 401) // 600 bytes; 401 would split an é
		assert.True(t, utf8.ValidString(tail), "%q", tail)
		assert.Equal(t, "…"+strings.Repeat("é", 200), tail)
	})
}
