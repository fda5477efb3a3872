//go:build unix

package config

import (
	"fmt"
	"os"
	"syscall"
)

// ownedByUserOrRoot reports whether the user running the program, or
// root, owns the file of info.
func ownedByUserOrRoot(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return st.Uid == 0 || int(st.Uid) == os.Geteuid()
}

func ownerOf(info os.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("uid %d", st.Uid)
	}
	return "unknown"
}
