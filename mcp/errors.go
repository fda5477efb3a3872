package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrClosed is matched (errors.Is) by every error that reports a connection
// that has ended, whether Close was called or the server went away. Such an
// error also wraps the cause, for example an [*ExitError].
var ErrClosed = errors.New("mcp: connection closed")

// ErrBadResult is matched by errors for a result that does not have the shape
// the method requires (for example a tools/call result that is null).
var ErrBadResult = errors.New("mcp: malformed result")

// Error is a JSON-RPC error returned by the server. Match it with errors.As.
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage // nil when the server sent none
}

func (e *Error) Error() string {
	return fmt.Sprintf("mcp: server error %d: %s", e.Code, e.Message)
}

// JSON-RPC error codes used by MCP.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ExitError reports a server process that exited while the connection was in
// use. Match it with errors.As; it wraps the error from exec.Cmd.Wait.
type ExitError struct {
	Code   int    // exit status, or -1 when the process was killed by a signal
	Stderr string // the last bytes the server wrote to stderr
	Err    error  // from exec.Cmd.Wait; nil for a zero exit status
}

func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString("mcp: server exited")
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	} else {
		fmt.Fprintf(&b, " with status %d", e.Code)
	}
	if tail := lastLines(e.Stderr, 3, 400); tail != "" {
		b.WriteString("; stderr: ")
		b.WriteString(tail)
	}
	return b.String()
}

func (e *ExitError) Unwrap() error { return e.Err }

// lastLines returns the last n non-empty lines of s, joined with " | ",
// keeping at most max bytes, cut between characters.
func lastLines(s string, n, max int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var kept []string
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			kept = append(kept, l)
		}
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	out := strings.Join(kept, " | ")
	if len(out) > max {
		cut := len(out) - max
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++ // never half a character
		}
		out = "…" + out[cut:]
	}
	return out
}

// MessageTooLargeError reports a message longer than the configured
// maximum (MaxMessageSize): that call fails with it, and the connection
// goes on. Match it with errors.As.
type MessageTooLargeError struct {
	Size int64 // bytes in the message
	Max  int   // the configured maximum
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("mcp: message of %d bytes exceeds the maximum of %d bytes (raise MaxMessageSize)", e.Size, e.Max)
}

// VersionError reports a server that answered initialize with a protocol
// version this client does not speak.
type VersionError struct {
	Version string // what the server answered
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("mcp: server answered with unsupported protocol version %q (supported: %s)",
		e.Version, strings.Join(supportedVersions, ", "))
}

// closedError is the error of a connection that has ended: it matches
// ErrClosed and wraps the cause.
type closedError struct{ cause error }

func (e *closedError) Error() string {
	if e.cause == nil {
		return ErrClosed.Error()
	}
	return ErrClosed.Error() + ": " + strings.TrimPrefix(e.cause.Error(), "mcp: ")
}

func (e *closedError) Is(target error) bool { return target == ErrClosed }
func (e *closedError) Unwrap() error        { return e.cause }

// wrap prefixes err with "mcp: <what>: " without repeating the "mcp: " of
// err's own message; errors.Is and errors.As see err.
func wrap(what string, err error) error {
	return &wrapped{what: what, err: err}
}

type wrapped struct {
	what string
	err  error
}

func (e *wrapped) Error() string {
	return "mcp: " + e.what + ": " + strings.TrimPrefix(e.err.Error(), "mcp: ")
}

func (e *wrapped) Unwrap() error { return e.err }
