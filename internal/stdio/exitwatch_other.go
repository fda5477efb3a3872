//go:build !linux

package stdio

import "os/exec"

func askPidfd(*exec.Cmd) *int { return nil }

func closePidfd(*int) {}

// watchExit reports false: each child is waited for by a goroutine.
func watchExit(*int, func()) bool { return false }

// exitedNow cannot tell.
func exitedNow(int) (exited, known bool) { return false, false }
