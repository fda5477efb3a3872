package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Errors a caller matches with errors.Is.
var (
	// ErrClosed: the connection has ended, by Close or because the server
	// went away; the error wraps the cause (an [*ExitError], say).
	ErrClosed = errors.New("mcp: connection closed")
	// ErrBadResult: a result without the shape its method requires (a
	// tools/call result that is null, say).
	ErrBadResult = errors.New("mcp: malformed result")
	// ErrInputRounds: the server kept asking for input past the bound of
	// one call, 8 rounds or 64 answers (multi round-trips and the call's
	// task's input requests together).
	ErrInputRounds = errors.New("mcp: the server kept asking for input (too many rounds)")
	// ErrNoRoots: SetRoots on a connection made without Options.Roots,
	// which does not offer roots.
	ErrNoRoots = errors.New("mcp: the connection does not offer roots (set Options.Roots)")
	// ErrNoTaskSupport: StartToolTask of a call that cannot be a task (a
	// 2025-11-25 server that offers no tool tasks, a tool whose
	// execution.taskSupport is absent or "forbidden", or tasks turned off
	// in Options); nothing is sent.
	ErrNoTaskSupport = errors.New("mcp: the call cannot run as a task")
	// ErrTaskCancelled: a task the server reports cancelled.
	ErrTaskCancelled = errors.New("mcp: the task was cancelled")
	// ErrUnknownTool: Manager.CallTool of a name no server exposes.
	ErrUnknownTool = errors.New("mcp: unknown tool")
	// ErrUnknownRef: a Manager method given a prompt or resource name no
	// server has.
	ErrUnknownRef = errors.New("mcp: no server has that prompt or resource")
)

// JSON-RPC error codes: those of JSON-RPC, then MCP's own.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeServerBusy                      = -32000 // the answer to a server request past Options.MaxServerRequests
	CodeResourceNotFound                = -32002 // an unknown resource in 2025-11-25 (2026-07-28: CodeInvalidParams)
	CodeHeaderMismatch                  = -32020 // 2026-07-28
	CodeMissingRequiredClientCapability = -32021 // 2026-07-28
	CodeUnsupportedProtocolVersion      = -32022 // 2026-07-28
)

// Error is a JSON-RPC error returned by the server. Match it with errors.As.
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage // nil when the server sent none
}

func (e *Error) Error() string {
	return fmt.Sprintf("mcp: server error %d: %s", e.Code, e.Message)
}

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

// MessageTooLargeError reports a message longer than MaxMessageSize:
// that call fails with it, and the connection goes on.
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

// badResult is a result that does not decode: it matches ErrBadResult.
type badResult struct{ err error }

func (e *badResult) Error() string { return ErrBadResult.Error() + ": " + e.err.Error() }

func (e *badResult) Is(target error) bool { return target == ErrBadResult }

func (e *badResult) Unwrap() error { return e.err }

// handlerError is the JSON-RPC error a handler's Go error becomes: an
// *Error as is, anything else as an internal error.
func handlerError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// requireObject reports an error unless b is a JSON object.
func requireObject(b []byte) error {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	if i < len(b) && b[i] == '{' {
		return nil
	}
	return fmt.Errorf("%w: want a JSON object, got %s", ErrBadResult, preview(b))
}

// HTTPStatusError reports an HTTP answer that is not a success. Header
// holds the answer's headers (WWW-Authenticate of a 401, Retry-After of a
// 429 or 503).
type HTTPStatusError struct {
	StatusCode int
	Body       string // the start of the body
	Header     http.Header
}

func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("mcp: http status %d", e.StatusCode)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// checkContent rejects content blocks that are not objects with a "type":
// a null item decodes to an empty block, which must not pass for an
// answer.
func checkContent(content []Content) error {
	for i := range content {
		if content[i].Type == "" {
			return fmt.Errorf("%w: content[%d] is not a content block (null, or no \"type\")", ErrBadResult, i)
		}
	}
	return nil
}
