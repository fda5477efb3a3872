package config

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParseConfig: any bytes give a Config and never a panic; every entry
// either has an error or is usable, and no usable entry holds a literal
// "${" where variables expand.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"s": {"command": "run", "args": ["${HOME}"], "env": {"A": "${X:-${Y:-z}}"}}}}`))
	f.Add([]byte(`{"r": {"type": "http", "url": "https://h/${P:-mcp}?k=${K:-v}", "headers": {"A": "B ${C:-d}"}}}`))
	f.Add([]byte(`{"mcpServers": {"": {}, "x": 1, "y": {"type": "sse"}, "z": {"command": "${"}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _ := Parse(bytes.NewReader(b), "fuzz.json")
		if cfg == nil {
			t.Fatal("nil Config")
		}
		for name, sc := range cfg.Servers {
			if sc.Err != nil {
				var ce *Error
				if !errors.As(sc.Err, &ce) {
					t.Fatalf("server %q: error %T is not a *Error", name, sc.Err)
				}
				continue
			}
			fields := append([]string{sc.Command, sc.Cwd, sc.URL}, sc.Args...)
			for _, v := range sc.Env {
				fields = append(fields, v)
			}
			for _, v := range sc.Headers {
				fields = append(fields, v)
			}
			for _, v := range fields {
				if strings.Contains(v, "${") {
					t.Fatalf("server %q: a literal ${ survived: %q", name, v)
				}
			}
			switch sc.Type {
			case TypeStdio:
				if sc.Command == "" {
					t.Fatalf("server %q: stdio without a command", name)
				}
			case TypeHTTP, TypeSSE:
				if sc.URL == "" {
					t.Fatalf("server %q: remote without a url", name)
				}
			default:
				t.Fatalf("server %q: type %q", name, sc.Type)
			}
		}
	})
}
