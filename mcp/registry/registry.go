// Package registry installs MCP servers from an MCP registry (the
// official one by default): it reads the registry's v0.1 API, and maps a
// server's server.json to a config entry as Claude Code writes them,
// asking for the inputs it needs.
//
//	c := &registry.Client{}
//	s, err := c.Get(ctx, "io.github.example/weather-mcp", "latest")
//	plan, err := registry.PlanFor(s, nil)
//	for _, in := range plan.Inputs { in.Value = ask(in) }
//	sc, err := plan.Server()
//	config.Add(ctx, ".", config.ScopeLocal, plan.Name, config.Entry(sc))
//
// A package becomes a command: npm → npx -y PACKAGE@VERSION, PyPI → uvx
// PACKAGE@VERSION, OCI → docker run -i --rm IMAGE (the package's runtime
// hint and runtime arguments take the place of the defaults), with its
// package arguments after; a remote becomes an http or sse entry. The
// types are the registry's own (github.com/modelcontextprotocol/registry).
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
	"github.com/modelcontextprotocol/registry/pkg/model"

	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/mcp/config"
)

// DefaultURL is the official MCP Registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// MaxResponseSize bounds an answer of a registry, in bytes; MaxInputs the
// inputs one server may ask the user for (a server asking for more is
// refused).
const (
	MaxResponseSize = 8 << 20
	MaxInputs       = 64
)

// Errors of the registry and of the mapping, matched with errors.Is.
var (
	ErrNotFound    = errors.New("registry: no such server")
	ErrUnsupported = errors.New("registry: the server cannot be installed")
)

// Client reads a registry's v0.1 API.
type Client struct {
	// BaseURL is the registry's; empty means DefaultURL.
	BaseURL string
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	base := c.BaseURL
	if base == "" {
		base = DefaultURL
	}
	u := strings.TrimSuffix(base, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("registry: %w", redact.Err(err))
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("registry: %s: %s", redact.URL(u), res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxResponseSize+1))
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if len(b) > MaxResponseSize {
		return fmt.Errorf("registry: %s: the answer is larger than %d bytes", redact.URL(u), MaxResponseSize)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("registry: %s: %w", redact.URL(u), err)
	}
	return nil
}

// Search returns the latest version of the servers whose names match
// query (GET /v0.1/servers?search=), at most limit of them.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]v0.ServerResponse, error) {
	var out []v0.ServerResponse
	cursor := ""
	for len(out) < limit {
		q := url.Values{"search": {query}, "version": {"latest"}, "limit": {fmt.Sprint(min(limit-len(out), 100))}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page v0.ServerListResponse
		if err := c.get(ctx, "/v0.1/servers", q, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Servers...)
		if page.Metadata.NextCursor == "" || page.Metadata.NextCursor == cursor || len(page.Servers) == 0 {
			break
		}
		cursor = page.Metadata.NextCursor
	}
	return out[:min(len(out), limit)], nil
}

// Get returns the server.json of a server's version ("latest" or "" for
// the latest): GET /v0.1/servers/{name}/versions/{version}.
func (c *Client) Get(ctx context.Context, name, version string) (*v0.ServerJSON, error) {
	if version == "" {
		version = "latest"
	}
	var res v0.ServerResponse
	err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &res)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w %s@%s", ErrNotFound, name, version)
	}
	if err != nil {
		return nil, err
	}
	if res.Server.Name != name {
		return nil, fmt.Errorf("registry: asked for %s, the registry answered %q", name, res.Server.Name)
	}
	return &res.Server, nil
}

// Input is a value the entry needs from the user: an environment
// variable, a header, an argument, or a variable of one of them.
type Input struct {
	Kind        string // "environment variable", "header", "argument", "variable"
	Name        string
	Description string
	Required    bool
	Secret      bool
	Default     string
	Choices     []string
	// Value is the user's answer; empty takes Default, or leaves out a
	// value that is not required.
	Value string
}

// Plan is what installing a server writes: an entry whose inputs are yet
// to be given.
type Plan struct {
	Name    string         // the config name: the last part of the server's name
	JSON    *v0.ServerJSON // what the registry published
	Source  string         // what runs: "npm @scope/pkg@1.0.2", "remote https://…"
	Inputs  []*Input
	entry   func() (*config.Server, error)
	secrets map[string]bool // env or header names whose values are secrets
}

// Options choose what of a server.json is installed.
type Options struct {
	// Remote prefers the server's remotes to its packages.
	Remote bool
}

// PlanFor maps a server.json to a plan: its first package of a known type
// (npm, pypi, oci) with a stdio transport, or its first remote
// (streamable-http, sse); with opts.Remote, remotes first. A server
// with neither, or a package without a version, is an error matching
// ErrUnsupported that says why.
func PlanFor(s *v0.ServerJSON, opts *Options) (*Plan, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &Plan{JSON: s, Name: localName(s.Name), secrets: map[string]bool{}}
	var why []string
	tryPackages := func() bool {
		for i := range s.Packages {
			pkg := &s.Packages[i]
			if err := p.usePackage(pkg); err != nil {
				why = append(why, err.Error())
				continue
			}
			return true
		}
		return false
	}
	tryRemotes := func() bool {
		for i := range s.Remotes {
			if err := p.useRemote(&s.Remotes[i]); err != nil {
				why = append(why, err.Error())
				continue
			}
			return true
		}
		return false
	}
	ok := false
	if opts.Remote {
		ok = tryRemotes() || tryPackages()
	} else {
		ok = tryPackages() || tryRemotes()
	}
	if !ok {
		if len(why) == 0 {
			why = append(why, "it has no packages and no remotes")
		}
		return nil, fmt.Errorf("%w %s: %s", ErrUnsupported, s.Name, strings.Join(why, "; "))
	}
	if len(p.Inputs) > MaxInputs {
		return nil, fmt.Errorf("%w %s: it asks for %d inputs, more than %d", ErrUnsupported, s.Name, len(p.Inputs), MaxInputs)
	}
	return p, nil
}

var nameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// localName is the config name of a registry name: its part after the
// slash, with what Claude Code refuses in a name made '-'.
func localName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Trim(nameChars.ReplaceAllString(name, "-"), "-")
	if name == "" {
		name = "server"
	}
	return name
}

// ask adds an input and returns it.
func (p *Plan) ask(kind, name string, in model.Input) *Input {
	x := &Input{Kind: kind, Name: name, Description: in.Description, Required: in.IsRequired, Secret: in.IsSecret, Default: in.Default, Choices: in.Choices}
	p.Inputs = append(p.Inputs, x)
	return x
}

// value is a resolved input: the fixed value (its {variables} replaced),
// or the user's answer, or the default; ok is false when there is none
// and none is needed.
type value func() (v string, ok bool, err error)

var variable = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

func (p *Plan) input(kind, name string, in model.InputWithVariables) value {
	if in.Value != "" {
		vars := map[string]*Input{}
		for vn, v := range in.Variables {
			vars[vn] = p.ask("variable", vn, v)
		}
		fixed := in.Value
		return func() (string, bool, error) {
			var err error
			out := variable.ReplaceAllStringFunc(fixed, func(m string) string {
				x := vars[m[1:len(m)-1]]
				if x == nil {
					return m
				}
				v, ok, e := resolve(x)
				if e != nil {
					err = e
				}
				if !ok {
					return ""
				}
				return v
			})
			return out, true, err
		}
	}
	x := p.ask(kind, name, in.Input)
	return func() (string, bool, error) { return resolve(x) }
}

func resolve(x *Input) (string, bool, error) {
	v := x.Value
	if v == "" {
		v = x.Default
	}
	if v == "" {
		if x.Required {
			return "", false, fmt.Errorf("registry: the %s %s is required", x.Kind, x.Name)
		}
		return "", false, nil
	}
	if len(x.Choices) > 0 && !slices.Contains(x.Choices, v) {
		return "", false, fmt.Errorf("registry: the %s %s must be one of %s", x.Kind, x.Name, strings.Join(x.Choices, ", "))
	}
	return v, true, nil
}

// arguments resolves a list of arguments.
func (p *Plan) arguments(args []model.Argument) func() ([]string, error) {
	type one struct {
		arg model.Argument
		val value
	}
	var all []one
	for _, a := range args {
		name := a.Name
		if name == "" {
			name = a.ValueHint
		}
		all = append(all, one{a, p.input("argument", name, a.InputWithVariables)})
	}
	return func() ([]string, error) {
		var out []string
		for _, o := range all {
			v, ok, err := o.val()
			if err != nil {
				return nil, err
			}
			switch {
			case o.arg.Type == model.ArgumentTypeNamed && ok:
				out = append(out, o.arg.Name, v)
			case o.arg.Type == model.ArgumentTypeNamed:
			case ok:
				out = append(out, v)
			}
		}
		return out, nil
	}
}

func (p *Plan) keyValues(kind string, kvs []model.KeyValueInput) func() (map[string]string, error) {
	vals := map[string]value{}
	var order []string
	for _, kv := range kvs {
		vals[kv.Name] = p.input(kind, kv.Name, kv.InputWithVariables)
		order = append(order, kv.Name)
		if kv.IsSecret {
			p.secrets[kv.Name] = true
		}
	}
	return func() (map[string]string, error) {
		out := map[string]string{}
		for _, n := range order {
			v, ok, err := vals[n]()
			if err != nil {
				return nil, err
			}
			if ok {
				out[n] = v
			}
		}
		return out, nil
	}
}

func (p *Plan) usePackage(pkg *model.Package) error {
	if pkg.Transport.Type != "stdio" {
		return fmt.Errorf("package %s runs a %s server, which is not installed", pkg.Identifier, pkg.Transport.Type)
	}
	var command string
	var defaults, ref []string
	switch pkg.RegistryType {
	case "npm":
		if pkg.Version == "" {
			return fmt.Errorf("npm package %s has no version", pkg.Identifier)
		}
		command, defaults, ref = "npx", []string{"-y"}, []string{pkg.Identifier + "@" + pkg.Version}
	case "pypi":
		if pkg.Version == "" {
			return fmt.Errorf("PyPI package %s has no version", pkg.Identifier)
		}
		command, ref = "uvx", []string{pkg.Identifier + "@" + pkg.Version}
	case "oci":
		if !strings.Contains(pkg.Identifier[strings.LastIndexByte(pkg.Identifier, '/')+1:], ":") && !strings.Contains(pkg.Identifier, "@sha256:") {
			return fmt.Errorf("OCI image %s has no tag", pkg.Identifier)
		}
		command, defaults, ref = "docker", []string{"run", "-i", "--rm"}, []string{pkg.Identifier}
	default:
		return fmt.Errorf("package %s is of type %q, which is not installed (npm, pypi and oci are)", pkg.Identifier, pkg.RegistryType)
	}
	if pkg.RunTimeHint != "" {
		command = pkg.RunTimeHint
	}
	runtime := p.arguments(pkg.RuntimeArguments)
	pkgArgs := p.arguments(pkg.PackageArguments)
	env := p.keyValues("environment variable", pkg.EnvironmentVariables)
	oci := pkg.RegistryType == "oci"
	p.Source = pkg.RegistryType + " " + strings.Join(ref, " ")
	p.entry = func() (*config.Server, error) {
		rt, err := runtime()
		if err != nil {
			return nil, err
		}
		pa, err := pkgArgs()
		if err != nil {
			return nil, err
		}
		e, err := env()
		if err != nil {
			return nil, err
		}
		args := defaults
		if len(pkg.RuntimeArguments) > 0 && !oci {
			args = nil // the package's own runtime arguments replace the defaults
		}
		args = append(slices.Clone(args), rt...)
		if oci { // the container sees the environment it is given by name
			names := make([]string, 0, len(e))
			for n := range e {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				args = append(args, "-e", n)
			}
		}
		args = append(append(args, ref...), pa...)
		return &config.Server{Type: config.TypeStdio, Command: command, Args: args, Env: e}, nil
	}
	return nil
}

func (p *Plan) useRemote(t *model.Transport) error {
	var kind string
	switch t.Type {
	case "streamable-http":
		kind = config.TypeHTTP
	case "sse":
		kind = config.TypeSSE
	default:
		return fmt.Errorf("remote %s is of type %q, which is not installed (streamable-http and sse are)", t.URL, t.Type)
	}
	vars := map[string]*Input{}
	for n, v := range t.Variables {
		vars[n] = p.ask("variable", n, v)
	}
	headers := p.keyValues("header", t.Headers)
	p.Source = "remote " + t.URL
	p.entry = func() (*config.Server, error) {
		var err error
		u := variable.ReplaceAllStringFunc(t.URL, func(m string) string {
			x := vars[m[1:len(m)-1]]
			if x == nil {
				return m
			}
			v, _, e := resolve(x)
			if e != nil {
				err = e
			}
			return url.PathEscape(v)
		})
		if err != nil {
			return nil, err
		}
		h, err := headers()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 {
			h = nil
		}
		return &config.Server{Type: kind, URL: u, Headers: h}, nil
	}
	return nil
}

// Server returns the entry with the inputs given: an error says which
// required input is missing or which answer is not one of its choices.
func (p *Plan) Server() (*config.Server, error) {
	return p.entry()
}

// Secret reports whether the environment variable or header name holds
// a secret (never to be printed).
func (p *Plan) Secret(name string) bool { return p.secrets[name] }
