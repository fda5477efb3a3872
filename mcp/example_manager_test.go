package mcp_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// Many servers, one tool list: each tool is exposed as mcp__<server>__<tool>
// and calls are routed back to its server. Servers usually come from config
// (NewManager(cfg, nil)); here two run in process.
func ExampleManager() {
	ctx := context.Background()
	m := mcp.NewManager(nil, nil)
	defer m.Close()
	m.Add("calc", (&mcptest.Server{Name: "calc"}).Transport())
	m.Add("my tools", (&mcptest.Server{Name: "other"}).Transport())

	tools, err := m.Tools(ctx) // connects both, in parallel
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name)
	}
	res, err := m.CallTool(ctx, "mcp__calc__add", map[string]int{"a": 17, "b": 25})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("17 + 25 =", res.Text())
	for _, s := range m.Status() {
		fmt.Println(s.Name, s.State, s.Tools)
	}
	// Output:
	// mcp__calc__echo
	// mcp__calc__add
	// mcp__my_tools__echo
	// mcp__my_tools__add
	// 17 + 25 = 42
	// calc connected 2
	// my tools connected 2
}

// A cloned repository's servers wait for the user. Approvals in the
// workspace's own files count only once the workspace is trusted, which
// only the user's ~/.claude.json (or the program) can say.
func ExampleLoadConfig() {
	home, _ := os.MkdirTemp("", "home")
	project, _ := os.MkdirTemp("", "repo")
	defer os.RemoveAll(home)
	defer os.RemoveAll(project)
	defer os.Setenv("HOME", os.Getenv("HOME"))
	os.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"lint": {"command": "./lint-server"}}}`), 0o644)
	// The repository approves its own server: that counts for nothing yet.
	os.WriteFile(filepath.Join(project, ".claude", "settings.local.json"), []byte(`{"enabledMcpjsonServers": ["lint"]}`), 0o644)

	cfg, _ := mcp.LoadConfig(project)
	fmt.Println("trusted:", cfg.Workspace.Trusted, "lint:", cfg.Servers["lint"].Approval == config.Approved)

	if err := config.SaveTrust(project); err != nil { // what the user's "trust this folder" does
		log.Fatal(err)
	}
	cfg, _ = mcp.LoadConfig(project)
	fmt.Println("trusted:", cfg.Workspace.Trusted, "lint:", cfg.Servers["lint"].Approval == config.Approved)
	// Output:
	// trusted: false lint: false
	// trusted: true lint: true
}
