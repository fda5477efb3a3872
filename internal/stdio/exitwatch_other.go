//go:build !linux

package stdio

// watchExit reports false: each child is waited for by a goroutine.
func watchExit(int, func()) bool { return false }
