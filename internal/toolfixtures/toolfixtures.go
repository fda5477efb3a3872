// Package toolfixtures loads the tool lists of real MCP servers kept
// beside the repository (../shared/fixtures/tools, one JSON file a
// server, as it answered tools/list), for tests and benchmarks.
package toolfixtures

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/mcplug/mcplug/mcp"
)

// Server is one server's fixture.
type Server struct {
	Name  string     `json:"server"`
	Tools []mcp.Tool `json:"tools"`
}

// Dir is the fixtures' folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "fixtures", "tools")
}

// Load reads every server's fixture, sorted by name.
func Load() ([]Server, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("toolfixtures: no fixtures in %s", Dir())
	}
	var out []Server
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s Server
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("toolfixtures: %s: %w", f, err)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}

// Exposed is every tool of every server under its exposed name
// (mcp.ExposedName), as a Manager would list them.
func Exposed() ([]mcp.Tool, error) {
	servers, err := Load()
	if err != nil {
		return nil, err
	}
	var out []mcp.Tool
	for _, s := range servers {
		for _, t := range s.Tools {
			t.Name = mcp.ExposedName(s.Name, t.Name)
			out = append(out, t)
		}
	}
	return out, nil
}
