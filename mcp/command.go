package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplug/mcplug/internal/latelog"
	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/procgroup"
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

const (
	// exitGrace is how long, after the process exits, its pipes may still
	// deliver what it wrote before they are closed (a grandchild may hold
	// them open forever).
	exitGrace = 25 * time.Millisecond
	// eofGrace is how long a reader that saw its stdout end waits for the
	// process to exit, to report the exit instead of a bare EOF.
	eofGrace = 60 * time.Millisecond
)

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
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("mcp: stdin pipe: %w", err)
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("mcp: stdout pipe: %w", err)
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("mcp: stderr pipe: %w", err)
	}
	userStderr := cmd.Stderr
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	timeout := t.ShutdownTimeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = timeout
	}
	ownGroup := procgroup.Own(cmd)
	if err := cmd.Start(); err != nil {
		closeAll()
		cmd.Stderr = userStderr
		return nil, fmt.Errorf("mcp: start server %q: %w", cmd.Path, err)
	}
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()

	logger, late := t.Logger, (*latelog.Target)(nil)
	if logger == nil {
		logger, late = latelog.New()
	}
	tailSize := t.StderrTail
	if tailSize <= 0 {
		tailSize = 16 << 10
	}
	s := &commandStream{
		late:       late,
		cmd:        cmd,
		ownGroup:   ownGroup,
		timeout:    timeout,
		stdoutR:    stdoutR,
		stderrR:    stderrR,
		tail:       &tailBuffer{max: tailSize},
		exited:     make(chan struct{}),
		waitDone:   make(chan struct{}),
		stderrDone: make(chan struct{}),
		readEnded:  make(chan struct{}),
	}
	s.lines = newLineStreamWith(pipes{stdoutR, stdinW}, ndjson.StreamOptions{
		MaxMessageSize: t.MaxMessageSize, Logger: logger.With("server", cmd.Path), Direct: stdinW})
	go s.drainStderr(userStderr)
	go s.wait()
	return s, nil
}

// pipes are a server's stdout and stdin as one stream.
type pipes struct{ stdout, stdin *os.File }

func (p pipes) Read(b []byte) (int, error)  { return p.stdout.Read(b) }
func (p pipes) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes stdin (the server's signal to exit) and our end of stdout.
func (p pipes) Close() error {
	err := p.stdin.Close()
	p.stdout.Close()
	return err
}

func (p pipes) SetReadDeadline(t time.Time) error { return p.stdout.SetReadDeadline(t) }

// commandStream is the Stream of a running server process.
type commandStream struct {
	late     *latelog.Target // nil when CommandTransport.Logger was set
	lines    *lineStream
	cmd      *exec.Cmd
	ownGroup bool
	timeout  time.Duration
	stdoutR  *os.File
	stderrR  *os.File
	tail     *tailBuffer

	exitErr    *ExitError    // set before exited is closed
	exited     chan struct{} // closed when the process has been reaped
	waitDone   chan struct{} // closed when the wait goroutine returns
	stderrDone chan struct{}
	readEnded  chan struct{}
	readOnce   sync.Once
	closing    atomic.Bool
	closeOnce  sync.Once
	closeNow   atomic.Bool
}

func (s *commandStream) ReadObject(v any) error {
	return s.readErr(s.lines.ReadObject(v))
}

func (s *commandStream) readLine() ([]byte, error) {
	line, err := s.lines.readLine()
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, err // an interrupted read, not the end
	}
	return line, s.readErr(err)
}

func (s *commandStream) setReadDeadline(t time.Time) bool { return s.lines.setReadDeadline(t) }
func (s *commandStream) detach() bool                     { return s.lines.detach() }

// writeLine writes a message; a failed write is reported as the process's
// exit when the process has exited, as a failed read is.
func (s *commandStream) writeLine(b []byte) error {
	err := s.lines.writeLine(b)
	if err == nil || errors.Is(err, ErrClosed) {
		return err
	}
	return s.exitOr(err)
}

// readErr turns the end of the server's stdout into the reason: the
// process's exit (with its stderr), once it has been reaped.
func (s *commandStream) readErr(err error) error {
	if err == nil {
		return nil
	}
	s.readOnce.Do(func() { close(s.readEnded) })
	return s.exitOr(err)
}

// exitOr returns the process's exit when it is reaped within eofGrace,
// and err otherwise.
func (s *commandStream) exitOr(err error) error {
	if s.closing.Load() {
		return ErrClosed
	}
	timer := time.NewTimer(eofGrace)
	defer timer.Stop()
	select {
	case <-s.exited:
		if s.closing.Load() {
			return ErrClosed
		}
		return s.exitErr
	case <-timer.C:
		if errors.Is(err, io.EOF) {
			return errors.New("mcp: server closed its stdout")
		}
		return err
	}
}

func (s *commandStream) WriteObject(obj any) error { return s.lines.WriteObject(obj) }

// Close shuts the server down (see CommandTransport) and returns once the
// process is reaped and every goroutine of the stream has ended.
func (s *commandStream) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		// Close stdin (and our end of stdout): nothing more is read.
		s.lines.Close()
		s.readOnce.Do(func() { close(s.readEnded) })
		wait := s.timeout
		if s.closeNow.Load() {
			wait = 0
		}
		if !s.waitExit(wait) {
			procgroup.Signal(s.cmd, s.ownGroup, procgroup.Term)
			if !s.waitExit(wait) {
				procgroup.Signal(s.cmd, s.ownGroup, procgroup.Kill)
				<-s.exited
			}
		}
		// Children left in the server's process group die with it.
		if s.ownGroup {
			procgroup.Signal(s.cmd, true, procgroup.Kill)
		}
		<-s.waitDone
		<-s.stderrDone
	})
	return nil
}

// abort is Close without the grace periods, for a server that failed its
// handshake.
func (s *commandStream) abort() error {
	s.closeNow.Store(true)
	return s.Close()
}

func (s *commandStream) waitExit(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-s.exited:
			return true
		default:
			return false
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-s.exited:
		return true
	case <-timer.C:
		return false
	}
}

// wait reaps the process, records how it ended, and then closes the pipes
// a grandchild may still hold open.
func (s *commandStream) wait() {
	defer close(s.waitDone)
	err := s.cmd.Wait()
	grace := time.NewTimer(exitGrace)
	defer grace.Stop()
	select {
	case <-s.stderrDone:
	case <-grace.C:
		s.stderrR.Close()
		<-s.stderrDone
		grace.Reset(0)
	}
	s.exitErr = &ExitError{Code: s.cmd.ProcessState.ExitCode(), Stderr: s.tail.String(), Err: err}
	close(s.exited)
	select {
	case <-s.readEnded:
	case <-grace.C:
	}
	s.stdoutR.Close()
}

func (s *commandStream) drainStderr(user io.Writer) {
	defer close(s.stderrDone)
	defer s.stderrR.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.stderrR.Read(buf)
		if n > 0 {
			s.tail.Write(buf[:n])
			if user != nil {
				if _, werr := user.Write(buf[:n]); werr != nil {
					user = nil // a failing copy must not stop the draining
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if len(t.buf)+len(p) > 2*t.max {
		keep := t.buf[len(t.buf)-(t.max-len(p)):]
		t.buf = append(t.buf[:0], keep...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return string(b)
}

func (s *commandStream) useLogger(lg *slog.Logger) { s.late.Use(lg) }
