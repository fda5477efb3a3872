package config_test

import (
	"fmt"
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
