package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run(args, &stdout, &stderr), "%v", args)
		out := stdout.String()
		for _, name := range order {
			assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(name)+`\s+[A-Z]`, out, "%v lists %s with a line", args, name)
		}
		assert.Contains(t, out, "-trust", "%v shows the listing's flags", args)
		assert.Contains(t, out, "-C DIR", "%v says every command takes -C", args)
		assert.Empty(t, stderr.String())
	}
}

func TestEachCommandPrintsItsUsage(t *testing.T) {
	for _, name := range order {
		if name == "help" {
			continue
		}
		for _, args := range [][]string{{"help", name}, {name, "-h"}, {name, "--help"}} {
			var stdout, stderr bytes.Buffer
			require.Equal(t, 0, run(args, &stdout, &stderr), "%v: %s", args, stderr.String())
			out := stdout.String()
			assert.Contains(t, out, "Usage: mcpls ", "%v", args)
			assert.Regexp(t, `(?m)^  -C (DIR|directory)\b`, out, "%v documents -C", args)
			assert.Empty(t, stderr.String(), "%v", args)
		}
	}
}

func TestAnUnknownCommandIsAnError(t *testing.T) {
	w := newWorkspace(t)
	for _, args := range [][]string{{"nope"}, {"help", "nope"}, {"lst", "-v"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, run(args, &stdout, &stderr), "%v", args)
		name := args[0]
		if name == "help" {
			name = args[1]
		}
		assert.Contains(t, stderr.String(), `unknown command "`+name+`"`, "%v", args)
		assert.Contains(t, stderr.String(), "reset-project-choices", "%v lists the commands", args)
		assert.Empty(t, stdout.String(), "%v: nothing listed", args)
	}
	code, _, stderr := w.mcpls(t, "", "-v", "add", "x", "y")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "a command's name comes first")
	assert.NoFileExists(t, filepath.Join(w.home, ".claude.json"), "nothing written")
}

// entry is the server name of the local scope of w's ~/.claude.json, or
// "" when it has none.
func (w *workspace) entry(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, ".claude.json"))
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(t, err)
	var f struct {
		Projects map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	e := f.Projects[w.project].MCPServers[name]
	if e == nil {
		e = f.MCPServers[name]
	}
	if e == nil {
		return ""
	}
	var c bytes.Buffer
	require.NoError(t, json.Compact(&c, e))
	return c.String()
}

// The command lines of Claude Code's `claude mcp add`, as its parser
// (commander.js) reads them; TestWritesAgreeWithClaudeCode runs them
// against Claude Code itself. w.mcpls puts -C after the command's name.
func TestCommandLinesReadAsClaudeCodeReadsThem(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		code  int
		entry string // of the first argument after the options, "" for none
		says  string // in stderr (or stdout, for a usage)
	}{
		{"a command's own option without -- is refused", []string{"add", "foo2", "npx", "-y", "bar"}, 2, "",
			"unknown option -y (a server's own options go after --: mcpls add foo2 -- npx -y bar)"},
		{"after -- it is the command's", []string{"add", "foo2", "--", "npx", "-y", "bar"}, 0,
			`{"type":"stdio","command":"npx","args":["-y","bar"],"env":{}}`, ""},
		{"options after the name and the command", []string{"add", "n", "cmd", "-e", "K=v", "-s", "user"}, 0,
			`{"type":"stdio","command":"cmd","args":[],"env":{"K":"v"}}`, ""},
		{"-e takes the words after it", []string{"add", "n", "cmd", "-e", "K=v", "L=w"}, 0,
			`{"type":"stdio","command":"cmd","args":[],"env":{"K":"v","L":"w"}}`, ""},
		{"-e before the name takes the name too", []string{"add", "-e", "K=v", "n", "cmd"}, 2, "", "missing NAME"},
		{"a value in the same word", []string{"add", "-suser", "n", "cmd"}, 0, `{"type":"stdio","command":"cmd","args":[],"env":{}}`, ""},
		{"a value after =", []string{"add", "--env=K=v", "n", "--", "x"}, 0, `{"type":"stdio","command":"x","args":[],"env":{"K":"v"}}`, ""},
		{"an option without its value", []string{"add", "n", "cmd", "-s"}, 2, "", "option -s, --scope needs a value"},
		{"a shortened option", []string{"add", "--tr", "http", "n", "https://x.example"}, 2, "", "unknown option --tr"},
		{"a negative number is an option", []string{"add", "n", "cmd", "-1"}, 2, "", "unknown option -1"},
		{"a dash alone is an argument", []string{"add", "n", "cmd", "-", "x"}, 0, `{"type":"stdio","command":"cmd","args":["-","x"],"env":{}}`, ""},
		{"--help prints the usage", []string{"add", "n", "cmd", "--help"}, 0, "", "Usage: mcpls add"},
		{"-h after an unknown option too", []string{"add", "n", "cmd", "-x", "-h"}, 0, "", "Usage: mcpls add"},
		{"--help after -- is the command's", []string{"add", "n", "--", "cmd", "--help"}, 0, `{"type":"stdio","command":"cmd","args":["--help"],"env":{}}`, ""},
		{"streamable-http is http", []string{"add", "-t", "streamable-http", "n", "https://x.example"}, 0, `{"type":"http","url":"https://x.example"}`, ""},
		{"arguments a remote server does not take are left unused", []string{"add", "-t", "http", "n", "https://x.example", "extra"}, 0,
			`{"type":"http","url":"https://x.example"}`, "arguments left unused"},
		{"an OAuth client", []string{"add", "-t", "http", "--client-id", "abc", "--callback-port", "3000", "n", "https://x.example"}, 0,
			`{"type":"http","url":"https://x.example","oauth":{"clientId":"abc","callbackPort":3000}}`, ""},
		{"a callback port out of range", []string{"add", "-t", "http", "--callback-port", "65536", "n", "https://x.example"}, 2, "", "1 to 65535"},
		{"a client secret mcpls cannot keep", []string{"add", "-t", "http", "--client-id", "abc", "--client-secret", "n", "https://x.example"}, 2, "", "--client-secret is not taken"},
		{"OAuth options of a stdio server are ignored", []string{"add", "--client-id", "abc", "n", "--", "x"}, 0,
			`{"type":"stdio","command":"x","args":[],"env":{}}`, "ignored for stdio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			code, stdout, stderr := w.mcpls(t, "", tt.args...)
			assert.Equal(t, tt.code, code, "%s%s", stdout, stderr)
			assert.Equal(t, tt.entry, w.entry(t, "n")+w.entry(t, "foo2"))
			assert.Contains(t, stderr+stdout, tt.says)
		})
	}
}

func TestAddJSONReadsStandardInput(t *testing.T) {
	entry := `{"command": "node", "args": ["s.js"], "env": {"TOKEN": "${TOKEN}"}}`
	tests := []struct {
		name, input string
		code        int
		says        string
	}{
		{"an entry", entry, 0, "Added stdio MCP server n to local config"},
		{"an entry of exactly 1 MiB", entry + strings.Repeat(" ", maxStdinJSON-len(entry)), 0, "Added stdio"},
		{"nothing", "", 1, "there is no JSON on standard input"},
		{"white space", " \n\t", 1, "there is no JSON on standard input"},
		{"past 1 MiB", entry + strings.Repeat(" ", maxStdinJSON-len(entry)+1), 1, "over the limit of 1048576 bytes"},
		{"not JSON", "{nope", 1, "Invalid configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			code, stdout, stderr := w.mcpls(t, tt.input, "add-json", "n", "-")
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stdout+stderr, tt.says)
			if tt.code == 0 {
				assert.Equal(t, `{"command":"node","args":["s.js"],"env":{"TOKEN":"${TOKEN}"}}`, w.entry(t, "n"))
			} else {
				assert.Empty(t, w.entry(t, "n"), "nothing written")
			}
		})
	}
	t.Run("from a pipe", func(t *testing.T) {
		w := newWorkspace(t)
		r, pw, err := os.Pipe()
		require.NoError(t, err)
		go func() { pw.WriteString(entry); pw.Close() }()
		defer r.Close()
		old := stdin
		stdin = r
		defer func() { stdin = old }()
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"add-json", "-C", w.project, "n", "-"}, &stdout, &stderr), stderr.String())
		assert.Contains(t, w.entry(t, "n"), `"TOKEN":"${TOKEN}"`)
	})
}

// The usages in docs/manager.md are the program's, word for word: each
// block after a line "<!-- mcpls help [COMMAND] -->" is what `mcpls help
// [COMMAND]` prints.
func TestTheDocsShowTheHelpAsItIs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "manager.md"))
	require.NoError(t, err)
	marker := regexp.MustCompile("(?m)^<!-- (mcpls help[a-z -]*) -->\n```\n((?s:.*?))```\n")
	found := marker.FindAllSubmatch(b, -1)
	require.NotEmpty(t, found, "docs/manager.md shows mcpls's help")
	seen := map[string]bool{}
	for _, m := range found {
		words := strings.Fields(string(m[1]))
		seen[strings.Join(words, " ")] = true
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run(words[1:], &stdout, &stderr), "%s: %s", m[1], stderr.String())
		assert.Equal(t, "$ "+string(m[1])+"\n"+stdout.String(), string(m[2]), "docs/manager.md's %q is not what it prints", m[1])
	}
	for _, want := range []string{"mcpls help", "mcpls help add", "mcpls help add-json"} {
		assert.True(t, seen[want], "docs/manager.md shows %q", want)
	}
}
