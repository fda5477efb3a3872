package config

// The organisation's policy, as Claude Code reads it: managed settings
// (allowedMcpServers, deniedMcpServers) and managed-mcp.json, in
// /etc/claude-code on Linux and /Library/Application Support/ClaudeCode
// on macOS.

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
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
// exactly one of a server's name, its command line (command and
// arguments, exactly), or a URL pattern ('*' matches any characters, dots
// too).
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
	return nil
}

// String is the entry as the policy file writes it.
func (e PolicyEntry) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

func (e PolicyEntry) matches(sc *Server) bool {
	switch {
	case e.ServerName != "":
		return e.ServerName == sc.Name
	case e.ServerCommand != nil:
		return sc.Type == TypeStdio && slices.Equal(e.ServerCommand, append([]string{sc.Command}, sc.Args...))
	case e.ServerURL != "":
		return sc.Type != TypeStdio && urlPattern(e.ServerURL).MatchString(sc.URL)
	}
	return false
}

func urlPattern(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// Allows reports whether the policy lets sc run, and if not, why. A nil
// Policy allows everything; a server of managed-mcp.json is allowed.
func (p *Policy) Allows(sc *Server) (bool, string) {
	if p == nil || sc.Scope == ScopeManaged {
		return true, ""
	}
	if p.Managed != nil {
		return false, "the organisation's " + managedMCPFile() + " has exclusive control over MCP servers"
	}
	for _, e := range p.Denied {
		if e.matches(sc) {
			return false, "deniedMcpServers has " + e.String()
		}
	}
	if p.Allowed == nil {
		return true, ""
	}
	stdio := sc.Type == TypeStdio
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
		if e.matches(sc) {
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
