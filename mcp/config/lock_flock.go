//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package config

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockDir takes flock(2) on the open folder d without waiting.
func tryLockDir(d *os.File) (bool, error) {
	err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK), errors.Is(err, unix.EINTR):
		return false, nil
	}
	return false, &os.PathError{Op: "flock", Path: d.Name(), Err: err}
}
