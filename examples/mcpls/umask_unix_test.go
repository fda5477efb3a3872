//go:build unix

package main

import "syscall"

// setUmask sets the process's umask and returns what restores it.
func setUmask(mask int) (restore func()) {
	old := syscall.Umask(mask)
	return func() { syscall.Umask(old) }
}
