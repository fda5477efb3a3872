//go:build !unix

// Package procgroup runs a child in a process group of its own where the
// system has them; elsewhere a signal reaches the child alone.
package procgroup

import (
	"os"
	"os/exec"
)

// There is no SIGTERM: the first signal already kills.
var (
	Term os.Signal = os.Kill
	Kill os.Signal = os.Kill
)

// Own reports false: there are no process groups.
func Own(*exec.Cmd) bool { return false }

// Signal sends sig to cmd's process.
func Signal(cmd *exec.Cmd, _ bool, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
