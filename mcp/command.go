package mcp

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"time"

	"github.com/mcplug/mcplug/internal/stdio"
)

// CommandTransport runs an MCP server as a child process and talks to it over
// its stdin and stdout (the stdio transport).
//
// The caller builds Command with os/exec (Path, Args, Env, Dir, SysProcAttr);
// Connect sets Stdin, Stdout and Stderr, and on Unix puts the process in a
// process group of its own, so that closing the connection also ends the
// server's children (npx, uvx). If Command.Stderr is set, the server's
// stderr is copied to it as well as kept in a bounded tail.
//
// Closing the Stream follows the spec: close stdin, wait up to
// ShutdownTimeout for the process to exit, send SIGTERM, wait again, then
// send SIGKILL to the process group, and reap. Close never waits on a
// grandchild that keeps the pipes open.
//
// A CommandTransport connects once: an exec.Cmd cannot be started twice.
type CommandTransport struct {
	Command *exec.Cmd

	// StderrTail is how many of the last bytes of stderr are kept for
	// errors (see ExitError). Zero means 16 KiB.
	StderrTail int

	// ShutdownTimeout bounds each of the two waits of Close (after closing
	// stdin, after SIGTERM). Zero means 2 seconds.
	ShutdownTimeout time.Duration

	// MaxMessageSize bounds one message read from the server, in bytes.
	// Zero means 64 MiB.
	MaxMessageSize int

	// Logger receives lines on stdout that are not messages, and the
	// transport's other diagnostics. Nil means the Options.Logger of the
	// Connection over it, or slog.Default() when that is not set either.
	Logger *slog.Logger
}

// Connect starts the command. ctx is checked before starting; the process
// is not tied to it.
func (t *CommandTransport) Connect(ctx context.Context) (Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := t.Command
	if cmd == nil {
		return nil, errors.New("mcp: CommandTransport.Command is nil")
	}
	if cmd.Process != nil {
		return nil, errors.New("mcp: CommandTransport.Command was already started; build a new exec.Cmd for each connection")
	}
	p, err := stdio.Start(cmd, stdio.Options{
		StderrTail:      t.StderrTail,
		ShutdownTimeout: t.ShutdownTimeout,
		MaxMessageSize:  t.MaxMessageSize,
		Logger:          t.Logger,
		Closed:          ErrClosed,
		Exit: func(code int, stderr string, err error) error {
			return &ExitError{Code: code, Stderr: stderr, Err: err}
		},
	})
	if err != nil {
		return nil, err
	}
	return commandStream{p}, nil
}

// commandStream is a running server (internal/stdio), with the optional
// methods the Connection looks for.
type commandStream struct{ *stdio.Process }

func (s commandStream) readLine() ([]byte, error)        { return s.ReadLine() }
func (s commandStream) writeLine(b []byte) error         { return s.WriteLine(b) }
func (s commandStream) setReadDeadline(t time.Time) bool { return s.SetReadDeadline(t) }
func (s commandStream) detach() bool                     { return s.Detach() }
func (s commandStream) abort() error                     { return s.Abort() }
func (s commandStream) useLogger(lg *slog.Logger)        { s.UseLogger(lg) }
