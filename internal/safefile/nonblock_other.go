//go:build !unix

package safefile

const openNonblock = 0
