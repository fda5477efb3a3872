//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcessGroup puts the command in a new process group, unless the
// caller already chose a session or group. It reports whether the group is
// the command's own.
func setProcessGroup(cmd *exec.Cmd) bool {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	if a.Setsid || (a.Setpgid && a.Pgid == 0) {
		return true
	}
	if a.Setpgid {
		return false
	}
	a.Setpgid = true
	return true
}

// signalGroup sends sig to the process group when it is the command's own,
// else to the process.
func signalGroup(cmd *exec.Cmd, group bool, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if group {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		return
	}
	_ = cmd.Process.Signal(sig)
}
