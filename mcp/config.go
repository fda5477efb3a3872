package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/internal/safefile"
)

// Server types of a config entry.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// ServerConfig is one server entry of a config file, in the format Claude
// Code reads. Values are stored with ${VAR} and ${VAR:-default} already
// expanded.
type ServerConfig struct {
	Name string `json:"-"`
	// Type is TypeStdio, TypeHTTP or TypeSSE. An entry without "type" is
	// stdio, or http if it has a url and no command.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// HeadersHelper is a shell command whose standard output, a JSON
	// object of strings, gives more headers for an http or sse server. It
	// runs with sh -c in WorkDir each time the server is connected, bounded
	// by 10 seconds and 64 KiB of output (ErrHeadersHelper; its process
	// group is killed at either bound, and when the connecting ends). Its
	// output is never logged or quoted in an error. A project entry's
	// helper runs only in a trusted workspace.
	HeadersHelper string `json:"headersHelper,omitempty"`
	// Disabled servers are listed in Status but never started.
	Disabled bool `json:"disabled,omitempty"`
	// OAuth is an http or sse server's pre-registered OAuth client, as
	// Claude Code writes it; the Manager's Authorizer uses it.
	OAuth *OAuthConfig `json:"oauth,omitempty"`

	// Scope is where the entry came from (see LoadConfig): ScopeUser and
	// ScopeLocal are the user's own files, ScopeProject files came with
	// the project (a cloned repository, say). Empty for a config the
	// program read itself (ParseConfig, LoadConfigFile), which it trusts.
	Scope Scope `json:"-"`
	// Approval says whether the user's own settings approve a project
	// server. A Manager starts a ScopeProject server only once approved.
	Approval Approval `json:"-"`
	// Warnings are notes about the entry, such as a project entry that
	// replaces a user's server of the same name.
	Warnings []string `json:"-"`
	// ProjectDir is the project directory of a config from LoadConfig
	// (Workspace.Dir; empty otherwise). A stdio server runs with
	// CLAUDE_PROJECT_DIR set to it, as Claude Code runs it.
	ProjectDir string `json:"-"`
	// WorkDir is where a stdio server and a headersHelper run unless Cwd
	// says otherwise; a relative Cwd or command is taken from there. Empty
	// means ProjectDir, or the program's own directory. LoadConfig sets
	// it to ProjectDir for the project's servers and, in a trusted
	// workspace, for the user's own too; the user's servers of a workspace
	// that is not trusted run in the user's home directory instead (the
	// file system's root when home is inside the workspace), so that
	// `npx`, `uvx` or a relative command cannot pick up what a repository
	// ships.
	WorkDir string `json:"-"`
	// trusted: the entry is LoadConfig's and its workspace is trusted, or
	// it is the program's own; a project entry's headersHelper runs only
	// then.
	trusted bool

	// Extra keeps the entry's fields this package does not know.
	Extra map[string]json.RawMessage `json:"-"`
	// Source is the file (or reader name) the entry came from.
	Source string `json:"-"`
	// Err is the entry's problem, a *ConfigError, or nil. A server with an
	// Err is never started; Manager shows it as failed.
	Err error `json:"-"`
}

// OAuthConfig is the "oauth" object of a remote server entry: how to
// authorize with the server's authorization server (see package mcp/auth;
// the program's ManagerOptions.Authorizer reads it). ${VAR} is expanded
// in every string, so that secrets can stay out of the file.
type OAuthConfig struct {
	// ClientID and ClientSecret are a client registered beforehand.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Issuer is the authorization server the credentials are for; a server
	// that names another gets none of them (auth.Config.Issuer).
	Issuer string `json:"issuer,omitempty"`
	// CallbackPort is the loopback port of the redirect URI registered
	// with the client; 0 means the program's choice.
	CallbackPort int `json:"callbackPort,omitempty"`
	// Scopes are asked for beside those the server names.
	Scopes []string `json:"scopes,omitempty"`

	// Grant is how tokens are obtained: "" or "authorization_code" (a
	// user signs in), "client_credentials", "jwt_bearer" (workload
	// identity) or "enterprise" (enterprise-managed authorization).
	Grant string `json:"grant,omitempty"`
	// PrivateKeyFile is a PEM key for private_key_jwt (client_credentials),
	// readable by its owner only; SigningAlg and KeyID go with it.
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	SigningAlg     string `json:"signingAlg,omitempty"`
	KeyID          string `json:"keyId,omitempty"`
	// AssertionFile holds the platform's workload token (jwt_bearer).
	AssertionFile string `json:"assertionFile,omitempty"`
	// IDPTokenEndpoint, IDPClientID, IDPClientSecret and IDTokenFile are
	// the enterprise identity provider's token endpoint, the client there,
	// and the file that holds the user's ID token (enterprise).
	IDPTokenEndpoint string `json:"idpTokenEndpoint,omitempty"`
	IDPClientID      string `json:"idpClientId,omitempty"`
	IDPClientSecret  string `json:"idpClientSecret,omitempty"`
	IDTokenFile      string `json:"idTokenFile,omitempty"`
	// DPoP asks for tokens bound to the client's key (RFC 9449).
	DPoP bool `json:"dpop,omitempty"`
}

// Scope is where a server entry comes from, as Claude Code names them.
type Scope string

const (
	ScopeUser    Scope = "user"    // ~/.claude.json, ~/.claude/settings.json
	ScopeProject Scope = "project" // <project>/.mcp.json, <project>/.claude/settings.json
	ScopeLocal   Scope = "local"   // ~/.claude.json, projects[<project>]
)

// Approval is the user's decision on a project server.
type Approval string

const (
	ApprovalPending Approval = ""         // no decision: the server waits for one
	Approved        Approval = "approved" // enableAllProjectMcpServers, enabledMcpjsonServers, or Manager.Approve
	Rejected        Approval = "rejected" // disabledMcpjsonServers
)

// Config is a set of named servers. Problems are kept per entry (see
// ServerConfig.Err) and per file (Errors), so one bad entry or file never
// hides the good ones.
type Config struct {
	Servers map[string]*ServerConfig
	Errors  []*ConfigError // problems that are not one server's: unreadable or malformed files
	// Workspace is the project LoadConfig read the config for, and whether
	// it is trusted; nil for a config the program read itself
	// (ParseConfig, LoadConfigFile), which it trusts.
	Workspace *Workspace

	layers *layers // LoadConfig's scopes, before they were merged
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
		c.Servers = map[string]*ServerConfig{}
	}
	for _, name := range other.Names() {
		sc := other.Servers[name]
		if old, ok := c.Servers[name]; ok && sc.Scope == ScopeProject && old.Scope != ScopeProject {
			sc.Warnings = append(sc.Warnings, fmt.Sprintf("this project entry (%s) replaces the %s server of the same name from %s", sc.Source, scopeName(old.Scope), old.Source))
		}
		c.Servers[name] = sc
	}
	c.Errors = append(c.Errors, other.Errors...)
}

func scopeName(s Scope) string {
	if s == "" {
		return "program's"
	}
	return string(s)
}

// ConfigError is a problem in a config file: the file, the server (empty
// for a problem of the whole file) and what is wrong.
type ConfigError struct {
	File   string
	Server string
	Err    error
}

func (e *ConfigError) Error() string {
	where := e.File
	if where == "" {
		where = "config"
	}
	if e.Server != "" {
		where += fmt.Sprintf(": server %q", e.Server)
	}
	return "mcp: " + where + ": " + strings.TrimPrefix(e.Err.Error(), "mcp: ")
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ConfigFiles returns the files LoadConfig reads servers from, in order of
// precedence, lowest first: ~/.claude.json (its top-level mcpServers),
// ~/.claude/settings.json, <dir>/.claude/settings.json, the .mcp.json of
// every directory from the file system's root down to dir, and
// ~/.claude.json again for the project's own entries (local scope). dir
// is taken as LoadConfig takes it (absolute, symlinks resolved).
func ConfigFiles(dir string) []string {
	var files []string
	home, err := os.UserHomeDir()
	if err == nil {
		files = append(files, filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude", "settings.json"))
	}
	if ws, werr := findWorkspace(dir); werr == nil {
		dir = ws.Dir
	}
	files = append(files, filepath.Join(dir, ".claude", "settings.json"))
	files = append(files, mcpJSONFiles(dir)...)
	if err == nil {
		files = append(files, filepath.Join(home, ".claude.json"))
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

// LoadConfig reads the config files of a project directory the way Claude
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
// Project servers come with the project, so they need the user's
// approval: "enableAllProjectMcpServers", "enabledMcpjsonServers" and
// "disabledMcpjsonServers" (a rejection wins) in ~/.claude/settings.json,
// and, only when the workspace is trusted (Workspace.Trusted), in
// .claude/settings.local.json of dir and root and in ~/.claude.json's
// entries for dir and root. Nothing that a repository can ship approves
// its servers or makes its workspace trusted. A Manager does not start a
// project server that is not approved (see ManagerOptions.ApproveServer,
// ManagerOptions.TrustWorkspace and Manager.Approve).
//
// The returned Config is never nil, also when some file or entry is bad;
// the error is Config.Err().
func LoadConfig(dir string) (*Config, error) {
	ws, err := findWorkspace(dir)
	if err != nil {
		cfg := &Config{Servers: map[string]*ServerConfig{}, Errors: []*ConfigError{{File: dir, Err: err}}}
		return cfg, cfg.Err()
	}
	l := &layers{ws: ws, user: newConfig(), project: newConfig(), local: newConfig()}
	read := func(path string, max int64) []byte {
		b, err := safefile.Read(path, max)
		if err != nil {
			l.errors = append(l.errors, &ConfigError{File: path, Err: err})
		}
		return b
	}
	home, homeErr := os.UserHomeDir()
	if homeErr == nil {
		l.home = home
		path := filepath.Join(home, ".claude.json")
		if b := read(path, maxUserFileSize); b != nil {
			var top struct {
				MCPServers json.RawMessage            `json:"mcpServers"`
				Projects   map[string]json.RawMessage `json:"projects"`
			}
			if err := json.Unmarshal(b, &top); err != nil {
				l.errors = append(l.errors, &ConfigError{File: path, Err: fmt.Errorf("not a JSON object: %w", err)})
			} else {
				if top.MCPServers != nil {
					l.user.Merge(parseServers(top.MCPServers, path))
				}
				for _, key := range ws.keys() {
					entry := top.Projects[key]
					var e struct {
						Trusted    bool            `json:"hasTrustDialogAccepted"`
						MCPServers json.RawMessage `json:"mcpServers"`
					}
					if entry == nil || json.Unmarshal(entry, &e) != nil {
						continue
					}
					ws.Trusted = ws.Trusted || e.Trusted
					l.workspaceApprovals.read(entry)
					if e.MCPServers != nil {
						l.local.Merge(parseServers(e.MCPServers, path+" (project "+key+")"))
					}
				}
			}
		}
		path = filepath.Join(home, ".claude", "settings.json")
		if b := read(path, maxUserFileSize); b != nil {
			l.user.Merge(parseConfig(b, path, true))
			l.userApprovals.read(b)
		}
	}
	if b := read(filepath.Join(ws.Dir, ".claude", "settings.json"), maxProjectFileSize); b != nil {
		l.project.Merge(parseConfig(b, filepath.Join(ws.Dir, ".claude", "settings.json"), true))
	}
	for _, path := range mcpJSONFiles(ws.Dir) {
		if b := read(path, maxProjectFileSize); b != nil {
			l.project.Merge(parseConfig(b, path, false))
		}
	}
	for _, key := range ws.keys() {
		if b := read(filepath.Join(key, ".claude", "settings.local.json"), maxProjectFileSize); b != nil {
			l.workspaceApprovals.read(b)
		}
	}
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
	return cfg, cfg.Err()
}

func newConfig() *Config { return &Config{Servers: map[string]*ServerConfig{}} }

// layers are the scopes of a LoadConfig before they are merged, kept so
// that a Manager can merge them again once the workspace is trusted.
type layers struct {
	ws                   *Workspace
	home                 string
	user, project, local *Config
	userApprovals        approvalSettings // the user's own: ~/.claude/settings.json
	workspaceApprovals   approvalSettings // count only in a trusted workspace
	errors               []*ConfigError
}

// resolve merges the layers into a new Config, its entries copies, as the
// workspace's trust (trusted) decides.
func (l *layers) resolve(trusted bool) *Config {
	ws := *l.ws
	ws.Trusted = trusted
	approvals := []*approvalSettings{&l.userApprovals}
	if trusted {
		approvals = append(approvals, &l.workspaceApprovals)
	}
	cfg := &Config{Servers: map[string]*ServerConfig{}, Errors: slices.Clone(l.errors), Workspace: &ws, layers: l}
	names := map[string]bool{}
	for _, c := range []*Config{l.user, l.project, l.local} {
		for name := range c.Servers {
			names[name] = true
		}
	}
	for name := range names {
		user, project, local := l.user.Servers[name], l.project.Servers[name], l.local.Servers[name]
		var pick ServerConfig
		var warnings []string
		approval := decide(name, approvals...)
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
				why = "it is rejected in the user's settings"
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
		}
		pick.trusted = trusted
		cfg.Servers[name] = &pick
	}
	return cfg
}

// approvalSettings are the user's decisions on project servers, as Claude
// Code's settings keep them.
type approvalSettings struct {
	all      bool
	enabled  map[string]bool
	disabled map[string]bool
}

func (a *approvalSettings) read(b []byte) {
	var s struct {
		All      bool     `json:"enableAllProjectMcpServers"`
		Enabled  []string `json:"enabledMcpjsonServers"`
		Disabled []string `json:"disabledMcpjsonServers"`
	}
	if len(b) == 0 || json.Unmarshal(b, &s) != nil {
		return
	}
	a.all = a.all || s.All
	for _, n := range s.Enabled {
		if a.enabled == nil {
			a.enabled = map[string]bool{}
		}
		a.enabled[n] = true
	}
	for _, n := range s.Disabled {
		if a.disabled == nil {
			a.disabled = map[string]bool{}
		}
		a.disabled[n] = true
	}
}

// decide is what the settings together say of the project server name:
// a rejection in any wins, then an approval in any.
func decide(name string, settings ...*approvalSettings) Approval {
	approved := false
	for _, a := range settings {
		if a.disabled[name] {
			return Rejected
		}
		approved = approved || a.all || a.enabled[name]
	}
	if approved {
		return Approved
	}
	return ApprovalPending
}

// pendingReason says why a pending project server of cfg waits: its
// approval in the workspace's own files does not count until the
// workspace is trusted.
func (c *Config) pendingReason(name string) string {
	if c == nil || c.layers == nil || c.Workspace == nil || c.Workspace.Trusted {
		return ""
	}
	if decide(name, &c.layers.workspaceApprovals) == Approved {
		return "; it is approved in the workspace's settings, which count once the workspace is trusted (SaveTrust, mcpls -trust)"
	}
	return ""
}

// withTrust returns the config as it is once its workspace is trusted, or
// c itself when it is not LoadConfig's or is trusted already.
func (c *Config) withTrust() *Config {
	if c == nil || c.layers == nil || c.Workspace == nil || c.Workspace.Trusted {
		return c
	}
	return c.layers.resolve(true)
}

// SaveApproval records the user's decision on the project server name in
// <root>/.claude/settings.local.json, root being the project root of dir
// (see Workspace): the name is added to "enabledMcpjsonServers" or
// "disabledMcpjsonServers" and removed from the other. The file's other
// settings are kept; it is created with mode 0600 when missing. Neither
// the file nor its .claude folder may be a symlink (a repository could
// ship one pointing at the user's own settings): the error then matches
// ErrNotRegularFile. Like Claude Code, LoadConfig counts the file only in
// a trusted workspace (SaveTrust).
func SaveApproval(dir, name string, approve bool) error {
	ws, err := findWorkspace(dir)
	if err != nil {
		return &ConfigError{File: dir, Err: err}
	}
	folder := filepath.Join(ws.Root, ".claude")
	path := filepath.Join(folder, "settings.local.json")
	settings, err := safefile.ReadJSONObject(path, maxProjectFileSize) // safefile.Write refuses a symlink
	if err != nil {
		return &ConfigError{File: path, Err: err}
	}
	list := func(key string) []any {
		var out []any
		if arr, ok := settings[key].([]any); ok {
			for _, v := range arr {
				if s, ok := v.(string); !ok || s != name {
					out = append(out, v)
				}
			}
		}
		return out
	}
	enabled, disabled := list("enabledMcpjsonServers"), list("disabledMcpjsonServers")
	if approve {
		enabled = append(enabled, name)
	} else {
		disabled = append(disabled, name)
	}
	settings["enabledMcpjsonServers"], settings["disabledMcpjsonServers"] = enabled, disabled
	if len(enabled) == 0 {
		delete(settings, "enabledMcpjsonServers")
	}
	if len(disabled) == 0 {
		delete(settings, "disabledMcpjsonServers")
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.Write(folder, "settings.local.json", append(out, '\n')); err != nil {
		return &ConfigError{File: path, Err: err}
	}
	return nil
}

// LoadConfigFile reads one config file: {"mcpServers": {...}} or the flat
// {name: entry} map. A relative command with a path in it ("./server",
// "bin/server") is taken from the file's folder; a bare name ("npx") is
// looked up in PATH, and servers run in the program's working directory
// unless their cwd says otherwise. The file must be a regular file of at
// most 64 MiB (ErrNotRegularFile, ErrFileTooLarge).
func LoadConfigFile(path string) (*Config, error) {
	b, err := safefile.Read(path, maxUserFileSize)
	if err == nil && b == nil {
		_, err = os.Stat(path) // missing: say so
		if err == nil {
			b = []byte{}
		}
	}
	if err != nil {
		cfg := &Config{Servers: map[string]*ServerConfig{}, Errors: []*ConfigError{{File: path, Err: err}}}
		return cfg, cfg.Err()
	}
	cfg := parseConfig(b, path, false)
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, sc := range cfg.Servers {
		if sc.Err == nil && sc.Type == TypeStdio && !filepath.IsAbs(sc.Command) && strings.ContainsRune(sc.Command, filepath.Separator) {
			sc.Command = filepath.Join(dir, sc.Command)
		}
	}
	return cfg, cfg.Err()
}

// ParseConfig reads a config from r; source names it in errors.
func ParseConfig(r io.Reader, source string) (*Config, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		cfg := &Config{Servers: map[string]*ServerConfig{}, Errors: []*ConfigError{{File: source, Err: err}}}
		return cfg, cfg.Err()
	}
	cfg := parseConfig(b, source, false)
	return cfg, cfg.Err()
}

// parseServers reads an "mcpServers" object.
func parseServers(raw json.RawMessage, source string) *Config {
	cfg := &Config{Servers: map[string]*ServerConfig{}}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		cfg.Errors = append(cfg.Errors, &ConfigError{File: source, Err: fmt.Errorf(`"mcpServers" is not an object: %w`, err)})
		return cfg
	}
	for name, e := range entries {
		cfg.Servers[name] = parseEntry(name, e, source)
	}
	return cfg
}

func parseConfig(b []byte, source string, settings bool) *Config {
	cfg := &Config{Servers: map[string]*ServerConfig{}}
	fileErr := func(err error) *Config {
		cfg.Errors = append(cfg.Errors, &ConfigError{File: source, Err: err})
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

func parseEntry(name string, raw json.RawMessage, source string) *ServerConfig {
	sc := &ServerConfig{Name: name, Source: source}
	fail := func(format string, args ...any) *ServerConfig {
		sc.Err = &ConfigError{File: source, Server: name, Err: fmt.Errorf(format, args...)}
		return sc
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fail("entry is not a JSON object")
	}
	if err := json.Unmarshal(raw, sc); err != nil {
		return fail("%v", err)
	}
	for _, known := range []string{"type", "command", "args", "env", "cwd", "url", "headers", "headersHelper", "disabled", "oauth"} {
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
	if err := sc.expand(os.LookupEnv); err != nil {
		return fail("%v", err)
	}
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

// expand replaces ${VAR} and ${VAR:-default} in the command, args, env
// values, cwd, url, headers and the oauth client.
func (sc *ServerConfig) expand(lookup func(string) (string, bool)) error {
	var errs []error
	ex := func(field, s string) string {
		out, err := expandVars(s, lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
		return out
	}
	sc.Command = ex("command", sc.Command)
	for i, a := range sc.Args {
		sc.Args[i] = ex(fmt.Sprintf("args[%d]", i), a)
	}
	for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
		sc.Env[k] = ex("env."+k, sc.Env[k])
	}
	sc.Cwd = ex("cwd", sc.Cwd)
	sc.URL = ex("url", sc.URL)
	for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
		sc.Headers[k] = ex("headers."+k, sc.Headers[k])
	}
	if o := sc.OAuth; o != nil {
		for _, f := range []struct {
			name string
			p    *string
		}{
			{"clientId", &o.ClientID}, {"clientSecret", &o.ClientSecret}, {"issuer", &o.Issuer}, {"grant", &o.Grant},
			{"privateKeyFile", &o.PrivateKeyFile}, {"signingAlg", &o.SigningAlg}, {"keyId", &o.KeyID},
			{"assertionFile", &o.AssertionFile}, {"idpTokenEndpoint", &o.IDPTokenEndpoint},
			{"idpClientId", &o.IDPClientID}, {"idpClientSecret", &o.IDPClientSecret}, {"idTokenFile", &o.IDTokenFile},
		} {
			*f.p = ex("oauth."+f.name, *f.p)
		}
		for i, sc := range o.Scopes {
			o.Scopes[i] = ex(fmt.Sprintf("oauth.scopes[%d]", i), sc)
		}
	}
	return errors.Join(errs...)
}

// expandVars expands ${VAR} and ${VAR:-default}; a default may itself hold
// ${…} expressions, nested at most maxExpandDepth deep. An unset variable
// without a default is an error, and so is a "${" that is not closed. The
// error never quotes the value, which may hold secrets.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	return expandDepth(s, lookup, 0)
}

// maxExpandDepth bounds how deep ${A:-${B:-…}} defaults nest.
const maxExpandDepth = 8

func expandDepth(s string, lookup func(string) (string, bool), depth int) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if depth >= maxExpandDepth {
		return "", fmt.Errorf("${…} defaults nested more than %d deep", maxExpandDepth)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := closingBrace(s[i+2:])
		if end < 0 {
			return "", errors.New("a ${ is not closed")
		}
		expr := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if name == "" || strings.ContainsAny(name, "${}") {
			return "", errors.New("a ${…} names no valid variable")
		}
		if v, ok := lookup(name); ok { // set, even to "": the default is for unset only, as in Claude Code
			b.WriteString(v)
		} else if hasDef {
			d, err := expandDepth(def, lookup, depth+1)
			if err != nil {
				return "", err
			}
			b.WriteString(d)
		} else {
			return "", fmt.Errorf("environment variable %s is not set (set it, or write ${%s:-default})", name, name)
		}
		s = s[i+2+end+1:]
	}
}

// closingBrace returns the index in s of the '}' that closes a "${" just
// before s, counting nested "${", or -1.
func closingBrace(s string) int {
	open := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			open++
			i++
		case s[i] == '}':
			if open == 0 {
				return i
			}
			open--
		}
	}
	return -1
}

// Transport returns the Transport for this entry: a CommandTransport for
// stdio servers, started in Cwd (taken from WorkDir when relative; WorkDir
// itself when empty) with Env added to the environment; for "http",
// Streamable HTTP falling back to HTTP+SSE (NewHTTPTransport); for "sse",
// an SSETransport. Headers are sent with every request, with those of the
// headersHelper, which runs now (see HeadersHelper).
func (sc *ServerConfig) Transport() (Transport, error) {
	return sc.transport(context.Background())
}

// transport is Transport with ctx bounding the headersHelper.
func (sc *ServerConfig) transport(ctx context.Context) (Transport, error) {
	if sc.Err != nil {
		return nil, sc.Err
	}
	if sc.Disabled {
		return nil, fmt.Errorf("mcp: server %q is disabled", sc.Name)
	}
	switch sc.Type {
	case TypeStdio, "":
		cmd := exec.Command(sc.Command, sc.Args...)
		cmd.Dir = sc.Cwd
		if base := sc.workDir(); base != "" && !filepath.IsAbs(cmd.Dir) {
			cmd.Dir = filepath.Join(base, cmd.Dir) // a relative command or cwd is taken from there
		}
		if len(sc.Env) > 0 || sc.ProjectDir != "" {
			cmd.Env = os.Environ()
			if sc.ProjectDir != "" {
				cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+sc.ProjectDir)
			}
			for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
				cmd.Env = append(cmd.Env, k+"="+sc.Env[k])
			}
		}
		return &CommandTransport{Command: cmd}, nil
	case TypeHTTP, TypeSSE:
		h, err := sc.allHeaders(ctx)
		if err != nil {
			return nil, err
		}
		if sc.Type == TypeSSE {
			return &SSETransport{URL: sc.URL, Headers: h}, nil
		}
		return NewHTTPTransport(sc.URL, h), nil
	default:
		return nil, fmt.Errorf("mcp: server %q: unknown type %q", sc.Name, sc.Type)
	}
}

// workDir is where the entry's processes run unless Cwd says otherwise.
func (sc *ServerConfig) workDir() string {
	if sc.WorkDir != "" {
		return sc.WorkDir
	}
	return sc.ProjectDir
}

func (sc *ServerConfig) header() http.Header {
	h := http.Header{}
	for k, v := range sc.Headers {
		h.Set(k, v)
	}
	return h
}

// ProjectEntry returns the project entry (ScopeProject) named name: the
// one in Servers, or one that was passed over for the user's server of
// the same name because it is not approved. It is what Manager.Approve
// and SaveApproval decide on.
func (c *Config) ProjectEntry(name string) (*ServerConfig, bool) {
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
