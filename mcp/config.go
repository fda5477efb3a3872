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
	"time"
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
	// runs (in ProjectDir, if set) each time the server is connected,
	// bounded by 10 seconds; its output is never logged or quoted in an
	// error.
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
	// ProjectDir is the absolute project directory of a config from
	// LoadConfig (empty otherwise). A stdio server runs there unless Cwd
	// says otherwise (a relative Cwd or command is taken from there), with
	// CLAUDE_PROJECT_DIR set to it, as Claude Code runs it.
	ProjectDir string `json:"-"`

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
// ~/.claude/settings.json, <project>/.claude/settings.json,
// <project>/.mcp.json, and ~/.claude.json again for the project's own
// entry (local scope).
func ConfigFiles(project string) []string {
	var files []string
	home, err := os.UserHomeDir()
	if err == nil {
		files = append(files, filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude", "settings.json"))
	}
	files = append(files,
		filepath.Join(project, ".claude", "settings.json"),
		filepath.Join(project, ".mcp.json"))
	if err == nil {
		files = append(files, filepath.Join(home, ".claude.json"))
	}
	return files
}

// LoadConfig reads the config files of a project directory the way Claude
// Code does. Scopes, highest precedence first:
//
//   - local: ~/.claude.json, "projects" → <absolute project path> →
//     "mcpServers";
//   - project: <project>/.mcp.json, then <project>/.claude/settings.json;
//   - user: ~/.claude/settings.json, then ~/.claude.json's top-level
//     "mcpServers".
//
// A server of a higher scope replaces one of the same name (a project entry
// that replaces a user's server carries a warning). Missing files are
// skipped; in settings.json files only "mcpServers" is read.
//
// Project servers come with the project, so they need the user's approval:
// each one's Approval is read from the user's own files only, never from
// the project's shared ones: "enableAllProjectMcpServers",
// "enabledMcpjsonServers" and "disabledMcpjsonServers" in
// ~/.claude/settings.json, <project>/.claude/settings.local.json and
// ~/.claude.json's entry for the project (a rejection wins). A Manager does
// not start a project server that is not approved (see
// ManagerOptions.ApproveServer and Manager.Approve).
//
// The returned Config is never nil, also when some file or entry is bad;
// the error is Config.Err().
func LoadConfig(project string) (*Config, error) {
	cfg := &Config{Servers: map[string]*ServerConfig{}}
	abs, err := filepath.Abs(project)
	if err != nil {
		abs = project
	}
	home, homeErr := os.UserHomeDir()
	var claudeJSON map[string]json.RawMessage // ~/.claude.json
	var approvals approvalSettings
	read := func(path string) ([]byte, bool) {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
		if err != nil {
			cfg.Errors = append(cfg.Errors, &ConfigError{File: path, Err: err})
			return nil, false
		}
		return b, true
	}
	add := func(c *Config, scope Scope) {
		for _, sc := range c.Servers {
			sc.Scope = scope
		}
		cfg.Merge(c)
	}
	var localEntry json.RawMessage
	if homeErr == nil {
		path := filepath.Join(home, ".claude.json")
		if b, ok := read(path); ok {
			if err := json.Unmarshal(b, &claudeJSON); err != nil {
				cfg.Errors = append(cfg.Errors, &ConfigError{File: path, Err: fmt.Errorf("not a JSON object: %w", err)})
			} else {
				if raw, ok := claudeJSON["mcpServers"]; ok {
					add(parseServers(raw, path), ScopeUser)
				}
				var projects map[string]json.RawMessage
				json.Unmarshal(claudeJSON["projects"], &projects)
				localEntry = projects[abs]
				approvals.read(localEntry)
			}
		}
		path = filepath.Join(home, ".claude", "settings.json")
		if b, ok := read(path); ok {
			add(parseConfig(b, path, true), ScopeUser)
			approvals.read(b)
		}
	}
	for _, path := range []string{filepath.Join(project, ".claude", "settings.json"), filepath.Join(project, ".mcp.json")} {
		if b, ok := read(path); ok {
			add(parseConfig(b, path, filepath.Base(path) == "settings.json"), ScopeProject)
		}
	}
	if b, ok := read(filepath.Join(project, ".claude", "settings.local.json")); ok {
		approvals.read(b)
	}
	if localEntry != nil {
		var entry struct {
			MCPServers json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(localEntry, &entry) == nil && entry.MCPServers != nil {
			add(parseServers(entry.MCPServers, filepath.Join(home, ".claude.json")+" (project "+abs+")"), ScopeLocal)
		}
	}
	for _, sc := range cfg.Servers {
		sc.ProjectDir = abs
		if sc.Scope == ScopeProject {
			sc.Approval = approvals.decide(sc.Name)
		}
	}
	return cfg, cfg.Err()
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

func (a *approvalSettings) decide(name string) Approval {
	switch {
	case a.disabled[name]:
		return Rejected
	case a.all || a.enabled[name]:
		return Approved
	}
	return ApprovalPending
}

// SaveApproval records the user's decision on the project server name in
// <project>/.claude/settings.local.json (the user's own settings of the
// project, which Claude Code reads too): the name is added to
// "enabledMcpjsonServers" or "disabledMcpjsonServers" and removed from the
// other. The file's other settings are kept; it is created with mode 0600
// when missing.
func SaveApproval(project, name string, approve bool) error {
	path := filepath.Join(project, ".claude", "settings.local.json")
	settings := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(bytes.TrimSpace(b)) > 0 {
			if err := json.Unmarshal(b, &settings); err != nil {
				return &ConfigError{File: path, Err: fmt.Errorf("not a JSON object: %w", err)}
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return &ConfigError{File: path, Err: err}
	}
	list := func(key string) []string {
		var out []string
		if arr, ok := settings[key].([]any); ok {
			for _, v := range arr {
				if s, ok := v.(string); ok && s != name {
					out = append(out, s)
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
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &ConfigError{File: path, Err: err}
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o600); err != nil {
		return &ConfigError{File: path, Err: err}
	}
	return nil
}

// LoadConfigFile reads one config file: {"mcpServers": {...}} or the flat
// {name: entry} map.
func LoadConfigFile(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		cfg := &Config{Servers: map[string]*ServerConfig{}, Errors: []*ConfigError{{File: path, Err: err}}}
		return cfg, cfg.Err()
	}
	cfg := parseConfig(b, path, false)
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
			{"clientId", &o.ClientID}, {"clientSecret", &o.ClientSecret}, {"grant", &o.Grant},
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
		if v, ok := lookup(name); ok && (v != "" || !hasDef) {
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
// stdio servers, started in Cwd with Env added to the environment; for
// "http", Streamable HTTP falling back to HTTP+SSE (NewHTTPTransport); for
// "sse", an SSETransport. Headers are sent with every request.
func (sc *ServerConfig) Transport() (Transport, error) {
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
		if sc.ProjectDir != "" && !filepath.IsAbs(cmd.Dir) {
			cmd.Dir = filepath.Join(sc.ProjectDir, cmd.Dir) // a relative command or cwd is the project's
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
		h, err := sc.allHeaders()
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

// headersHelperTimeout bounds a headersHelper command.
var headersHelperTimeout = 10 * time.Second

// allHeaders are the entry's headers and those its headersHelper gives
// (which win).
func (sc *ServerConfig) allHeaders() (http.Header, error) {
	h := sc.header()
	if sc.HeadersHelper == "" {
		return h, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), headersHelperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", sc.HeadersHelper)
	cmd.Dir = sc.ProjectDir
	group := setProcessGroup(cmd)
	cmd.Cancel = func() error { signalGroup(cmd, group, sigKill); return nil } // its children too
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("mcp: server %q: headersHelper did not finish within %v", sc.Name, headersHelperTimeout)
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("exit status %d", exit.ExitCode()) // its output may hold secrets: not quoted
		}
		return nil, fmt.Errorf("mcp: server %q: headersHelper failed: %w", sc.Name, err)
	}
	var extra map[string]string
	if err := json.Unmarshal(out, &extra); err != nil {
		return nil, fmt.Errorf("mcp: server %q: headersHelper must print a JSON object of strings", sc.Name)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	return h, nil
}

func (sc *ServerConfig) header() http.Header {
	h := http.Header{}
	for k, v := range sc.Headers {
		h.Set(k, v)
	}
	return h
}
