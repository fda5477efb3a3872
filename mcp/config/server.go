package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Server types of a config entry.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Server is one server entry of a config file, in the format Claude
// Code reads. Values are stored with ${VAR} and ${VAR:-default} already
// expanded.
type Server struct {
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
	// by 10 seconds and 64 KiB of output (ErrHeadersHelper); its process
	// group is killed at either bound and after every run, so nothing it
	// started lives on. Its
	// output is never logged or quoted in an error. A project entry's
	// helper runs only in a trusted workspace.
	HeadersHelper string `json:"headersHelper,omitempty"`
	// Disabled servers are listed in Status but never started.
	Disabled bool `json:"disabled,omitempty"`
	// AlwaysLoad keeps the server's tools out of a tool search: their
	// definitions always reach the model (Claude Code's "alwaysLoad"; a
	// tool's own _meta["anthropic/alwaysLoad"] wins). See package agent.
	AlwaysLoad bool `json:"alwaysLoad,omitempty"`
	// OAuth is an http or sse server's pre-registered OAuth client, as
	// Claude Code writes it; the mcp.Manager's Authorizer uses it.
	OAuth *OAuth `json:"oauth,omitempty"`

	// Scope is where the entry came from (see Load): ScopeUser and
	// ScopeLocal are the user's own files, ScopeProject files came with
	// the project (a cloned repository, say). Empty for a config the
	// program read itself (Parse, LoadFile), which it trusts.
	Scope Scope `json:"-"`
	// Approval says whether the user's own settings approve a project
	// server. An mcp.Manager starts a ScopeProject server only once approved.
	Approval Approval `json:"-"`
	// Warnings are notes about the entry, such as a project entry that
	// replaces a user's server of the same name.
	Warnings []string `json:"-"`
	// ProjectDir is the project directory of a config from Load
	// (Workspace.Dir; empty otherwise). A stdio server runs with
	// CLAUDE_PROJECT_DIR set to it, as Claude Code runs it.
	ProjectDir string `json:"-"`
	// WorkDir is where a stdio server and a headersHelper run unless Cwd
	// says otherwise; a relative Cwd or command is taken from there. Empty
	// means ProjectDir, or the program's own directory. Load sets
	// it to ProjectDir for the project's servers and, in a trusted
	// workspace, for the user's own too; the user's servers of a workspace
	// that is not trusted run in the user's home directory instead (the
	// file system's root when home is inside the workspace), so that
	// `npx`, `uvx` or a relative command cannot pick up what a repository
	// ships.
	WorkDir string `json:"-"`
	// trusted: the entry is Load's and its workspace is trusted, or
	// it is the program's own; a project entry's headersHelper runs only
	// then.
	trusted bool
	// written is the command line and URL as the entry writes them and as
	// they were expanded, before a relative command is made absolute: what
	// the organisation's policy compares. Nil for a Server made in code.
	written *writtenEntry
	// vars are the ${VAR}s the entry names as written (see Variables),
	// also when one could not be expanded.
	vars []string

	// Extra keeps the entry's fields this package does not know.
	Extra map[string]json.RawMessage `json:"-"`
	// Source is the file (or reader name) the entry came from.
	Source string `json:"-"`
	// Err is the entry's problem, a *Error, or nil. A server with an
	// Err is never started; an mcp.Manager shows it as failed.
	Err error `json:"-"`
}

// writtenEntry is what the policy compares of an entry (see
// PolicyEntry): its command line and URL as written, ${VAR}s and all,
// and as expanded.
type writtenEntry struct {
	rawCommand, command []string
	rawURL, url         string
}

// Variables are the environment variables the entry names (${VAR} and
// ${VAR:-default}, in any string it expands, and $VAR and ${VAR} in its
// headersHelper, which the shell expands), sorted: what it takes of the
// environment of the program that loads it. Nil for a Server made in
// code.
func (sc *Server) Variables() []string { return slices.Clone(sc.vars) }

// OAuth is the "oauth" object of a remote server entry: how to
// authorize with the server's authorization server (see package mcp/auth;
// the program's mcp.ManagerOptions.Authorizer reads it). ${VAR} is expanded
// in every string, so that secrets can stay out of the file.
type OAuth struct {
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

// namedString is a string member of a config object and its key.
type namedString struct {
	key string
	p   *string
}

// stringFields are o's string members, by their keys in the file.
func (o *OAuth) stringFields() []namedString {
	return []namedString{
		{"clientId", &o.ClientID}, {"clientSecret", &o.ClientSecret}, {"issuer", &o.Issuer}, {"grant", &o.Grant},
		{"privateKeyFile", &o.PrivateKeyFile}, {"signingAlg", &o.SigningAlg}, {"keyId", &o.KeyID},
		{"assertionFile", &o.AssertionFile}, {"idpTokenEndpoint", &o.IDPTokenEndpoint},
		{"idpClientId", &o.IDPClientID}, {"idpClientSecret", &o.IDPClientSecret}, {"idTokenFile", &o.IDTokenFile},
	}
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
	Approved        Approval = "approved" // enableAllProjectMcpServers, enabledMcpjsonServers, or mcp.Manager.Approve
	Rejected        Approval = "rejected" // disabledMcpjsonServers
)

// expand replaces ${VAR} and ${VAR:-default} in the command, args, env
// values, cwd, url, headers and the oauth client, and keeps the names of
// the variables they name in sc.vars.
func (sc *Server) expand(lookup func(string) (string, bool)) error {
	var errs []error
	named := map[string]bool{}
	defer func() { sc.vars = slices.Sorted(maps.Keys(named)) }()
	ex := func(field, s string) string {
		namedIn(s, named, 0)
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
	// The headersHelper is not expanded: the shell that runs it reads
	// the environment itself.
	namedInShell(sc.HeadersHelper, named)
	if o := sc.OAuth; o != nil {
		for _, f := range o.stringFields() {
			*f.p = ex("oauth."+f.key, *f.p)
		}
		for i, sc := range o.Scopes {
			o.Scopes[i] = ex(fmt.Sprintf("oauth.scopes[%d]", i), sc)
		}
	}
	return errors.Join(errs...)
}

// namedIn adds to named the variables s names, those of the defaults
// included, whether or not they are set: what expandVars may look up.
func namedIn(s string, named map[string]bool, depth int) {
	for depth < maxExpandDepth {
		i := strings.Index(s, "${")
		if i < 0 {
			return
		}
		end := closingBrace(s[i+2:])
		if end < 0 {
			return
		}
		name, def, hasDef := strings.Cut(s[i+2:i+2+end], ":-")
		if name != "" && !strings.ContainsAny(name, "${}") {
			named[name] = true
		}
		if hasDef {
			namedIn(def, named, depth+1)
		}
		s = s[i+2+end+1:]
	}
}

// namedInShell adds to named the variables a shell command names:
// each $NAME and ${NAME…} (NAME a letter or '_', then letters, digits
// and '_'), quoted or not, the shell's own ($1, $$, $?) left out.
func namedInShell(s string, named map[string]bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '{' {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || 'a' <= s[k] && s[k] <= 'z' || 'A' <= s[k] && s[k] <= 'Z' || k > j && '0' <= s[k] && s[k] <= '9') {
			k++
		}
		if k > j {
			named[s[j:k]] = true
		}
		i = k - 1
	}
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

// Cmd returns the command of a stdio entry, ready to start: Command
// and Args, run in Cwd (taken from WorkDir when relative; WorkDir itself
// when empty), with Env and CLAUDE_PROJECT_DIR (ProjectDir, when set)
// added to the program's environment. Each call returns a new exec.Cmd.
func (sc *Server) Cmd() *exec.Cmd { return sc.CmdInheriting(nil) }

// CmdInheriting is Cmd with only the variables of the program's
// environment named in inherit (nil: all of them), besides Env and
// CLAUDE_PROJECT_DIR.
func (sc *Server) CmdInheriting(inherit []string) *exec.Cmd {
	cmd := exec.Command(sc.Command, sc.Args...)
	cmd.Dir = sc.Cwd
	if base := sc.workDir(); base != "" && !filepath.IsAbs(cmd.Dir) {
		cmd.Dir = filepath.Join(base, cmd.Dir) // a relative command or cwd is taken from there
	}
	if len(sc.Env) > 0 || sc.ProjectDir != "" || inherit != nil {
		cmd.Env = os.Environ()
		if inherit != nil {
			cmd.Env = []string{}
			for _, k := range inherit {
				if v, ok := os.LookupEnv(k); ok {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
		}
		if sc.ProjectDir != "" {
			cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+sc.ProjectDir)
		}
		for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
			cmd.Env = append(cmd.Env, k+"="+sc.Env[k])
		}
	}
	return cmd
}

// workDir is where the entry's processes run unless Cwd says otherwise.
func (sc *Server) workDir() string {
	if sc.WorkDir != "" {
		return sc.WorkDir
	}
	return sc.ProjectDir
}

func (sc *Server) header() http.Header {
	h := http.Header{}
	for k, v := range sc.Headers {
		h.Set(k, v)
	}
	return h
}
