// Package managedpath is where the organisation's Claude Code policy
// lives (managed-settings.json, managed-mcp.json): /etc/claude-code on
// Linux, /Library/Application Support/ClaudeCode on macOS. It is a
// variable only for this module's tests; a program cannot move it.
package managedpath

import "runtime"

// Dir is the folder of the managed files.
var Dir = func() string {
	if runtime.GOOS == "darwin" {
		return "/Library/Application Support/ClaudeCode"
	}
	return "/etc/claude-code"
}()
