package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParseConfig: any bytes give a Config and never a panic; every entry
// either has an error or is usable, and no usable entry holds a literal
// "${" where variables expand.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"s": {"command": "run", "args": ["${HOME}"], "env": {"A": "${X:-${Y:-z}}"}}}}`))
	f.Add([]byte(`{"r": {"type": "http", "url": "https://h/${P:-mcp}?k=${K:-v}", "headers": {"A": "B ${C:-d}"}}}`))
	f.Add([]byte(`{"mcpServers": {"": {}, "x": 1, "y": {"type": "sse"}, "z": {"command": "${"}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _ := ParseConfig(bytes.NewReader(b), "fuzz.json")
		if cfg == nil {
			t.Fatal("nil Config")
		}
		for name, sc := range cfg.Servers {
			if sc.Err != nil {
				var ce *ConfigError
				if !errors.As(sc.Err, &ce) {
					t.Fatalf("server %q: error %T is not a *ConfigError", name, sc.Err)
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

// FuzzInbox: whatever a server sends over HTTP, reading it never ends the
// connection: a message that does not decode is skipped, or stands for an
// error of its call.
func FuzzInbox(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[tru]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x"}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := newInbox()
		in.put(b)
		in.put([]byte(`{"jsonrpc":"2.0","method":"after"}`))
		in.end(ErrClosed)
		var msgs []json.RawMessage
		for {
			var raw json.RawMessage
			if err := in.readObject(&raw); err != nil {
				if !errors.Is(err, ErrClosed) {
					t.Fatalf("reading ended with %v", err)
				}
				break
			}
			msgs = append(msgs, raw)
		}
		if len(msgs) == 0 || !bytes.Contains(msgs[len(msgs)-1], []byte(`"after"`)) {
			t.Fatalf("the message after %q was lost: %q", b, msgs)
		}
	})
}
