//go:build !unix

package main

// setUmask: this system has no umask.
func setUmask(int) (restore func()) { return func() {} }
