//go:build unix

package safefile

import (
	"fmt"
	"os"
	"syscall"
)

// userID is the user the files must belong to; a variable for tests.
var userID = os.Geteuid

// ownedByUser reports whether the user owns the file of info.
func ownedByUser(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == userID()
}

func ownerOf(info os.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("uid %d", st.Uid)
	}
	return "another user"
}
