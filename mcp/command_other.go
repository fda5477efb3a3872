//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

var (
	sigTerm os.Signal = os.Kill // no SIGTERM: the first signal already kills
	sigKill os.Signal = os.Kill
)

func setProcessGroup(*exec.Cmd) bool { return false }

func signalGroup(cmd *exec.Cmd, _ bool, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
