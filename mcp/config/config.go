package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/internal/safefile"
)

// Config is a set of named servers. Problems are kept per entry (see
// Server.Err) and per file (Errors), so one bad entry or file never
// hides the good ones.
type Config struct {
	Servers map[string]*Server
	Errors  []*Error // problems that are not one server's: unreadable or malformed files
	// Warnings are notes about the files that are not errors: a file
	// skipped because another user owns it, a key not read because its
	// case differs from the key Claude Code reads.
	Warnings []string
	// Workspace is the project Load read the config for, and whether
	// it is trusted; nil for a config the program read itself
	// (Parse, LoadFile), which it trusts.
	Workspace *Workspace
	// Policy is the organisation's (see LoadPolicy) that Load applied: a
	// server it does not allow has an Err matching ErrPolicy. Nil when
	// there is none, and for a config the program read itself.
	Policy *Policy
	// Permissions are the permission rules of the settings files Load
	// read (see Permissions); nil when they have none, and for a config
	// the program read itself unless it sets them.
	Permissions *Permissions

	layers *layers // Load's scopes, before they were merged
}

// Variables are the environment variables the config's entries name
// (see Server.Variables), sorted: for Load's, those of every entry it
// read, also one replaced by an entry of the same name in another file
// or scope (a user's server that a local entry replaces here runs in
// every other project), or not approved, and those of the local entries
// of the other projects in ~/.claude.json (where the user's entries run
// too). A variable no entry names is
// one an installer may give a new entry without handing another
// server's secret to it.
func (c *Config) Variables() []string {
	named := map[string]bool{}
	if c.layers != nil {
		maps.Copy(named, c.layers.named)
		for _, key := range slices.Sorted(maps.Keys(c.layers.others)) {
			for _, sc := range parseServers(c.layers.others[key], "project "+key).Servers {
				for _, v := range sc.vars {
					named[v] = true
				}
			}
		}
	}
	for _, sc := range c.Servers {
		for _, v := range sc.vars {
			named[v] = true
		}
	}
	return slices.Sorted(maps.Keys(named))
}

// Names returns the server names, sorted.
func (c *Config) Names() []string {
	return slices.Sorted(maps.Keys(c.Servers))
}

// Err joins every problem of the config: the files' and the servers'. Nil
// means the whole config is good.
func (c *Config) Err() error {
	var errs []error
	for _, e := range c.Errors {
		errs = append(errs, e)
	}
	for _, name := range c.Names() {
		if err := c.Servers[name].Err; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Merge adds other's servers and errors to c; a server of other replaces
// one of c with the same name. A project entry that replaces one of the
// user's own says so in its Warnings.
func (c *Config) Merge(other *Config) {
	if c.Servers == nil {
		c.Servers = map[string]*Server{}
	}
	for _, name := range other.Names() {
		sc := other.Servers[name]
		if old, ok := c.Servers[name]; ok && sc.Scope == ScopeProject && old.Scope != ScopeProject {
			sc.Warnings = append(sc.Warnings, fmt.Sprintf("this project entry (%s) replaces the %s server of the same name from %s", sc.Source, scopeName(old.Scope), old.Source))
		}
		c.Servers[name] = sc
	}
	c.Errors = append(c.Errors, other.Errors...)
	c.Warnings = append(c.Warnings, other.Warnings...)
}

func scopeName(s Scope) string {
	if s == "" {
		return "program's"
	}
	return string(s)
}

// Error is a problem in a config file: the file, the server (empty
// for a problem of the whole file) and what is wrong.
type Error struct {
	File   string
	Server string
	Err    error
}

func (e *Error) Error() string {
	where := e.File
	if where == "" {
		where = "config"
	}
	if e.Server != "" {
		where += fmt.Sprintf(": server %q", e.Server)
	}
	return "mcp: " + where + ": " + strings.TrimPrefix(e.Err.Error(), "mcp: ")
}

func (e *Error) Unwrap() error { return e.Err }

// Files returns the files Load reads servers from, in order of
// precedence, lowest first: ~/.claude.json (its top-level mcpServers),
// ~/.claude/settings.json, <dir>/.claude/settings.json, the .mcp.json of
// every directory from the file system's root down to dir, and
// ~/.claude.json again for the project's own entries (local scope). dir
// is taken as Load takes it (absolute, symlinks resolved). With
// $CLAUDE_CONFIG_DIR set, the user's two files are the .claude.json and
// settings.json of that folder (see ConfigDirEnv).
func Files(dir string) []string {
	var files []string
	user, err := userConfig()
	if err == nil {
		files = append(files, user.claudeJSON(), user.settings)
	}
	if ws, werr := findWorkspace(dir); werr == nil {
		dir = ws.Dir
	}
	files = append(files, filepath.Join(dir, ".claude", "settings.json"))
	files = append(files, mcpJSONFiles(dir)...)
	if err == nil {
		files = append(files, user.claudeJSON())
	}
	return files
}

// mcpJSONFiles are the .mcp.json files Claude Code reads for dir: those
// of the root and of every directory down to dir, the nearer last.
func mcpJSONFiles(dir string) []string {
	var files []string
	for p := dir; ; {
		files = append(files, filepath.Join(p, ".mcp.json"))
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	slices.Reverse(files)
	return files
}

// Load reads the config files of a project directory the way Claude
// Code does. dir is made absolute and its symlinks resolved; the project
// root is the git work tree holding it, or dir itself (see Workspace).
// Scopes, highest precedence first:
//
//   - local: ~/.claude.json, "projects" → <dir> or <root> → "mcpServers"
//     (dir's entry wins);
//   - project: the .mcp.json of dir and of each of its parents up to the
//     file system's root (the nearer wins), then <dir>/.claude/settings.json
//     (which Claude Code does not read);
//   - user: ~/.claude/settings.json (which Claude Code does not read for
//     servers), then ~/.claude.json's top-level "mcpServers".
//
// A server of a higher scope replaces one of the same name, with one
// exception: a project entry that is not approved never replaces the
// user's server of the same name, which is kept with a warning that says
// which entry was passed over and why. Missing files are skipped; a file
// that is not a regular file, or is larger than its bound, is an error of
// that file (ErrNotRegularFile, ErrFileTooLarge) and is not read. In
// settings.json files only "mcpServers" is read.
//
// Every file is read with exact keys, as JavaScript reads it: a key that
// differs from one this package reads only by case fails its entry (or,
// outside an entry, is not read and is named in Config.Warnings). A parent
// directory's .mcp.json (and the .git that makes a project root, see
// Workspace) counts only if the user or root owns it, as git's
// safe.directory; one that another user owns is skipped with a warning.
// ~/.claude.json, where Claude Code also keeps history, is streamed
// within 1 GiB: only its "mcpServers" and the project's entries are kept.
// With $CLAUDE_CONFIG_DIR set, the user's .claude.json and settings.json
// are that folder's, wherever this doc says ~/.claude.json and
// ~/.claude/settings.json, as in Claude Code (see ConfigDirEnv).
//
// Project servers come with the project, so they need the user's
// approval: "enableAllProjectMcpServers", "enabledMcpjsonServers" and
// "disabledMcpjsonServers" (a rejection wins) in ~/.claude/settings.json,
// and, only when the workspace is trusted (Workspace.Trusted), in
// .claude/settings.local.json and .claude/settings.json of dir and root
// and in ~/.claude.json's entries for dir and root. A rejection only
// narrows what runs, so it counts from all of these in any workspace.
// Nothing that a repository can ship approves its servers or makes its
// workspace trusted. An mcp.Manager does not start a project server that
// is not approved (see mcp.ManagerOptions.ApproveServer,
// mcp.ManagerOptions.TrustWorkspace and mcp.Manager.Approve).
//
// The returned Config is never nil, also when some file or entry is bad;
// the error is Config.Err().
func Load(dir string) (*Config, error) {
	ws, err := findWorkspace(dir)
	if err != nil {
		cfg := &Config{Servers: map[string]*Server{}, Errors: []*Error{{File: dir, Err: err}}}
		return cfg, cfg.Err()
	}
	l := &layers{ws: ws, user: newConfig(), project: newConfig(), local: newConfig(), warnings: ws.warnings}
	readFile := func(path string, max int64, mustOwn bool) []byte {
		b, err := l.read(path, max, mustOwn)
		if err != nil {
			l.errors = append(l.errors, &Error{File: path, Err: err})
		}
		return b
	}
	if home, err := os.UserHomeDir(); err == nil {
		l.home = home // where the user's own servers run outside a workspace not trusted
	}
	user, userErr := userConfig()
	if userErr != nil {
		if os.Getenv(ConfigDirEnv) != "" { // without a home directory, there is nothing of the user's to read
			l.errors = append(l.errors, &Error{Err: userErr})
		}
	} else {
		path := user.claudeJSON()
		cj, err := readClaudeJSON(path, maxClaudeJSONSize, ws.keys())
		if err != nil {
			l.errors = append(l.errors, &Error{File: path, Err: err})
		}
		if cj != nil {
			l.warnings = append(l.warnings, prefixed(path, cj.warnings)...)
			if cj.servers != nil {
				l.merge(l.user, parseServers(cj.servers, path))
			}
			for _, key := range ws.keys() {
				entry := cj.projects[key]
				if entry == nil {
					continue
				}
				var trusted bool
				if field(entry, "hasTrustDialogAccepted", &trusted) == nil {
					ws.Trusted = ws.Trusted || trusted
				}
				l.workspaceApprovals.read(entry)
				if raw := entry["mcpServers"]; raw != nil {
					l.merge(l.local, parseServers(raw, path+" (project "+key+")"))
				}
			}
			// The other projects' servers run nowhere here, but an entry of
			// the user's runs there too: Variables names theirs, read then.
			l.others = cj.others
		}
		path = user.settings
		if b := readFile(path, maxUserFileSize, false); b != nil {
			l.merge(l.user, parseConfig(b, path, true))
			m := l.settings(path, b)
			l.userApprovals.read(m)
			l.perms.add(ScopeUser, path, m)
		}
	}
	for _, key := range ws.keys() {
		path := filepath.Join(key, ".claude", "settings.json")
		if b := readFile(path, maxProjectFileSize, false); b != nil {
			m := l.settings(path, b)
			if key == ws.Dir {
				l.merge(l.project, parseConfig(b, path, true))
				l.perms.add(ScopeProject, path, m)
			}
			l.workspaceApprovals.read(m)
		}
	}
	for _, path := range mcpJSONFiles(ws.Dir) {
		if b := readFile(path, maxProjectFileSize, filepath.Dir(path) != ws.Dir); b != nil {
			l.merge(l.project, parseConfig(b, path, false))
		}
	}
	for _, key := range ws.keys() {
		path := filepath.Join(key, ".claude", "settings.local.json")
		if b := readFile(path, maxProjectFileSize, false); b != nil {
			m := l.settings(path, b)
			l.workspaceApprovals.read(m)
			l.perms.add(ScopeLocal, path, m)
		}
	}
	l.errors = append(l.errors, l.perms.readManaged()...)
	for _, c := range []struct {
		cfg   *Config
		scope Scope
	}{{l.user, ScopeUser}, {l.project, ScopeProject}, {l.local, ScopeLocal}} {
		for _, sc := range c.cfg.Servers {
			sc.Scope = c.scope
		}
		l.errors = append(l.errors, c.cfg.Errors...)
	}
	cfg := l.resolve(ws.Trusted)
	applyPolicy(cfg)
	return cfg, cfg.Err()
}

// applyPolicy applies the organisation's policy to cfg; a policy that
// cannot be read allows nothing: it must not be ignored because it is
// broken.
func applyPolicy(cfg *Config) {
	policy, err := LoadPolicy()
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{File: managedSettingsFile(), Err: err}
		}
		cfg.Errors = append(cfg.Errors, e)
		policy = &Policy{Allowed: []PolicyEntry{}, Files: []string{e.File}}
	}
	policy.apply(cfg)
}

// read reads a config or settings file of Load; when mustOwn (a parent
// directory's file), one owned by anyone but the user or root is skipped
// with a warning, as git skips a repository another user owns.
func (l *layers) read(path string, max int64, mustOwn bool) ([]byte, error) {
	if mustOwn {
		for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} { // a link and what it links to
			if info, err := stat(path); err == nil && !ownedByUserOrRoot(info) {
				l.warnings = append(l.warnings, fmt.Sprintf("%s is not read: it belongs to another user (%s), and a parent directory's file counts only if the user or root owns it", path, ownerOf(info)))
				return nil, nil
			}
		}
	}
	return safefile.Read(path, max)
}

// settings returns the members of a settings file, read with exact keys;
// a member whose name differs from an approval key only by case is noted
// in the warnings and not read.
func (l *layers) settings(path string, b []byte) map[string]json.RawMessage {
	m, err := members(b)
	if err != nil {
		return nil
	}
	if err := caseMismatch(m, approvalKeys...); err != nil {
		l.warnings = append(l.warnings, fmt.Sprintf("%s: %v: not read", path, err))
	}
	return m
}

func prefixed(path string, warnings []string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		out[i] = path + ": " + w
	}
	return out
}

// isRelativePath reports whether command is a relative path ("./srv",
// "bin/srv"), not an absolute one nor a bare name looked up in PATH.
func isRelativePath(command string) bool {
	return !filepath.IsAbs(command) && strings.ContainsRune(command, filepath.Separator)
}

func newConfig() *Config { return &Config{Servers: map[string]*Server{}} }

// layers are the scopes of a Load before they are merged, kept so
// that Trusted can merge them again.
type layers struct {
	ws                   *Workspace
	home                 string
	user, project, local *Config
	userApprovals        approvalSettings // the user's own: ~/.claude/settings.json
	workspaceApprovals   approvalSettings // the workspace's: its approvals count only once it is trusted
	perms                permissionFiles  // the permission rules of the settings files
	errors               []*Error
	warnings             []string
	named                map[string]bool            // the variables of every entry read (see Config.Variables)
	others               map[string]json.RawMessage // the other projects' mcpServers in ~/.claude.json, by project
}

// merge merges src into the scope dst, and keeps the variables its
// entries name, also of those a later entry of the same name replaces.
func (l *layers) merge(dst, src *Config) {
	if l.named == nil {
		l.named = map[string]bool{}
	}
	for _, sc := range src.Servers {
		for _, v := range sc.vars {
			l.named[v] = true
		}
	}
	dst.Merge(src)
}

// decide is what the settings say of the project server name when the
// workspace's trust is trusted: a rejection counts from every source, an
// approval from the workspace's own settings only once it is trusted.
func (l *layers) decide(name string, trusted bool) Approval {
	all := []*approvalSettings{&l.userApprovals, &l.workspaceApprovals}
	if trusted {
		return decide(name, all, all...)
	}
	return decide(name, all, &l.userApprovals)
}

// resolve merges the layers into a new Config, its entries copies, as the
// workspace's trust (trusted) decides.
func (l *layers) resolve(trusted bool) *Config {
	ws := *l.ws
	ws.Trusted = trusted
	cfg := &Config{Servers: map[string]*Server{}, Errors: slices.Clone(l.errors), Warnings: slices.Clone(l.warnings), Workspace: &ws, layers: l}
	if cfg.Permissions = l.perms.resolve(trusted); cfg.Permissions != nil {
		cfg.Warnings = append(cfg.Warnings, cfg.Permissions.Warnings...)
	}
	names := map[string]bool{}
	for _, c := range []*Config{l.user, l.project, l.local} {
		for name := range c.Servers {
			names[name] = true
		}
	}
	for name := range names {
		user, project, local := l.user.Servers[name], l.project.Servers[name], l.local.Servers[name]
		var pick Server
		var warnings []string
		approval := l.decide(name, trusted)
		switch {
		case local != nil:
			pick = *local
		case project != nil && (approval == Approved || user == nil):
			pick = *project
			pick.Approval = approval
			if user != nil {
				warnings = append(warnings, fmt.Sprintf("this project entry (%s) replaces the user server of the same name from %s", project.Source, user.Source))
			}
		case project != nil:
			pick = *user
			why := "it is not approved"
			if approval == Rejected {
				why = "it is rejected (disabledMcpjsonServers)"
			}
			warnings = append(warnings, fmt.Sprintf("the project entry of the same name in %s was passed over: %s", project.Source, why))
		default:
			pick = *user
		}
		pick.Warnings = append(slices.Clone(pick.Warnings), warnings...)
		pick.ProjectDir = ws.Dir
		pick.WorkDir = ws.Dir
		if pick.Scope != ScopeProject && !trusted {
			pick.WorkDir = ws.outsideDir(l.home)
			if pick.Err == nil && pick.Type == TypeStdio && isRelativePath(pick.Command) {
				// The command is not quoted: a ${VAR} in it was expanded.
				pick.Err = &Error{File: pick.Source, Server: name, Err: fmt.Errorf("the command is a relative path, and the user's own servers run outside a workspace that is not trusted (in %s), so that nothing the workspace ships runs as theirs; trust the workspace (config.SaveTrust, mcpls -trust) to run it from %s, or give an absolute command", pick.WorkDir, ws.Dir)}
			}
		}
		pick.trusted = trusted
		cfg.Servers[name] = &pick
	}
	return cfg
}

// WaitsForTrust reports whether the project server name, not approved in
// c, is approved in the workspace's own settings
// (.claude/settings.local.json, the project's entry of ~/.claude.json),
// which count only once the workspace is trusted (see Trusted).
func (c *Config) WaitsForTrust(name string) bool {
	if c == nil || c.layers == nil || c.Workspace == nil || c.Workspace.Trusted {
		return false
	}
	return c.layers.decide(name, false) == ApprovalPending && c.layers.decide(name, true) == Approved
}

// Trusted returns the config as Load reads it once its workspace is
// trusted (see Workspace), a new Config; or c itself when it is not
// Load's or its workspace is trusted already. It changes no file: see
// SaveTrust for that. The organisation's policy applies to it as to
// Load's: trust never lifts a deny or an exclusive list.
func (c *Config) Trusted() *Config {
	if c == nil || c.layers == nil || c.Workspace == nil || c.Workspace.Trusted {
		return c
	}
	cfg := c.layers.resolve(true)
	applyPolicy(cfg)
	return cfg
}

// LoadFile reads one config file: {"mcpServers": {...}} or the flat
// {name: entry} map. A relative command with a path in it ("./server",
// "bin/server") is taken from the file's folder; a bare name ("npx") is
// looked up in PATH, and servers run in the program's working directory
// unless their cwd says otherwise. The file must be a regular file of at
// most 64 MiB (ErrNotRegularFile, ErrFileTooLarge). The organisation's policy
// applies as in Load (see LoadPolicy).
func LoadFile(path string) (*Config, error) {
	b, err := safefile.Read(path, maxUserFileSize)
	if err == nil && b == nil {
		_, err = os.Stat(path) // missing: say so
		if err == nil {
			b = []byte{}
		}
	}
	if err != nil {
		cfg := &Config{Servers: map[string]*Server{}, Errors: []*Error{{File: path, Err: err}}}
		return cfg, cfg.Err()
	}
	cfg := parseConfig(b, path, false)
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, sc := range cfg.Servers {
		if sc.Err == nil && sc.Type == TypeStdio && isRelativePath(sc.Command) {
			sc.Command = filepath.Join(dir, sc.Command)
		}
	}
	applyPolicy(cfg) // the organisation's policy covers every server that runs on the machine, as Claude Code's covers --mcp-config
	return cfg, cfg.Err()
}

// Parse reads a config from r; source names it in errors.
func Parse(r io.Reader, source string) (*Config, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		cfg := &Config{Servers: map[string]*Server{}, Errors: []*Error{{File: source, Err: err}}}
		return cfg, cfg.Err()
	}
	cfg := parseConfig(b, source, false)
	return cfg, cfg.Err()
}

// parseServers reads an "mcpServers" object.
func parseServers(raw json.RawMessage, source string) *Config {
	cfg := &Config{Servers: map[string]*Server{}}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		cfg.Errors = append(cfg.Errors, &Error{File: source, Err: fmt.Errorf(`"mcpServers" is not an object: %w`, err)})
		return cfg
	}
	for name, e := range entries {
		cfg.Servers[name] = parseEntry(name, e, source)
	}
	return cfg
}

func parseConfig(b []byte, source string, settings bool) *Config {
	cfg := &Config{Servers: map[string]*Server{}}
	fileErr := func(err error) *Config {
		cfg.Errors = append(cfg.Errors, &Error{File: source, Err: err})
		return cfg
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return cfg
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fileErr(fmt.Errorf("not a JSON object: %w", err))
	}
	entries := top
	if raw, ok := top["mcpServers"]; ok {
		entries = nil
		if err := json.Unmarshal(raw, &entries); err != nil {
			return fileErr(fmt.Errorf(`"mcpServers" is not an object: %w`, err))
		}
	} else if settings {
		return cfg // a settings file without servers
	}
	for name, raw := range entries {
		cfg.Servers[name] = parseEntry(name, raw, source)
	}
	return cfg
}

// entryKeys are the members of a server entry this package reads.
var entryKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers", "headersHelper", "disabled", "oauth", "alwaysLoad"}

func parseEntry(name string, raw json.RawMessage, source string) *Server {
	return parseEntryLookup(name, raw, source, os.LookupEnv)
}

// keepVars is a lookup that leaves every ${VAR} as it is written: an
// entry is checked, before it is written, for what it is, not for the
// writer's environment.
func keepVars(name string) (string, bool) { return "${" + name + "}", true }

// parseEntryLookup is parseEntry with ${VAR} looked up by lookup.
func parseEntryLookup(name string, raw json.RawMessage, source string, lookup func(string) (string, bool)) *Server {
	sc := &Server{Name: name, Source: source}
	fail := func(format string, args ...any) *Server {
		sc.Err = &Error{File: source, Server: name, Err: fmt.Errorf(format, args...)}
		return sc
	}
	fields, err := members(raw)
	if err != nil {
		return fail("entry is not a JSON object")
	}
	if err := caseMismatch(fields, entryKeys...); err != nil {
		return fail("%v", err)
	}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"type", &sc.Type}, {"command", &sc.Command}, {"args", &sc.Args}, {"env", &sc.Env}, {"cwd", &sc.Cwd},
		{"url", &sc.URL}, {"headers", &sc.Headers}, {"headersHelper", &sc.HeadersHelper}, {"disabled", &sc.Disabled},
		{"alwaysLoad", &sc.AlwaysLoad},
	} {
		if err := field(fields, f.key, f.dst); err != nil {
			return fail("%v", err)
		}
	}
	if raw, ok := fields["oauth"]; ok && string(raw) != "null" {
		o, err := parseOAuth(raw)
		if err != nil {
			return fail(`"oauth": %v`, err)
		}
		sc.OAuth = o
	}
	for _, known := range entryKeys {
		delete(fields, known)
	}
	if len(fields) > 0 {
		sc.Extra = fields
	}
	if name == "" {
		return fail("empty server name")
	}
	switch sc.Type {
	case "":
		sc.Type = TypeStdio
		if sc.Command == "" && sc.URL != "" {
			sc.Type = TypeHTTP
		}
	case TypeStdio, TypeHTTP, TypeSSE:
	case "streamable-http", "streamableHttp":
		sc.Type = TypeHTTP
	default:
		return fail("unknown type %q (want stdio, http or sse)", sc.Type)
	}
	w := &writtenEntry{rawCommand: append([]string{sc.Command}, sc.Args...), rawURL: sc.URL}
	if err := sc.expand(lookup); err != nil {
		return fail("%v", err)
	}
	w.command, w.url = append([]string{sc.Command}, sc.Args...), sc.URL
	sc.written = w
	switch sc.Type {
	case TypeStdio:
		if sc.Command == "" {
			return fail(`stdio server needs a "command"`)
		}
	default:
		if sc.URL == "" {
			return fail(`%s server needs a "url"`, sc.Type)
		}
	}
	return sc
}

// parseOAuth reads an entry's "oauth" object, with exact keys.
func parseOAuth(raw json.RawMessage) (*OAuth, error) {
	m, err := members(raw)
	if err != nil {
		return nil, err
	}
	o := &OAuth{}
	strs := o.stringFields()
	known := []string{"callbackPort", "scopes", "dpop"}
	for _, s := range strs {
		known = append(known, s.key)
	}
	if err := caseMismatch(m, known...); err != nil {
		return nil, err
	}
	for _, s := range strs {
		if err := field(m, s.key, s.p); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		key string
		dst any
	}{{"callbackPort", &o.CallbackPort}, {"scopes", &o.Scopes}, {"dpop", &o.DPoP}} {
		if err := field(m, f.key, f.dst); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// ProjectEntry returns the project entry (ScopeProject) named name: the
// one in Servers, or one that was passed over for the user's server of
// the same name because it is not approved. It is what mcp.Manager.Approve
// and SaveApproval decide on.
func (c *Config) ProjectEntry(name string) (*Server, bool) {
	if sc, ok := c.Servers[name]; ok && sc.Scope == ScopeProject {
		return sc, true
	}
	if c.layers != nil {
		if sc, ok := c.layers.project.Servers[name]; ok {
			return sc, true
		}
	}
	return nil, false
}
