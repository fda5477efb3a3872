package config

// The organisation's policy, as Claude Code reads it: managed settings
// (allowedMcpServers, deniedMcpServers) and managed-mcp.json, in
// /etc/claude-code on Linux and /Library/Application Support/ClaudeCode
// on macOS.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcplug/mcplug/internal/managedpath"
	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/internal/safefile"
)

// ScopeManaged is the scope of a server of the organisation's
// managed-mcp.json.
const ScopeManaged Scope = "managed"

// ErrPolicy matches the error of a server the organisation's policy does
// not allow (a Server's Err, or Add's).
var ErrPolicy = errors.New("config: not allowed by the organisation's policy")

func managedMCPFile() string      { return filepath.Join(managedpath.Dir, "managed-mcp.json") }
func managedSettingsFile() string { return filepath.Join(managedpath.Dir, "managed-settings.json") }

// PolicyEntry is one entry of allowedMcpServers or deniedMcpServers:
// exactly one of a server's name, its command line, or a URL pattern.
//
// A name is compared exactly. A command line (command and arguments) is
// compared element by element, exactly, as Claude Code compares it: each
// ${VAR} or ${VAR:-default} of the entry is expanded from the environment
// first, as a config's are, and the server's command line is taken as
// the config expands it, before a relative command is made absolute; a
// deny entry also matches the command line as the config writes it,
// ${VAR}s and all. A URL pattern is matched against the server's URL
// parsed and reduced to what names a server (see Allows); its ${VAR}s
// are expanded too.
type PolicyEntry struct {
	ServerName    string   `json:"serverName,omitempty"`
	ServerCommand []string `json:"serverCommand,omitempty"`
	ServerURL     string   `json:"serverUrl,omitempty"`
}

// Policy is the organisation's: which servers may run, and the servers it
// manages.
type Policy struct {
	// Allowed is allowedMcpServers: nil allows every server, an empty list
	// none. A stdio server must match one of its command entries when it
	// has some, else one of its names; a remote server one of its URL
	// entries when it has some, else one of its names.
	Allowed []PolicyEntry
	// Denied is deniedMcpServers: a server matching any entry never
	// runs, whatever Allowed says.
	Denied []PolicyEntry
	// Managed are the servers of managed-mcp.json, nil when there is
	// none. When there is one, it has exclusive control: only its servers
	// run, none can be added, and its own cannot be removed.
	Managed map[string]*Server
	// Files are the files the policy was read from.
	Files []string
}

// LoadPolicy reads the organisation's policy from where Claude Code reads
// it; no file means no policy (a nil Policy allows everything). A file
// that cannot be read, or is not of its shape, is an error: a policy must
// not be ignored because it is broken.
func LoadPolicy() (*Policy, error) {
	var p Policy
	b, err := safefile.Read(managedSettingsFile(), maxUserFileSize)
	if err != nil {
		return nil, &Error{File: managedSettingsFile(), Err: err}
	}
	if b != nil {
		var s struct {
			Allowed *[]PolicyEntry `json:"allowedMcpServers"`
			Denied  []PolicyEntry  `json:"deniedMcpServers"`
		}
		// By exact key, as Claude Code reads it; a key given twice is an
		// error, which allows nothing.
		if err := jsonv2.Unmarshal(b, &s); err != nil {
			return nil, &Error{File: managedSettingsFile(), Err: err}
		}
		for _, list := range [][]PolicyEntry{deref(s.Allowed), s.Denied} {
			for i, e := range list {
				if err := e.check(); err != nil {
					return nil, &Error{File: managedSettingsFile(), Err: fmt.Errorf("entry %d: %w", i, err)}
				}
			}
		}
		if s.Allowed != nil {
			p.Allowed = append([]PolicyEntry{}, *s.Allowed...)
		}
		p.Denied = s.Denied
		p.Files = append(p.Files, managedSettingsFile())
	}
	b, err = safefile.Read(managedMCPFile(), maxUserFileSize)
	if err != nil {
		return nil, &Error{File: managedMCPFile(), Err: err}
	}
	if b != nil {
		c := parseConfig(b, managedMCPFile(), false)
		if len(c.Errors) > 0 {
			return nil, c.Errors[0]
		}
		p.Managed = map[string]*Server{}
		for name, sc := range c.Servers {
			sc.Scope = ScopeManaged
			p.Managed[name] = sc
		}
		p.Files = append(p.Files, managedMCPFile())
	}
	if p.Files == nil {
		return nil, nil
	}
	return &p, nil
}

// ManagedServers returns the servers of the organisation's
// managed-mcp.json (nil when there is none).
func ManagedServers() (map[string]*Server, error) {
	p, err := LoadPolicy()
	if err != nil || p == nil {
		return nil, err
	}
	return p.Managed, nil
}

func deref(p *[]PolicyEntry) []PolicyEntry {
	if p == nil {
		return nil
	}
	return *p
}

func (e PolicyEntry) check() error {
	n := 0
	if e.ServerName != "" {
		n++
	}
	if e.ServerCommand != nil {
		n++
	}
	if e.ServerURL != "" {
		n++
	}
	if n != 1 {
		return errors.New(`an entry must have exactly one of "serverName", "serverCommand", or "serverUrl"`)
	}
	if e.ServerCommand != nil && len(e.ServerCommand) == 0 {
		return errors.New(`"serverCommand" must have at least one element (the command)`)
	}
	if e.ServerURL != "" {
		// Its shape, whatever its ${VAR}s hold.
		if _, err := parseURLPattern(blankVars(e.ServerURL)); err != nil {
			return fmt.Errorf(`"serverUrl" %q: %w`, e.ServerURL, err)
		}
	}
	return nil
}

// blankVars replaces each ${…} of s with "x".
func blankVars(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return b.String() + s
		}
		end := closingBrace(s[i+2:])
		if end < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i] + "x")
		s = s[i+2+end+1:]
	}
}

// String is the entry as the policy file writes it.
func (e PolicyEntry) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// matches reports whether the entry matches sc; deny says it is an entry
// of deniedMcpServers, which matches more (see PolicyEntry and Allows).
func (e PolicyEntry) matches(sc *Server, deny bool) bool {
	switch {
	case e.ServerName != "":
		return e.ServerName == sc.Name
	case e.ServerCommand != nil:
		if sc.Type != TypeStdio {
			return false
		}
		expanded, written := sc.policyCommand()
		entry, ok := expandEach(e.ServerCommand)
		if ok && slices.Equal(entry, expanded) {
			return true
		}
		return deny && (slices.Equal(entry, written) || slices.Equal(e.ServerCommand, written) || slices.Equal(e.ServerCommand, expanded))
	case e.ServerURL != "":
		if sc.Type == TypeStdio {
			return false
		}
		pat := e.pattern(deny)
		if pat == nil {
			return false
		}
		expanded, written := sc.policyURL()
		if u, err := parseServerURL(expanded); err == nil && pat.matches(u, deny) {
			return true
		}
		if deny && written != expanded {
			if u, err := parseServerURL(written); err == nil && pat.matches(u, deny) {
				return true
			}
		}
	}
	return false
}

// expandEach expands the ${VAR}s of a command entry from the
// environment; ok is false, and the entry returned as written, when one
// names an unset variable without a default.
func expandEach(cmd []string) (out []string, ok bool) {
	out = make([]string, len(cmd))
	for i, s := range cmd {
		x, err := expandVars(s, os.LookupEnv)
		if err != nil {
			return cmd, false
		}
		out[i] = x
	}
	return out, true
}

// pattern is the entry's URL pattern with its ${VAR}s expanded from the
// environment. A deny entry whose expansion fails (an unset variable) or
// no longer parses is taken as written; an allow entry then matches
// nothing, and nothing either when a value would reach beyond the part
// it stands in: a '*' in it, a host value with '/', '?', '#', '@' or
// '%', a path or query value with '?', '#' or "..".
func (e PolicyEntry) pattern(deny bool) *urlPattern {
	text := e.ServerURL
	if strings.Contains(text, "${") {
		x, ok := expandPattern(text)
		switch {
		case ok:
			if p, err := parseURLPattern(x); err == nil {
				return p
			}
			if !deny {
				return nil
			}
		case !deny:
			return nil
		}
	}
	p, err := parseURLPattern(text)
	if err != nil {
		return nil
	}
	return p
}

// expandPattern expands the ${VAR}s of a URL pattern; ok is false when
// one is unset without a default or its value is unsafe where it stands.
func expandPattern(s string) (string, bool) {
	// Where the authority ends in the text as written, its ${…} skipped.
	authEnd := len(s)
	if i := strings.Index(s, "://"); i >= 0 {
		for j := i + 3; j < len(s); j++ {
			if strings.HasPrefix(s[j:], "${") {
				if end := closingBrace(s[j+2:]); end >= 0 {
					j += 2 + end
					continue
				}
			}
			if strings.IndexByte("/?#", s[j]) >= 0 {
				authEnd = j
				break
			}
		}
	}
	var b strings.Builder
	at := 0
	for {
		i := strings.Index(s[at:], "${")
		if i < 0 {
			b.WriteString(s[at:])
			return b.String(), true
		}
		i += at
		end := closingBrace(s[i+2:])
		if end < 0 {
			return "", false
		}
		v, err := expandVars(s[i:i+2+end+1], os.LookupEnv)
		if err != nil || strings.ContainsRune(v, '*') || strings.IndexFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) >= 0 {
			return "", false
		}
		if i < authEnd && strings.ContainsAny(v, "/?#@%[]") || i >= authEnd && (strings.ContainsAny(v, "?#") || strings.Contains(v, "..")) {
			return "", false
		}
		b.WriteString(s[at:i] + v)
		at = i + 2 + end + 1
	}
}

// policyCommand is the command line the policy compares: as the config
// expands it (before a relative command is made absolute), and as it
// writes it.
func (sc *Server) policyCommand() (expanded, written []string) {
	if w := sc.written; w != nil {
		return w.command, w.rawCommand
	}
	cl := append([]string{sc.Command}, sc.Args...)
	return cl, cl
}

// policyURL is the URL the policy compares: as the config expands it,
// and as it writes it.
func (sc *Server) policyURL() (expanded, written string) {
	if w := sc.written; w != nil {
		return w.url, w.rawURL
	}
	return sc.URL, sc.URL
}

// Allows reports whether the policy lets sc run, and if not, why. A nil
// Policy allows everything; a server of managed-mcp.json is allowed.
//
// A serverUrl pattern is "*" (every URL) or scheme://host[:port][/path]
// [?query]; the pattern and the server's URL are each parsed and reduced
// before they are compared: scheme and host lower-cased, a host in
// another script (or in full-width letters) in its IDNA form, as the
// HTTP client dials it, one trailing dot and the default port dropped,
// percent-encoded letters and digits decoded and dot segments of the
// path resolved; user information, fragment and an IPv6 address's zone
// are not compared (none names the server). A '*' matches any run of characters within its own
// part: in the host it never reaches the path, in the path never the
// query. A pattern without a path matches every path of its host. An
// allow pattern without a port matches the default port (any port when
// its host has a '*'); without a query, a URL without one, unless its
// path ends in '*'. A deny pattern matches more, so that what it names
// cannot be reached another way: every port when it names none, every
// query when it has none, and its path with or without a trailing slash.
// A remote server's URL that cannot be parsed as the HTTP client parses
// it (a backslash, a percent-encoded host, a host that is a number but
// not a dotted IPv4 address, …) is allowed by no serverUrl entry and
// denied whenever deniedMcpServers has one.
func (p *Policy) Allows(sc *Server) (bool, string) {
	if p == nil || sc.Scope == ScopeManaged {
		return true, ""
	}
	if p.Managed != nil {
		return false, "the organisation's " + managedMCPFile() + " has exclusive control over MCP servers"
	}
	stdio := sc.Type == TypeStdio
	if !stdio && slices.ContainsFunc(p.Denied, func(e PolicyEntry) bool { return e.ServerURL != "" }) {
		u, _ := sc.policyURL()
		if _, err := parseServerURL(u); err != nil && !strings.Contains(u, "${") {
			return false, fmt.Sprintf("%v, and deniedMcpServers has serverUrl entries: a URL the policy cannot read is denied", err)
		}
	}
	for _, e := range p.Denied {
		if e.matches(sc, true) {
			return false, "deniedMcpServers has " + e.String()
		}
	}
	if p.Allowed == nil {
		return true, ""
	}
	var byKind bool
	for _, e := range p.Allowed {
		if stdio && e.ServerCommand != nil || !stdio && e.ServerURL != "" {
			byKind = true
		}
	}
	for _, e := range p.Allowed {
		if byKind && e.ServerName != "" {
			continue // with command (URL) entries, a stdio (remote) server must match one of them
		}
		if e.matches(sc, false) {
			return true, ""
		}
	}
	switch {
	case len(p.Allowed) == 0:
		return false, "allowedMcpServers is empty"
	case byKind && stdio:
		// The command only: its arguments may carry a secret.
		return false, fmt.Sprintf("allowedMcpServers has no serverCommand entry for the command %s with its %d arguments", sc.Command, len(sc.Args))
	case byKind:
		return false, "allowedMcpServers has no serverUrl entry matching " + redact.URL(sc.URL)
	}
	return false, fmt.Sprintf("allowedMcpServers does not name %q", sc.Name)
}

// apply marks the servers of c the policy does not allow (their Err
// matches ErrPolicy) and, with a managed-mcp.json, puts its servers in
// the place of all others.
func (p *Policy) apply(c *Config) {
	if p == nil {
		return
	}
	c.Policy = p
	if p.Managed != nil {
		for name := range c.Servers {
			if p.Managed[name] == nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("server %q is left out: the organisation's %s has exclusive control over MCP servers", name, managedMCPFile()))
			}
		}
		c.Servers = map[string]*Server{}
		for name, sc := range p.Managed {
			copy := *sc
			copy.trusted = true
			c.Servers[name] = &copy
		}
		return
	}
	for _, sc := range c.Servers {
		if ok, why := p.Allows(sc); !ok && sc.Err == nil {
			sc.Err = &Error{File: sc.Source, Server: sc.Name, Err: fmt.Errorf("%w: %s", ErrPolicy, why)}
		}
	}
}
