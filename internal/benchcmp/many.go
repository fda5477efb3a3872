package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mcplug/mcplug/internal/toolfixtures"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// The many-servers check: every tool list of the fixtures served by a
// small stdio server of its own (a Python process, or this program
// started again), all connected through one Manager with its defaults
// (each server's start bounded by 15 s) while busy loops load every core,
// as a host starting with a large config on a busy machine does.

// toolServerPy answers initialize, ping and tools/list from the fixture
// file it is given, and ignores notifications.
const toolServerPy = `import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    m = msg.get("method")
    if m == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "fixture", "version": "1"}}
    elif m == "tools/list":
        result = {"tools": tools}
    elif m == "ping":
        result = {}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no such method"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
`

// runMany connects a server for each fixture through one Manager while
// load busy loops run, rounds times, and prints how long it took and how
// many connected.
func runMany(exe, kind, dir, claude string, load, rounds int) error {
	if dir == "" {
		dir = toolfixtures.Dir()
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no fixtures in %s", dir)
	}
	slices.Sort(files)
	script := filepath.Join(os.TempDir(), fmt.Sprintf("benchcmp-toolserver-%d.py", os.Getpid()))
	if err := os.WriteFile(script, []byte(toolServerPy), 0o600); err != nil {
		return err
	}
	defer os.Remove(script)
	command := func(file string) *exec.Cmd {
		if kind == "go" {
			return exec.Command(exe, "serve-tools", file)
		}
		return exec.Command("python3", script, file)
	}

	var spinners []*exec.Cmd
	for range load {
		c := exec.Command(exe, "spin")
		if err := c.Start(); err != nil {
			return err
		}
		spinners = append(spinners, c)
	}
	defer func() {
		for _, c := range spinners {
			c.Process.Kill()
			c.Wait()
		}
	}()

	fmt.Printf("%s, %d cores, %s; %d %s stdio servers through one Manager (its defaults) while %d busy loops run\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.Version(), len(files), kind, load)
	fmt.Println("| round | client | connected | failed | time | first error |")
	fmt.Println("|---|---|---|---|---|---|")
	for round := range rounds {
		if claude != "" {
			connected, took, err := claudeList(claude, files, command)
			first := ""
			if err != nil {
				first = oneLine(err.Error())
			}
			fmt.Printf("| %d | Claude Code | %d | %d | %.1f s | %s |\n", round+1, connected, len(files)-connected, took.Seconds(), first)
		}
		m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: quiet})
		for _, f := range files {
			if err := m.Add(strings.TrimSuffix(filepath.Base(f), ".json"), &mcp.CommandTransport{Command: command(f)}); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		start := time.Now()
		err := m.Connect(ctx)
		took := time.Since(start)
		cancel()
		connected := 0
		for _, st := range m.Status() {
			if st.State == mcp.StateConnected {
				connected++
			}
		}
		first := ""
		if err != nil {
			var joined interface{ Unwrap() []error }
			if errors.As(err, &joined) && len(joined.Unwrap()) > 0 {
				err = joined.Unwrap()[0]
			}
			first = oneLine(err.Error())
		}
		m.Close()
		fmt.Printf("| %d | mcplug | %d | %d | %.1f s | %s |\n", round+1, connected, len(files)-connected, took.Seconds(), first)
	}
	return nil
}

// spin is a busy loop, for ten minutes at most.
func spin() {
	end := time.Now().Add(10 * time.Minute)
	for n := 0; ; n++ {
		if n%(1<<20) == 0 && time.Now().After(end) {
			return
		}
	}
}

// serveTools serves the tool list of a fixture file over stdio.
func serveTools(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var fixture struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		return err
	}
	srv := &mcptest.Server{Name: filepath.Base(file), Tools: fixture.Tools}
	return srv.Serve(os.Stdin, os.Stdout)
}

// claudeList runs Claude Code's "claude mcp list" (the executable claude)
// on a user config of the same servers, in a home of its own, and counts
// the servers it connected.
func claudeList(claude string, files []string, command func(string) *exec.Cmd) (connected int, took time.Duration, err error) {
	home, err := os.MkdirTemp("", "benchcmp-claude-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(home)
	servers := map[string]any{}
	for _, f := range files {
		c := command(f)
		servers[strings.TrimSuffix(filepath.Base(f), ".json")] = map[string]any{"type": "stdio", "command": c.Path, "args": c.Args[1:]}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers, "hasCompletedOnboarding": true})
	if err != nil {
		return 0, 0, err
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600); err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "mcp", "list")
	cmd.Dir = home
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE") && !strings.HasPrefix(kv, "ANTHROPIC") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took = time.Since(start)
	connected = strings.Count(string(out), "✔ Connected")
	if err != nil {
		err = fmt.Errorf("%w: %s", err, lastLine(string(out)))
	}
	return connected, took, err
}
