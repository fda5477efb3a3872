//go:build unix

package safefile

import "syscall"

// openNonblock opens a file so that a named pipe in its place cannot
// block the open.
const openNonblock = syscall.O_NONBLOCK
