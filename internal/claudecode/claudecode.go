// Package claudecode gives the tests that compare mcplug with Claude Code
// its executable, installed from npm into the user's cache.
package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Version is the Claude Code release the config semantics are checked
// against.
const Version = "2.1.332"

// Binary returns Claude Code's executable, as $MCPLUG_CLAUDE_CODE names
// it, or installs it from npm into the user's cache when that is "1".
// Without the variable, the test is skipped.
func Binary(t testing.TB) string {
	t.Helper()
	v := os.Getenv("MCPLUG_CLAUDE_CODE")
	switch v {
	case "":
		t.Skip("set MCPLUG_CLAUDE_CODE=1 to install Claude Code " + Version + " from npm, or to its claude executable")
	case "1":
	default:
		return v
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		t.Skipf("no Claude Code build for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(cache, "mcplug-claude-code-"+Version)
	// The package's own executable, from its platform package (its
	// postinstall would only link it into place).
	bin := filepath.Join(prefix, "node_modules", "@anthropic-ai", "claude-code-"+runtime.GOOS+"-"+arch, "claude")
	if _, err := os.Stat(bin); err != nil {
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts",
			"--prefix", prefix, "@anthropic-ai/claude-code@"+Version)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install: %v: %s", err, out)
		}
	}
	return bin
}
