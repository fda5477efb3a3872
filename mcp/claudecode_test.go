package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/managedpath"
	"github.com/mcplug/mcplug/internal/testdir"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/internal/claudecode"
)

// claudeCodeVersion is the Claude Code release the config semantics are
// checked against.
const claudeCodeVersion = claudecode.Version

func claudeBinary(t *testing.T) string { return claudecode.Binary(t) }

// A ccCase is one config set-up, seen by Claude Code and by mcplug.
type ccCase struct {
	name string
	// files maps a path to its content: "home/…", "root/…" (the git work
	// tree), "root/sub/…", "parent/…" (the folder holding root). In
	// content, BIN is a command that serves MCP, ENV its environment,
	// ROOT, SUB and PARENT the folders, HTTP and HTTPAUTH URLs of MCP
	// servers over HTTP (the second wants "Authorization: Bearer ok").
	files map[string]string
	// policy is the organisation's allowedMcpServers and
	// deniedMcpServers, as JSON (PORT in it is the HTTP servers' port).
	// mcplug reads it from managed-settings.json; Claude Code from the
	// user's ~/.claude/settings.json, where it applies those lists as it
	// applies managed ones (its managed folder, /etc/claude-code, is the
	// machine's, not a test's).
	policy string
	from   string // "root" (default), "sub", or "link" (a symlink to root)
	noGit  bool
	want   map[string]string // server → connected, pending, failed, absent
	// differs names the deliberate difference (docs/manager.md, "Differences from
	// Claude Code") a case shows, if it shows one.
	differs string
	// configDir is $CLAUDE_CONFIG_DIR for both: "cfg", a folder of its own
	// (its files "cfg/…"), or "empty", set to "" (else it is unset).
	configDir string
}

func TestAgreesWithClaudeCode(t *testing.T) {
	claude := claudeBinary(t)
	httpSrv := httptest.NewServer(&mcptest.Server{})
	defer httpSrv.Close()
	authSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		(&mcptest.Server{}).ServeHTTP(w, r)
	}))
	defer authSrv.Close()
	sseSrv := legacyFake(t, "/messages?s=%d")

	ok := `{"command": "BIN", "args": ["-test.run=^$"], "env": ENV}`
	approveAll := `{"enableAllProjectMcpServers": true}`
	trustRoot := `{"projects": {"ROOT": {"hasTrustDialogAccepted": true}}}`
	// expands serves only if its first argument, after expansion, is want.
	expands := func(arg, want string) string {
		return `{"command": "sh", "args": ["-c", "test \"$1\" = '` + want + `' && exec BIN -test.run=^$", "sh", "` + arg + `"], "env": ENV}`
	}
	helper := func(helper string) string {
		return `{"type": "http", "url": "HTTPAUTH", "headersHelper": "` + helper + `"}`
	}
	port := httpSrv.URL[strings.LastIndexByte(httpSrv.URL, ':')+1:]
	servers := func(urls ...string) string {
		var b strings.Builder
		for i, u := range urls {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `"%c": {"type": "http", "url": %q}`, 'a'+i, u)
		}
		return `{"mcpServers": {` + b.String() + `}}`
	}
	cases := []ccCase{
		{name: "a user server", files: map[string]string{"home/.claude.json": `{"mcpServers": {"u": ` + ok + `}}`},
			want: map[string]string{"u": "connected"}},
		{name: "a local server", files: map[string]string{"home/.claude.json": `{"projects": {"ROOT": {"mcpServers": {"l": ` + ok + `}}}}`},
			want: map[string]string{"l": "connected"}},
		{name: "a project server nobody approved", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`},
			want: map[string]string{"p": "pending"}},
		{name: "approved by name in the user's settings", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude/settings.json": `{"enabledMcpjsonServers": ["p"]}`}, want: map[string]string{"p": "connected"}},
		{name: "all approved in the user's settings", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude/settings.json": approveAll}, want: map[string]string{"p": "connected"}},
		{name: "rejected in the user's settings", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `, "q": ` + ok + `}}`,
			"home/.claude/settings.json": `{"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["p"]}`}, want: map[string]string{"p": "absent", "q": "connected"}},
		{name: "the project's local settings, workspace not trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`}, want: map[string]string{"p": "pending"}},
		{name: "the project's local settings, workspace trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`, "home/.claude.json": trustRoot}, want: map[string]string{"p": "connected"}},
		{name: "the project's entry in ~/.claude.json, not trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude.json": `{"projects": {"ROOT": {"enabledMcpjsonServers": ["p"]}}}`}, want: map[string]string{"p": "pending"}},
		{name: "the project's entry in ~/.claude.json, trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude.json": `{"projects": {"ROOT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["p"]}}}`}, want: map[string]string{"p": "connected"}},
		{name: "trust of a parent of the root does not count", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`, "home/.claude.json": `{"projects": {"PARENT": {"hasTrustDialogAccepted": true}}}`},
			want: map[string]string{"p": "pending"}},
		{name: "a shipped trust flag does not count", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/.claude/settings.local.json": `{"hasTrustDialogAccepted": true, "enableAllProjectMcpServers": true}`, "root/.claude.json": trustRoot},
			want: map[string]string{"p": "pending"}},
		{name: "from a sub-directory of the repository", from: "sub", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude/settings.json": approveAll}, want: map[string]string{"p": "connected"}},
		{name: "a .mcp.json above the git root", files: map[string]string{"parent/.mcp.json": `{"mcpServers": {"above": ` + ok + `}}`,
			"home/.claude/settings.json": approveAll}, want: map[string]string{"above": "connected"}},
		{name: "the nearer .mcp.json wins", from: "sub", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": {"command": "/bin/false"}}}`,
			"root/sub/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`, "home/.claude/settings.json": approveAll}, want: map[string]string{"p": "connected"}},
		{name: "the local scope is keyed by the git root", from: "sub", files: map[string]string{"home/.claude.json": `{"projects": {"ROOT": {"mcpServers": {"l": ` + ok + `}}}}`},
			want: map[string]string{"l": "connected"}},
		{name: "the trust of a sub-directory's own key", from: "sub", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/sub/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`, "home/.claude.json": `{"projects": {"SUB": {"hasTrustDialogAccepted": true}}}`},
			want: map[string]string{"p": "connected"}},
		{name: "outside git, a parent's trust does not count", from: "sub", noGit: true, files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/sub/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`, "home/.claude.json": trustRoot}, want: map[string]string{"p": "pending"}},
		{name: "a symlinked directory is keyed by its real path", from: "link", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude.json": `{"projects": {"ROOT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["p"]}}}`}, want: map[string]string{"p": "connected"}},
		{name: "an unapproved project entry hides no user server", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"gh": {"command": "/bin/false"}}}`,
			"home/.claude.json": `{"mcpServers": {"gh": ` + ok + `}}`}, want: map[string]string{"gh": "connected"}},
		{name: "a rejected project entry hides no user server", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"gh": {"command": "/bin/false"}}}`,
			"home/.claude.json": `{"mcpServers": {"gh": ` + ok + `}}`, "home/.claude/settings.json": `{"disabledMcpjsonServers": ["gh"]}`}, want: map[string]string{"gh": "connected"}},
		{name: "${VAR:-d} with VAR set but empty gives the empty value", files: map[string]string{"home/.claude.json": `{"mcpServers": {"e": ` + expands("${MCPLUG_CC_EMPTY:-d}", "") + `}}`},
			want: map[string]string{"e": "connected"}},
		{name: "${VAR:-d} with VAR unset gives the default", files: map[string]string{"home/.claude.json": `{"mcpServers": {"e": ` + expands("${MCPLUG_CC_UNSET:-d}", "d") + `}}`},
			want: map[string]string{"e": "connected"}},
		{name: "${VAR} with VAR set", files: map[string]string{"home/.claude.json": `{"mcpServers": {"e": ` + expands("${MCPLUG_CC_SET}", "v") + `}}`},
			want: map[string]string{"e": "connected"}},
		{name: "${VAR} unset, without a default", files: map[string]string{"home/.claude.json": `{"mcpServers": {"e": ` + expands("${MCPLUG_CC_UNSET}", "${MCPLUG_CC_UNSET}") + `}}`},
			want: map[string]string{"e": "connected"}, differs: "an unset ${VAR} fails the server"},
		{name: "a server that exits", files: map[string]string{"home/.claude.json": `{"mcpServers": {"x": {"command": "/bin/false"}}}`},
			want: map[string]string{"x": "failed"}},
		{name: "an http server", files: map[string]string{"home/.claude.json": `{"mcpServers": {"h": {"type": "http", "url": "HTTP"}}}`},
			want: map[string]string{"h": "connected"}},
		{name: "http and sse servers nobody listens for", files: map[string]string{"home/.claude.json": `{"mcpServers": {"h": {"type": "http", "url": "http://127.0.0.1:1/mcp"}, "s": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}}`},
			want: map[string]string{"h": "failed", "s": "failed"}},
		{name: "the user's headersHelper", files: map[string]string{"home/.claude.json": `{"mcpServers": {"h": ` + helper(`echo '{\"Authorization\": \"Bearer ok\"}'`) + `}}`},
			want: map[string]string{"h": "connected"}},
		{name: "a project headersHelper, trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"h": ` + helper(`echo '{\"Authorization\": \"Bearer ok\"}'`) + `}}`,
			"home/.claude/settings.json": approveAll, "home/.claude.json": trustRoot}, want: map[string]string{"h": "connected"}},
		{name: "a project headersHelper, not trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"h": ` + helper(`echo '{\"Authorization\": \"Bearer ok\"}'`) + `}}`,
			"home/.claude/settings.json": approveAll}, want: map[string]string{"h": "failed"}},
		{name: "the user's server in a workspace not trusted runs outside it", files: map[string]string{"root/marker": "",
			"home/.claude.json": `{"mcpServers": {"w": {"command": "sh", "args": ["-c", "test -f marker && exec BIN -test.run=^$"], "env": ENV}}}`},
			want: map[string]string{"w": "connected"}, differs: "the user's servers run outside a workspace that is not trusted"},
		{name: "the user's server in a trusted workspace runs in it", files: map[string]string{"root/marker": "", "home/.claude.json": `{"projects": {"ROOT": {"hasTrustDialogAccepted": true}}, "mcpServers": {"w": {"command": "sh", "args": ["-c", "test -f marker && exec BIN -test.run=^$"], "env": ENV}}}`},
			want: map[string]string{"w": "connected"}},
		{name: "servers in ~/.claude/settings.json", files: map[string]string{"home/.claude/settings.json": `{"mcpServers": {"s": ` + ok + `}}`},
			want: map[string]string{"s": "absent"}, differs: "the seed's extra locations"},
		{name: "servers in the project's .claude/settings.json", files: map[string]string{"root/.claude/settings.json": `{"mcpServers": {"s": ` + ok + `}}`, "home/.claude/settings.json": approveAll},
			want: map[string]string{"s": "absent"}, differs: "the seed's extra locations"},
		{name: "an entry with a url and no type", files: map[string]string{"home/.claude.json": `{"mcpServers": {"h": {"url": "HTTP"}}}`},
			want: map[string]string{"h": "absent"}, differs: "url without type"},
		{name: "a flat .mcp.json", files: map[string]string{"root/.mcp.json": `{"p": ` + ok + `}`, "home/.claude/settings.json": approveAll},
			want: map[string]string{"p": "absent"}, differs: "a flat .mcp.json"},
		{name: "an entry with a cwd", files: map[string]string{"root/sub/marker": "", "home/.claude.json": `{"projects": {"ROOT": {"hasTrustDialogAccepted": true}}, "mcpServers": {"c": {"command": "sh", "args": ["-c", "test -f marker && exec BIN -test.run=^$"], "cwd": "SUB", "env": ENV}}}`},
			want: map[string]string{"c": "failed"}, differs: "cwd"},
		{name: "a rejection in the project's local settings, not trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `, "q": ` + ok + `}}`,
			"home/.claude/settings.json": approveAll, "root/.claude/settings.local.json": `{"disabledMcpjsonServers": ["p"]}`}, want: map[string]string{"p": "absent", "q": "connected"}},
		{name: "a rejection in the project's local settings against a trusted approval", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude.json": `{"projects": {"ROOT": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["p"]}}}`, "root/.claude/settings.local.json": `{"disabledMcpjsonServers": ["p"]}`},
			want: map[string]string{"p": "absent"}},
		{name: "a rejection in the project's entry of ~/.claude.json, not trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"home/.claude/settings.json": approveAll, "home/.claude.json": `{"projects": {"ROOT": {"disabledMcpjsonServers": ["p"]}}}`}, want: map[string]string{"p": "absent"}},
		{name: "approval keys in the project's .claude/settings.json, not trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `, "q": ` + ok + `}}`,
			"root/.claude/settings.json": `{"enabledMcpjsonServers": ["p"], "disabledMcpjsonServers": ["q"]}`}, want: map[string]string{"p": "pending", "q": "absent"}},
		{name: "approval keys in the project's .claude/settings.json, trusted", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`,
			"root/.claude/settings.json": `{"enabledMcpjsonServers": ["p"]}`, "home/.claude.json": trustRoot}, want: map[string]string{"p": "connected"}},
		{name: "a second command in another case", files: map[string]string{"home/.claude.json": `{"mcpServers": {"c": {"command": "/bin/false", "Command": "BIN", "Args": ["-test.run=^$"], "env": ENV}}}`},
			want: map[string]string{"c": "failed"}},
		{name: "precedence: local over project over user", files: map[string]string{"home/.claude.json": `{"mcpServers": {"x": {"command": "/bin/false"}}, "projects": {"ROOT": {"mcpServers": {"x": ` + ok + `}}}}`,
			"root/.mcp.json": `{"mcpServers": {"x": {"command": "/bin/false"}}}`, "home/.claude/settings.json": approveAll}, want: map[string]string{"x": "connected"}},
		{name: "precedence: project over user", files: map[string]string{"home/.claude.json": `{"mcpServers": {"x": {"command": "/bin/false"}}}`,
			"root/.mcp.json": `{"mcpServers": {"x": ` + ok + `}}`, "home/.claude/settings.json": approveAll}, want: map[string]string{"x": "connected"}},
		{name: "${VAR} in url and headers", files: map[string]string{"home/.claude.json": `{"mcpServers": {"h": {"type": "http", "url": "${MCPLUG_CC_URL}", "headers": {"Authorization": "Bearer ${MCPLUG_CC_TOKEN}"}}}}`},
			want: map[string]string{"h": "connected"}},
		{name: "a malformed .mcp.json", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": `, "home/.claude.json": `{"mcpServers": {"u": ` + ok + `}}`},
			want: map[string]string{"p": "absent", "u": "connected"}},
		{name: "type streamable-http", files: map[string]string{"home/.claude.json": `{"mcpServers": {"h": {"type": "streamable-http", "url": "HTTP"}}}`},
			want: map[string]string{"h": "connected"}},
		{name: "a working sse server", files: map[string]string{"home/.claude.json": `{"mcpServers": {"s": {"type": "sse", "url": "SSE"}}}`},
			want: map[string]string{"s": "connected"}},
		{name: "invalid entries", files: map[string]string{"home/.claude.json": `{"mcpServers": {"n": {"command": 5}, "t": {"type": "stdio"}, "s": "a string", "u": ` + ok + `}}`},
			want: map[string]string{"n": "absent", "t": "absent", "s": "absent", "u": "connected"}, differs: "an invalid entry is listed, failed"},
		{name: "a project server runs in the project with CLAUDE_PROJECT_DIR", files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": {"command": "sh", "args": ["-c", "test \"$CLAUDE_PROJECT_DIR\" = ROOT && test \"$(pwd -P)\" = ROOT && exec BIN -test.run=^$"], "env": ENV}}}`,
			"home/.claude/settings.json": approveAll, "home/.claude.json": trustRoot}, want: map[string]string{"p": "connected"}},
		{name: "a server inherits the environment", files: map[string]string{"home/.claude.json": `{"mcpServers": {"e": {"command": "sh", "args": ["-c", "test \"$MCPLUG_CC_SET\" = v && exec BIN -test.run=^$"], "env": ENV}}}`},
			want: map[string]string{"e": "connected"}},
		{name: "policy: a host '*' does not reach into the path, query or fragment", policy: `{"allowedMcpServers": [{"serverUrl": "http://*.corp.example/*"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://127.0.0.1:PORT/.corp.example/mcp", "http://127.0.0.1:PORT?.corp.example/mcp", "http://127.0.0.1:PORT#.corp.example/mcp")},
			want:  map[string]string{"a": "absent", "b": "absent", "c": "absent"}},
		{name: "policy: a host '*' admits a host of its domain", policy: `{"allowedMcpServers": [{"serverUrl": "http://*.0.0.1:PORT/*"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://127.0.0.1:PORT/mcp", "http://127.0.0.2:PORT/mcp")},
			want:  map[string]string{"a": "connected", "b": "absent"}},
		{name: "policy: a denied host however it is spelt", policy: `{"deniedMcpServers": [{"serverUrl": "http://localhost:PORT/*"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://LOCALHOST:PORT/mcp", "Http://localhost:PORT/mcp", "http://localhost.:PORT/mcp", "http://user@localhost:PORT/mcp", "http://localhost:PORT", "http://127.0.0.1:PORT/mcp")},
			want:  map[string]string{"a": "absent", "b": "absent", "c": "absent", "d": "absent", "e": "absent", "f": "connected"}},
		{name: "policy: a denied host on its default port", policy: `{"deniedMcpServers": [{"serverUrl": "http://localhost/*"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://localhost:80/mcp", "http://localhost/mcp")},
			want:  map[string]string{"a": "absent", "b": "absent"}},
		{name: "policy: a deny pattern without a port, against another port", policy: `{"deniedMcpServers": [{"serverUrl": "http://localhost/*"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://localhost:PORT/mcp")},
			want:  map[string]string{"a": "connected"}, differs: "a deny pattern without a port denies every port"},
		{name: "policy: an exact allowed URL and its spellings", policy: `{"allowedMcpServers": [{"serverUrl": "http://localhost:PORT/mcp"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://LocalHost:PORT/mcp", "http://localhost:PORT/mcp?x=1", "http://localhost:PORT/mcp/", "http://localhost:PORT/other/../mcp")},
			want:  map[string]string{"a": "connected", "b": "absent", "c": "absent", "d": "connected"}},
		{name: "policy: a command entry's ${VAR} is expanded", policy: `{"allowedMcpServers": [{"serverCommand": ["${MCPLUG_CC_EXE}", "-test.run=^$"]}]}`,
			files: map[string]string{"home/.claude.json": `{"mcpServers": {"a": ` + ok + `, "b": {"command": "sh", "args": ["-c", "exec BIN -test.run=^$"], "env": ENV}}}`},
			want:  map[string]string{"a": "connected", "b": "absent"}},
		{name: "policy: a deny command entry's ${VAR} is expanded", policy: `{"deniedMcpServers": [{"serverCommand": ["${MCPLUG_CC_EXE}", "-test.run=^$"]}, {"serverCommand": ["sh", "${MCPLUG_CC_SET}"]}]}`,
			files: map[string]string{"home/.claude.json": `{"mcpServers": {"a": ` + ok + `, "b": {"command": "sh", "args": ["${MCPLUG_CC_SET}"]}, "c": {"command": "sh", "args": ["-c", "exec BIN -test.run=^$"], "env": ENV}}}`},
			want:  map[string]string{"a": "absent", "b": "absent", "c": "connected"}},
		{name: "policy: a URL entry's ${VAR} is expanded", policy: `{"deniedMcpServers": [{"serverUrl": "http://${MCPLUG_CC_HOST}/*"}]}`,
			files: map[string]string{"home/.claude.json": servers("http://127.0.0.1:PORT/mcp", "http://localhost:PORT/mcp")},
			want:  map[string]string{"a": "absent", "b": "connected"}},
		{name: "policy: command entries leave a remote server to its name", policy: `{"allowedMcpServers": [{"serverCommand": ["BIN", "-test.run=^$"]}, {"serverName": "a"}]}`,
			files: map[string]string{"home/.claude.json": `{"mcpServers": {"s": ` + ok + `, "t": {"command": "sh", "args": ["-c", "exec BIN -test.run=^$"], "env": ENV}, "a": {"type": "http", "url": "HTTP"}, "b": {"type": "http", "url": "HTTP"}}}`},
			want:  map[string]string{"s": "connected", "t": "absent", "a": "connected", "b": "absent"}},
		{name: "a disabled entry", files: map[string]string{"home/.claude.json": `{"mcpServers": {"d": {"command": "BIN", "args": ["-test.run=^$"], "env": ENV, "disabled": true}}}`},
			want: map[string]string{"d": "connected"}, differs: "disabled"},
		{name: "CLAUDE_CONFIG_DIR: the user's and local servers of its .claude.json, not ~/.claude.json's", configDir: "cfg",
			files: map[string]string{"cfg/.claude.json": `{"mcpServers": {"u": ` + ok + `}, "projects": {"ROOT": {"mcpServers": {"l": ` + ok + `}}}}`,
				"home/.claude.json": `{"mcpServers": {"h": ` + ok + `}, "projects": {"ROOT": {"mcpServers": {"hl": ` + ok + `}}}}`},
			want: map[string]string{"u": "connected", "l": "connected", "h": "absent", "hl": "absent"}},
		{name: "CLAUDE_CONFIG_DIR: the approvals of its settings.json, not ~/.claude/settings.json's", configDir: "cfg",
			files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `, "q": ` + ok + `}}`,
				"cfg/settings.json": `{"enabledMcpjsonServers": ["p"]}`, "home/.claude/settings.json": `{"enabledMcpjsonServers": ["q"]}`},
			want: map[string]string{"p": "connected", "q": "pending"}},
		{name: "CLAUDE_CONFIG_DIR: the trust of its .claude.json", configDir: "cfg",
			files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`, "root/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`,
				"cfg/.claude.json": trustRoot},
			want: map[string]string{"p": "connected"}},
		{name: "CLAUDE_CONFIG_DIR: the trust of ~/.claude.json does not count", configDir: "cfg",
			files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`, "root/.claude/settings.local.json": `{"enabledMcpjsonServers": ["p"]}`,
				"home/.claude.json": trustRoot},
			want: map[string]string{"p": "pending"}},
		{name: "CLAUDE_CONFIG_DIR set but empty: the settings.json of the directory it runs in", configDir: "empty",
			files: map[string]string{"root/.mcp.json": `{"mcpServers": {"p": ` + ok + `}}`, "root/settings.json": approveAll},
			want:  map[string]string{"p": "connected"}, differs: "an empty CLAUDE_CONFIG_DIR is unset"},
	}

	t.Setenv("MCPLUG_CC_EMPTY", "")
	t.Setenv("MCPLUG_CC_SET", "v")
	t.Setenv("MCPLUG_CC_URL", authSrv.URL+"/mcp")
	t.Setenv("MCPLUG_CC_TOKEN", "ok")
	t.Setenv("MCPLUG_CC_EXE", os.Args[0])
	t.Setenv("MCPLUG_CC_HOST", "127.0.0.1:"+port)
	os.Unsetenv("MCPLUG_CC_UNSET")
	agree, differ := 0, 0
	var report []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := lay(t, tc, httpSrv.URL, authSrv.URL, sseSrv.URL)
			managed := t.TempDir()
			old := managedpath.Dir
			managedpath.Dir = managed
			t.Cleanup(func() { managedpath.Dir = old })
			if tc.policy != "" {
				policy := strings.ReplaceAll(tc.policy, "PORT", port)
				policy = strings.ReplaceAll(policy, "BIN", os.Args[0])
				testdir.Write(t, filepath.Join(managed, "managed-settings.json"), policy)
				home, _ := os.UserHomeDir()
				require.NotContains(t, tc.files, "home/.claude/settings.json", "a policy case keeps the user's settings for the policy")
				testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), policy)
			}
			theirs := claudeList(t, claude, dir)
			ours := mcplugList(t, dir)
			names := map[string]bool{}
			for n := range tc.want {
				names[n] = true
			}
			same := true
			for n := range names {
				for _, m := range []map[string]string{theirs, ours} {
					if m[n] == "" {
						m[n] = "absent"
					}
				}
				if theirs[n] != ours[n] {
					same = false
				}
				if tc.differs == "" {
					assert.Equal(t, tc.want[n], theirs[n], "Claude Code on %q (the case's expectation is stale)", n)
				}
			}
			line := fmt.Sprintf("%-70s claude %v, mcplug %v", tc.name, theirs, ours)
			switch {
			case same:
				agree++
				report = append(report, "agree  "+line)
			case tc.differs != "":
				differ++
				report = append(report, "differ "+line+" (deliberate: "+tc.differs+")")
			default:
				differ++
				report = append(report, "DIFFER "+line)
				t.Errorf("mcplug and Claude Code disagree, and docs/manager.md names no difference: Claude Code %v, mcplug %v", theirs, ours)
			}
		})
	}
	t.Logf("Claude Code %s and mcplug: %d agree / %d differ\n%s", claudeCodeVersion, agree, differ, strings.Join(report, "\n"))
	fmt.Printf("claude-code: %d agree / %d differ (all differences deliberate unless the test failed)\n", agree, differ)
}

// lay writes tc's files into a new home, root, sub and parent, points HOME
// at the home, and returns the directory to run from.
func lay(t *testing.T, tc ccCase, httpURL, authURL, sseURL string) string {
	t.Helper()
	parent, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(parent, "repo")
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	if !tc.noGit {
		out, err := exec.Command("git", "init", "-q", root).CombinedOutput()
		require.NoError(t, err, "git init: %s", out)
	}
	t.Setenv("HOME", home)
	cfg := filepath.Join(parent, "cfg")
	t.Setenv(config.ConfigDirEnv, "")
	switch tc.configDir {
	case "cfg":
		t.Setenv(config.ConfigDirEnv, cfg)
	case "":
		os.Unsetenv(config.ConfigDirEnv) // t.Setenv put it back at the end
	}
	env := fmt.Sprintf(`{%q: "basic"}`, testproc.EnvScenario)
	port := httpURL[strings.LastIndexByte(httpURL, ':')+1:]
	r := strings.NewReplacer("PORT", port, "SSE", sseURL+"/sse", "BIN", os.Args[0], "ENV", env, "SUB", sub, "ROOT", root, "PARENT", parent, "HTTPAUTH", authURL+"/mcp", "HTTP", httpURL+"/mcp")
	for path, content := range tc.files {
		base, rel, _ := strings.Cut(path, "/")
		dir := map[string]string{"home": home, "root": root, "parent": parent, "cfg": cfg}[base]
		testdir.Write(t, filepath.Join(dir, rel), r.Replace(content))
	}
	switch tc.from {
	case "sub":
		return sub
	case "link":
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(root, link))
		return link
	}
	return root
}

// claudeLine is a server's line of `claude mcp list`: "name: what - status".
var claudeLine = regexp.MustCompile(`^(\S+): .* - (✔ Connected|⏸ Pending approval|✘ Failed|! Needs authentication)`)

// claudeList runs `claude mcp list` in dir and returns each server's
// state.
func claudeList(t *testing.T, claude, dir string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "mcp", "list")
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE") && !strings.HasPrefix(kv, "ANTHROPIC") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	if dir, ok := os.LookupEnv(config.ConfigDirEnv); ok { // as lay set it
		cmd.Env = append(cmd.Env, config.ConfigDirEnv+"="+dir)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "claude mcp list: %s", out)
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := claudeLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		state := map[string]string{"✔ Connected": "connected", "⏸ Pending approval": "pending"}[m[2]]
		if state == "" {
			state = "failed"
		}
		got[m[1]] = state
	}
	t.Logf("claude mcp list:\n%s", out)
	return got
}

// mcplugList loads dir's config, connects its servers, and returns each
// server's state in Claude Code's words.
func mcplugList(t *testing.T, dir string) map[string]string {
	t.Helper()
	cfg, _ := mcp.LoadConfig(dir)
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: quiet, ConnectTimeout: 30 * time.Second, ShutdownTimeout: time.Second})
	defer m.Close()
	m.Connect(context.Background())
	got := map[string]string{}
	for _, st := range m.Status() {
		switch {
		case errors.Is(st.Err, config.ErrPolicy):
			// Claude Code leaves a server its policy refuses out of its
			// list; the Manager lists it, failed, with the rule.
		case st.State == mcp.StateConnected:
			got[st.Name] = "connected"
		case st.State == mcp.StateNeedsApproval:
			got[st.Name] = "pending"
		case st.State == mcp.StateDisabled:
		default:
			got[st.Name] = "failed"
		}
	}
	return got
}
