package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/mockllm"
)

// Print runs "claude -p hello" in dir against a Messages API mock that
// answers "ok" to every request, and returns the requests Claude Code
// sent, in order; it fails the test if claude fails or sends none. The
// user's own CLAUDE*, ANTHROPIC* and ENABLE_TOOL_SEARCH variables are left
// out, Claude Code's background traffic is off, it waits for its MCP
// servers to connect before its first request (MCP_CONNECTION_NONBLOCKING
// false: by default a server slower than the first request is "still
// connecting" and absent from it), and env is added last.
func Print(t testing.TB, claude, dir string, env ...string) []json.RawMessage {
	t.Helper()
	turns := make([]mockllm.Turn, 20)
	for i := range turns {
		turns[i] = mockllm.Turn{Text: "ok"}
	}
	mock, err := mockllm.Start(turns...)
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "hello", "--output-format", "json")
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE") && !strings.HasPrefix(kv, "ANTHROPIC") && !strings.HasPrefix(kv, "ENABLE_TOOL_SEARCH") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL="+mock.URL, "ANTHROPIC_API_KEY=sk-mcplug-test",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"MCP_CONNECTION_NONBLOCKING=false")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v: %s", err, out)
	}
	requests := mock.Requests()
	if len(requests) == 0 {
		t.Fatalf("claude -p sent nothing: %s", out)
	}
	return requests
}
