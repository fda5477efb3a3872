//go:build !unix

package ndjson

import (
	"os"
	"syscall"
)

// pipeConn is nil: reads hold their buffer while they wait.
func pipeConn(*os.File) syscall.RawConn { return nil }

func rawRead(uintptr, []byte) (int, error) { return 0, syscall.EINVAL }
