package config_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcplug/mcplug/mcp/config"
)

// Read a config in the format Claude Code uses. Variables expand when it is
// read; a server whose variable is unset is kept, with its error, and is
// never started.
func ExampleParse() {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "files-server", "${MCPLUG_EXAMPLE_ROOT:-/tmp}"]},
		"search": {"type": "http", "url": "https://search.example/mcp", "headers": {"Authorization": "Bearer ${MCPLUG_EXAMPLE_UNSET}"}}
	}}`), "example.json")
	for _, name := range cfg.Names() {
		s := cfg.Servers[name]
		if s.Err != nil {
			fmt.Printf("%s: %v\n", name, s.Err)
			continue
		}
		fmt.Printf("%s: %s %s %v\n", name, s.Type, s.Command, s.Args)
	}
	fmt.Println("config ok:", err == nil)
	// Output:
	// files: stdio npx [-y files-server /tmp]
	// search: mcp: example.json: server "search": headers.Authorization: environment variable MCPLUG_EXAMPLE_UNSET is not set (set it, or write ${MCPLUG_EXAMPLE_UNSET:-default})
	// config ok: false
}

// A program that asks the user about a project server records the answer
// as Claude Code does; it counts once the workspace is trusted, and a
// rejection wins over every approval.
func ExampleSaveApproval() {
	home, _ := os.MkdirTemp("", "home")
	project, _ := os.MkdirTemp("", "repo")
	defer os.RemoveAll(home)
	defer os.RemoveAll(project)
	defer os.Setenv("HOME", os.Getenv("HOME"))
	os.Setenv("HOME", home)
	os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"lint": {"command": "./lint-server"}}}`), 0o644)

	if err := config.SaveApproval(project, "lint", true); err != nil {
		log.Fatal(err)
	}
	cfg, _ := config.Load(project)
	fmt.Println("untrusted:", cfg.Servers["lint"].Approval == config.Approved, cfg.WaitsForTrust("lint"))
	fmt.Println("trusted:", cfg.Trusted().Servers["lint"].Approval == config.Approved)

	config.SaveApproval(project, "lint", false)
	cfg, _ = config.Load(project)
	fmt.Println("rejected:", cfg.Trusted().Servers["lint"].Approval == config.Rejected)
	// Output:
	// untrusted: false true
	// trusted: true
	// rejected: true
}
