// Package headershelper runs a config entry's headersHelper: a shell
// command whose standard output, a JSON object of strings, gives more
// headers for a remote server. Its output may hold secrets: no error
// quotes it.
package headershelper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/mcplug/mcplug/internal/procgroup"
)

// Bounds on a run: Timeout (tests lower it) and MaxOutput bytes of
// standard output.
var Timeout = 10 * time.Second

const MaxOutput = 64 << 10

var errTimeout = errors.New("headersHelper timed out")

// Run runs command with sh -c in dir and returns the headers it printed.
// It is bounded by ctx, Timeout and MaxOutput; at any bound, and when it
// ends, the command's process group is killed, so that nothing it started
// lives on.
func Run(ctx context.Context, command, dir string) (map[string]string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, Timeout, errTimeout)
	defer cancel()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	group := procgroup.Own(cmd)
	out := &cappedBuffer{max: MaxOutput, full: cancel}
	cmd.Stdout = out
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { procgroup.Signal(cmd, group, procgroup.Kill) }) // its children too
	err := cmd.Wait()
	stop()
	procgroup.Signal(cmd, group, procgroup.Kill) // whatever it left behind, also after a normal exit
	switch {
	case out.over:
		return nil, fmt.Errorf("printed more than %d bytes", MaxOutput)
	case context.Cause(ctx) == errTimeout:
		return nil, fmt.Errorf("did not finish within %v", Timeout)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("exit status %d", exit.ExitCode()) // its output may hold secrets: not quoted
		}
		return nil, err
	}
	var headers map[string]string
	if err := json.Unmarshal(out.b, &headers); err != nil {
		return nil, errors.New("it must print a JSON object of strings")
	}
	return headers, nil
}

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
