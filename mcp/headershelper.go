package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"time"
)

// Bounds on a headersHelper command.
var (
	headersHelperTimeout   = 10 * time.Second
	maxHeadersHelperOutput = 64 << 10
)

// ErrHeadersHelper is matched by the error of a server whose headersHelper
// could not give its headers: it failed, printed no JSON object of
// strings, printed more than 64 KiB, did not finish within 10 seconds, or
// may not run (a project entry of a workspace that is not trusted).
var ErrHeadersHelper = errors.New("mcp: headersHelper")

// allHeaders are the entry's headers and those its headersHelper gives
// (which win). ctx bounds the helper, beside its own time bound.
func (sc *ServerConfig) allHeaders(ctx context.Context) (http.Header, error) {
	h := sc.header()
	if sc.HeadersHelper == "" {
		return h, nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w of server %q: %s", ErrHeadersHelper, sc.Name, fmt.Sprintf(format, args...))
	}
	if sc.Scope == ScopeProject && !sc.trusted {
		return nil, fail("not run: it comes with the project, and the workspace is not trusted (SaveTrust, mcpls -trust)")
	}
	ctx, cancel := context.WithTimeoutCause(ctx, headersHelperTimeout, errHelperTimeout)
	defer cancel()
	cmd := exec.Command("sh", "-c", sc.HeadersHelper)
	cmd.Dir = sc.workDir()
	group := setProcessGroup(cmd)
	out := &cappedBuffer{max: maxHeadersHelperOutput, full: func() { cancel() }}
	cmd.Stdout = out
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Start(); err != nil {
		return nil, fail("%v", err)
	}
	stop := context.AfterFunc(ctx, func() { signalGroup(cmd, group, sigKill) }) // its children too
	err := cmd.Wait()
	if !stop() {
		signalGroup(cmd, group, sigKill) // whatever it left behind
	}
	switch {
	case out.over:
		return nil, fail("printed more than %d bytes", maxHeadersHelperOutput)
	case context.Cause(ctx) == errHelperTimeout:
		return nil, fail("did not finish within %v", headersHelperTimeout)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w of server %q: %w", ErrHeadersHelper, sc.Name, ctx.Err())
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fail("exit status %d", exit.ExitCode()) // its output may hold secrets: not quoted
		}
		return nil, fail("%v", err)
	}
	var extra map[string]string
	if err := json.Unmarshal(out.b, &extra); err != nil {
		return nil, fail("it must print a JSON object of strings")
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	return h, nil
}

var errHelperTimeout = errors.New("headersHelper timed out")

// cappedBuffer keeps what is written, up to max bytes; past it, it calls
// full and fails the write.
type cappedBuffer struct {
	b    []byte
	max  int
	over bool
	full func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if len(c.b)+len(p) > c.max {
		c.over = true
		c.full()
		return 0, errors.New("output too large")
	}
	c.b = append(c.b, p...)
	return len(p), nil
}
