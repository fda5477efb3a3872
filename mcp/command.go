package mcp

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"time"

	"github.com/mcplug/mcplug/internal/stdio"
)

// CommandTransport runs an MCP server as a child process and speaks
// newline-delimited JSON over its stdin and stdout (the stdio transport).
//
// Build Command with os/exec; Connect sets its Stdin, Stdout and Stderr
// (a Command.Stderr given gets a copy) and, on Unix, a process group of
// its own, so that Close also ends the server's children (npx, uvx). Close
// follows the spec: close stdin, wait up to ShutdownTimeout, SIGTERM, wait
// again, SIGKILL to the group, reap; it never waits on a grandchild that
// holds the pipes. A CommandTransport connects once.
type CommandTransport struct {
	Command *exec.Cmd

	// StderrTail is how many of the last bytes of stderr an ExitError
	// keeps; zero means 16 KiB. ShutdownTimeout bounds each wait of Close;
	// zero means 2 seconds. MaxMessageSize bounds one message read, in
	// bytes; zero means 64 MiB.
	StderrTail      int
	ShutdownTimeout time.Duration
	MaxMessageSize  int

	// Logger receives lines on stdout that are not messages, and the
	// transport's other diagnostics. Nil means the Connection's
	// Options.Logger.
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

func (s commandStream) writeLine(b []byte) error  { return s.WriteLine(b) }
func (s commandStream) abort() error              { return s.Abort() }
func (s commandStream) useLogger(lg *slog.Logger) { s.UseLogger(lg) }

// DescribeTransport is "pipe": a child process's stdin and stdout.
func (t *CommandTransport) DescribeTransport() (network, address string, port int) {
	return "pipe", "", 0
}

// The optional interfaces the stdio stream of a child process offers.
var (
	_ TransportDescriber = (*CommandTransport)(nil)
	_ lineIO             = commandStream{}
	_ loggerUser         = commandStream{}
	_ aborter            = commandStream{}
)
