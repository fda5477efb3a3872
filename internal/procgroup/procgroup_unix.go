//go:build unix

// Package procgroup runs a child in a process group of its own, so that
// ending it ends what it started too (npx, uvx, a shell's children).
package procgroup

import (
	"os"
	"os/exec"
	"syscall"
)

// The signals that end a child: Term asks, Kill does not.
var (
	Term os.Signal = syscall.SIGTERM
	Kill os.Signal = syscall.SIGKILL
)

// Own puts cmd in a new process group, unless the caller already chose a
// session or group. It reports whether the group is cmd's own.
func Own(cmd *exec.Cmd) bool {
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

// Signal sends sig to cmd's process group when group (Own said it is
// cmd's own), else to cmd's process alone.
func Signal(cmd *exec.Cmd, group bool, sig os.Signal) {
	if cmd.Process == nil {
		return
	}
	if s, ok := sig.(syscall.Signal); ok && group {
		_ = syscall.Kill(-cmd.Process.Pid, s)
		return
	}
	_ = cmd.Process.Signal(sig)
}
