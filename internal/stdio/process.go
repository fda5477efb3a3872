// Package stdio runs an MCP server as a child process and speaks
// newline-delimited JSON over its stdin and stdout, and ends it as the
// spec says: close stdin, wait, SIGTERM, wait, SIGKILL to its process
// group.
package stdio

import (
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

const (
	// exitGrace is how long, after the process exits, the reader of its
	// stdout has to reach its end before the pipe is closed (a grandchild
	// may hold it open forever).
	exitGrace = 25 * time.Millisecond
	// eofGrace is how long a reader that saw its stdout end gives the
	// process to exit, in the kernel, before it reports a bare EOF: once
	// the kernel says the process has exited, the reader waits for the
	// exit to be recorded, however long our goroutines take.
	eofGrace = 60 * time.Millisecond
	// drainAfterExit bounds how long, after the process exits, its stdout
	// stays open while the pipe holds bytes the reader has not taken.
	drainAfterExit = 2 * time.Second
	// maxStderrAfterExit bounds what is read of stderr once the process
	// has exited: what it wrote is in the pipe (at most the pipe's size);
	// more comes from a grandchild that holds the pipe.
	maxStderrAfterExit = 1 << 20
)

// Options configure a Process; zero fields are the defaults.
type Options struct {
	StderrTail      int           // bytes of stderr kept for Exit; zero means 16 KiB
	ShutdownTimeout time.Duration // each of Close's two waits; zero means 2 seconds
	MaxMessageSize  int           // zero means ndjson.DefaultMaxMessageSize
	Logger          *slog.Logger  // nil: slog.Default until UseLogger names one
	Closed          error         // what reads and writes fail with once closed
	// Exit is the error the process's end stands for: its exit status (-1
	// killed by a signal), the tail of its stderr, and Wait's error.
	Exit func(code int, stderr string, err error) error
}

// Start starts cmd with its stdin, stdout and stderr on pipes of its own,
// in a process group of its own unless cmd says otherwise. cmd.Stderr, if
// set, gets a copy of stderr.
func Start(cmd *exec.Cmd, o Options) (*Process, error) {
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
	enlargePipe(stdoutR, stdoutPipeSize)
	userStderr := cmd.Stderr
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	timeout := o.ShutdownTimeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = timeout
	}
	ownGroup := procgroup.Own(cmd)
	pidfd := askPidfd(cmd)
	if err := cmd.Start(); err != nil {
		closePidfd(pidfd)
		closeAll()
		cmd.Stderr = userStderr
		return nil, fmt.Errorf("mcp: start server %q: %w", cmd.Path, err)
	}
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()

	logger, late := o.Logger, (*latelog.Target)(nil)
	if logger == nil {
		logger, late = latelog.New()
	}
	tailSize := o.StderrTail
	if tailSize <= 0 {
		tailSize = 16 << 10
	}
	s := &Process{
		closed:     o.Closed,
		exit:       o.Exit,
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
	s.lines = ndjson.NewStream(pipes{stdoutR, stdinW}, ndjson.StreamOptions{
		MaxMessageSize: o.MaxMessageSize, Logger: logger.With("server", cmd.Path), Direct: stdinW, ReadFrom: stdoutR, Closed: o.Closed})
	go s.drainStderr(userStderr)
	if !watchExit(pidfd, s.wait) {
		go s.wait()
	}
	return s, nil
}

// pipes are a server's stdout and stdin as one stream.
type pipes struct{ stdout, stdin *os.File }

func (p pipes) Read(b []byte) (int, error) { return p.stdout.Read(b) }

func (p pipes) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes stdin (the server's signal to exit) and our end of stdout.
func (p pipes) Close() error {
	err := p.stdin.Close()
	p.stdout.Close()
	return err
}

func (p pipes) SetReadDeadline(t time.Time) error { return p.stdout.SetReadDeadline(t) }

// Process is a running server and the NDJSON stream over its stdin and
// stdout; see package mcp's CommandTransport for how it ends.
type Process struct {
	closed   error                                          // Options.Closed
	exit     func(code int, stderr string, err error) error // Options.Exit
	late     *latelog.Target                                // nil when CommandTransport.Logger was set
	lines    *ndjson.Stream
	cmd      *exec.Cmd
	ownGroup bool
	timeout  time.Duration
	stdoutR  *os.File
	stderrR  *os.File
	tail     *tailBuffer

	exitErr    error         // the Options.Exit of how it ended; set before exited is closed
	reaped     atomic.Bool   // set once cmd.Wait has returned
	exited     chan struct{} // closed when the process has been reaped
	waitDone   chan struct{} // closed when the wait goroutine returns
	stderrDone chan struct{}
	readEnded  chan struct{}
	readOnce   sync.Once
	closing    atomic.Bool
	closeOnce  sync.Once
	closeNow   atomic.Bool
}

func (s *Process) ReadObject(v any) error {
	return s.readErr(s.lines.ReadObject(v))
}

func (s *Process) ReadLine() ([]byte, error) {
	line, err := s.lines.ReadLine()
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, err // an interrupted read, not the end
	}
	return line, s.readErr(err)
}

func (s *Process) SetReadDeadline(t time.Time) bool { return s.lines.SetReadDeadline(t) }

// LastTop is the top level of the last line read, when it was scanned (see
// ndjson.Codec.LastTop).
func (s *Process) LastTop() (ndjson.Top, bool) { return s.lines.LastTop() }

func (s *Process) Detach() bool { return s.lines.Detach() }

// WriteLine writes a message; a failed write is reported as the process's
// exit when the process has exited, as a failed read is.
func (s *Process) WriteLine(b []byte) error {
	err := s.lines.WriteLine(b)
	if err == nil || errors.Is(err, s.closed) {
		return err
	}
	return s.exitOr(err)
}

// readErr turns the end of the server's stdout into the reason: the
// process's exit (with its stderr), once it has been reaped.
func (s *Process) readErr(err error) error {
	if err == nil {
		return nil
	}
	s.readOnce.Do(func() { close(s.readEnded) })
	return s.exitOr(err)
}

// exitOr returns the process's exit when it has exited within eofGrace,
// and err otherwise. Whether it has exited is the kernel's answer: the
// recording of the exit (its reaping, the rest of its stderr) is waited
// for however long it takes, so that a busy machine does not turn an exit
// into a bare EOF.
func (s *Process) exitOr(err error) error {
	if s.closing.Load() {
		return s.closed
	}
	timer := time.NewTimer(eofGrace)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-timer.C:
		if !s.hasExited() { // it closed its stdout and lives on
			if errors.Is(err, io.EOF) {
				return errors.New("mcp: server closed its stdout")
			}
			return err
		}
		<-s.exited // bounded: wait() has nothing left to wait for but its own work
	}
	if s.closing.Load() {
		return s.closed
	}
	return s.exitErr
}

// hasExited reports whether the process has exited, reaped or not.
func (s *Process) hasExited() bool {
	if s.reaped.Load() {
		return true
	}
	exited, known := exitedNow(s.cmd.Process.Pid)
	if !known {
		return false
	}
	return exited || s.reaped.Load() // reaped meanwhile: the pid may be another's
}

func (s *Process) WriteObject(obj any) error { return s.lines.WriteObject(obj) }

// Close shuts the server down (see CommandTransport) and returns once the
// process is reaped and every goroutine of the stream has ended.
func (s *Process) Close() error {
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

// Abort is Close without the grace periods, for a server that failed its
// handshake.
func (s *Process) Abort() error {
	s.closeNow.Store(true)
	return s.Close()
}

func (s *Process) waitExit(d time.Duration) bool {
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
func (s *Process) wait() {
	defer close(s.waitDone)
	err := s.cmd.Wait()
	s.reaped.Store(true)
	// What the process wrote to stderr is in the pipe: the drain reads it
	// and stops, even when a grandchild holds the pipe open.
	if s.stderrR.SetReadDeadline(time.Now()) != nil {
		s.stderrR.Close() // ended already, or cannot be interrupted
	}
	<-s.stderrDone
	grace := time.NewTimer(exitGrace)
	defer grace.Stop()
	s.exitErr = s.exit(s.cmd.ProcessState.ExitCode(), s.tail.String(), err)
	close(s.exited)
	// The reader gets exitGrace to reach the end of stdout; while the pipe
	// still holds what the server wrote, it gets more, up to
	// drainAfterExit, so that a reply written before the exit is not lost
	// to a reader the machine was slow to run. A grandchild that holds the
	// pipe and writes on is cut off at that bound.
	deadline := time.Now().Add(drainAfterExit)
	for {
		select {
		case <-s.readEnded:
		case <-grace.C:
			if unread(s.stdoutR) > 0 && time.Now().Before(deadline) {
				grace.Reset(exitGrace)
				continue
			}
		}
		break
	}
	s.stdoutR.Close()
}

func (s *Process) drainStderr(user io.Writer) {
	defer close(s.stderrDone)
	defer s.stderrR.Close()
	each := func(b []byte) {
		s.tail.Write(b)
		if user != nil {
			if _, werr := user.Write(b); werr != nil {
				user = nil // a failing copy must not stop the draining
			}
		}
	}
	if err := ndjson.DrainIdle(s.stderrR, each); errors.Is(err, os.ErrDeadlineExceeded) {
		// The process has exited (see wait): what it wrote is all in the pipe.
		ndjson.DrainBuffered(s.stderrR, maxStderrAfterExit, each)
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

// UseLogger makes a Process started with no Logger log through lg.
func (s *Process) UseLogger(lg *slog.Logger) { s.late.Use(lg) }

// stdoutPipeSize is how large a server's stdout pipe is made, where the
// OS allows (Linux; 64 KiB otherwise): a large result then comes in reads
// of a quarter MiB instead of 64 KiB, each a wait less for the server. It
// is a quarter of what an unprivileged process may ask for (pipe-max-size),
// so that a host of many servers stays well within the pipe memory a
// user is given (pipe-user-pages-soft, 64 MiB by default: 256 servers).
const stdoutPipeSize = 256 << 10
