package registry

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/distribution/reference"
	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
	"github.com/modelcontextprotocol/registry/pkg/model"
	"golang.org/x/net/publicsuffix"

	"github.com/mcplug/mcplug/mcp/config"
)

// Input is a value the entry needs from the user: an environment
// variable, a header, an argument, or a variable of one of them. A
// secret is never an Input: it is a Variable the user sets.
type Input struct {
	Kind string // "environment variable", "header", "argument", "variable"
	Name string
	// Description is the server.json's, on one line (each run of white
	// space, line breaks included, one space) and at most MaxDescription
	// bytes, so that it cannot draw lines of the installer's own.
	Description string
	Required    bool
	Default     string
	Choices     []string
	Format      string // "", "string", "number", "boolean" or "filepath"
	// Value is the user's answer; empty takes Default, or leaves out
	// the value (and the argument, variable or header that holds it)
	// when the input is not required. An answer may hold ${VAR} to name
	// a variable of the user's own environment.
	Value string
}

// Prompt is the question to ask for the input: its kind and name, what
// it takes, and its description when it has one
// ("environment variable GRAFANA_URL (required): URL to your Grafana
// instance: ").
func (in *Input) Prompt() string {
	var notes []string
	if in.Required {
		notes = append(notes, "required")
	}
	if in.Default != "" {
		notes = append(notes, "default "+in.Default)
	}
	if len(in.Choices) > 0 {
		notes = append(notes, "one of "+strings.Join(in.Choices, ", "))
	}
	switch in.Format {
	case string(model.FormatBoolean):
		notes = append(notes, "true or false")
	case string(model.FormatNumber):
		notes = append(notes, "a number")
	case string(model.FormatFilePath):
		notes = append(notes, "a path")
	}
	q := in.Kind + " " + in.Name
	if len(notes) > 0 {
		q += " (" + strings.Join(notes, "; ") + ")"
	}
	if d := describe(in.Description); d != "" {
		q += ": " + d
	}
	return q + ": "
}

// describe is a server.json's description as it is shown: on one line,
// every run of white space one space, cut at MaxDescription bytes (on a
// whole character, "…" added).
func describe(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxDescription {
		return s
	}
	cut := MaxDescription - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Variable is an environment variable the user sets for the server: the
// entry holds ${Name} where the secret goes, never the secret.
type Variable struct {
	Name        string // NEON_MCP_AUTHORIZATION
	For         string // what it fills: "header Authorization"
	Description string // as an Input's: one line, at most MaxDescription bytes
	Required    bool   // the server.json requires it (or the plan was asked for all)
}

// Plan is what installing a server writes: an entry whose inputs are yet
// to be given.
type Plan struct {
	// Name is the config name (ConfigName of the server's name, or a
	// longer one of ConfigNames that ChooseName takes); the caller may
	// change it before Variables and Server, which name the secrets'
	// variables after it.
	Name   string
	JSON   *v0.ServerJSON // what the registry published
	Source string         // what runs: "npm package @scope/pkg 1.0.2, run by npx"
	Inputs []*Input       // what to ask, required first as the server.json has them
	// Notes say what of the server.json the plan leaves out and why (a
	// package not used, an optional runtime argument the runner does not
	// take).
	Notes []string
	// Taken, when set, reports whether another entry of the config
	// names the environment variable name already: Variables and Server
	// pass such a name over (NAME_2, NAME_3, …), so that the user's
	// secret for one server never goes to another whose variable is
	// spelt the same (in any letters, for Windows, where NAME and name
	// are one variable).
	Taken func(name string) bool

	slots []*slot
	entry func() (*config.Server, error)
}

// Options choose what of a server.json is installed.
type Options struct {
	// Remote prefers the server's remotes to its packages.
	Remote bool
	// All asks for the optional inputs too, and writes references for
	// the optional secrets; without it an optional input takes its
	// default, or is left out with what holds it.
	All bool
}

// PlanFor maps a server.json to a plan: its first package that can be
// installed (npm, pypi, oci, nuget with a stdio transport), or its first
// remote (streamable-http, sse); with opts.Remote, remotes first. A
// server with none that can be installed is a *RefusedError saying why
// for each; so is a plan that needs more than MaxInputs inputs and
// variables.
func PlanFor(s *v0.ServerJSON, opts *Options) (*Plan, error) {
	if opts == nil {
		opts = &Options{}
	}
	refused := &RefusedError{Server: s.Name}
	try := func(n int, use func(b *builder, i int) error) *Plan {
		for i := range n {
			b := &builder{opts: opts, slots: map[string]*slot{}}
			if err := use(b, i); err != nil {
				refused.Reasons = append(refused.Reasons, err)
				continue
			}
			return b.plan(s)
		}
		return nil
	}
	packages := func() *Plan {
		return try(len(s.Packages), func(b *builder, i int) error { return b.usePackage(&s.Packages[i]) })
	}
	remotes := func() *Plan {
		return try(len(s.Remotes), func(b *builder, i int) error { return b.useRemote(&s.Remotes[i]) })
	}
	var p *Plan
	if opts.Remote {
		if p = remotes(); p == nil {
			p = packages()
		}
	} else if p = packages(); p == nil {
		p = remotes()
	}
	if p == nil {
		if len(refused.Reasons) == 0 {
			refused.Reasons = append(refused.Reasons, fmt.Errorf("it has no packages and no remotes"))
		}
		return nil, refused
	}
	for _, r := range refused.Reasons {
		p.Notes = append(p.Notes, "not used: "+r.Error())
	}
	n := len(p.Inputs)
	for _, sl := range p.slots {
		if sl.secret && sl.include {
			n++
		}
	}
	if n > MaxInputs {
		refused.Reasons = []error{fmt.Errorf("it asks for %d inputs and variables, more than %d", n, MaxInputs)}
		return nil, refused
	}
	return p, nil
}

// builder collects what one package or remote needs.
type builder struct {
	opts   *Options
	slots  map[string]*slot
	order  []*slot
	notes  []string
	source string
	entry  func() (*config.Server, error)
}

// slot returns the slot of kind and name, merging a second mention of
// it into the first.
func (b *builder) slot(kind, name string, in model.Input, secret bool) *slot {
	key := kind + "\x00" + name
	if s := b.slots[key]; s != nil {
		s.in.IsRequired = s.in.IsRequired || in.IsRequired
		s.secret = s.secret || secret
		if s.in.Description == "" {
			s.in.Description = in.Description
		}
		if s.in.Default == "" {
			s.in.Default = in.Default
		}
		if len(s.in.Choices) == 0 {
			s.in.Choices = in.Choices
		}
		if s.in.Format == "" {
			s.in.Format = in.Format
		}
		return s
	}
	s := &slot{kind: kind, name: name, in: in, secret: secret}
	b.slots[key] = s
	b.order = append(b.order, s)
	return s
}

// template makes the template of a value of the server.json: in.Value
// with its {variables}, or the input itself when it has no value. A
// secret container makes its variables secrets.
func (b *builder) template(what, kind, name string, in model.InputWithVariables) (template, error) {
	if in.Value == "" {
		if err := checkInput(what, in.Input); err != nil {
			return nil, err
		}
		return template{{slot: b.slot(kind, name, in.Input, in.IsSecret || looksSecret(name))}}, nil
	}
	if err := checkText(what, in.Value); err != nil {
		return nil, err
	}
	var t template
	rest := in.Value
	for rest != "" {
		m := placeholder.FindStringSubmatchIndex(rest)
		if m == nil {
			t = append(t, part{text: rest})
			break
		}
		vn := rest[m[2]:m[3]]
		v, ok := in.Variables[vn]
		if !ok { // not a variable: the text as it is
			t = append(t, part{text: rest[:m[1]]})
			rest = rest[m[1]:]
			continue
		}
		if err := checkInput(what+"'s variable "+vn, v); err != nil {
			return nil, err
		}
		if v.Description == "" { // the variable is what the value is for
			v.Description = in.Description
		}
		if m[0] > 0 {
			t = append(t, part{text: rest[:m[0]]})
		}
		t = append(t, part{slot: b.slot("variable", vn, v, v.IsSecret || in.IsSecret || looksSecret(vn))})
		rest = rest[m[1]:]
	}
	return t, nil
}

// plan decides what is asked (required inputs, or all with opts.All)
// and makes the Plan.
func (b *builder) plan(s *v0.ServerJSON) *Plan {
	p := &Plan{Name: ConfigName(s.Name), JSON: s, Source: b.source, Notes: b.notes, slots: b.order, entry: b.entry}
	var optional []*Input
	for _, sl := range b.order {
		want := sl.in.IsRequired || b.opts.All
		if sl.secret {
			sl.include = want
			continue
		}
		if !want {
			continue
		}
		sl.ask = &Input{Kind: sl.kind, Name: sl.name, Description: describe(sl.in.Description), Required: sl.in.IsRequired,
			Default: sl.in.Default, Choices: sl.in.Choices, Format: string(sl.in.Format)}
		if sl.in.IsRequired {
			p.Inputs = append(p.Inputs, sl.ask)
		} else {
			optional = append(optional, sl.ask)
		}
	}
	p.Inputs = append(p.Inputs, optional...)
	return p
}

// nameRefs names the variables of the secrets after p.Name, each once.
func (p *Plan) nameRefs() {
	used := map[string]bool{}
	for _, sl := range p.slots {
		if !sl.secret || !sl.include {
			continue
		}
		ref := variableName(p.Name, sl.name)
		for i := 2; used[ref] || p.Taken != nil && p.Taken(ref); i++ {
			ref = fmt.Sprintf("%s_%d", variableName(p.Name, sl.name), i)
		}
		used[ref] = true
		sl.ref = ref
	}
}

// Variables are the environment variables the user sets for the
// server, named after p.Name: one for each secret the entry needs. The
// names are words joined by '_', so another server's may be the same
// (NEON_MCP_AUTHORIZATION is neon-mcp's Authorization and
// neon-mcp-authorization's Neon-Mcp-Authorization): a name p.Taken
// reports is passed over, and one set already in the environment goes
// to this server as it is, which an installer should say before it
// writes.
func (p *Plan) Variables() []Variable {
	p.nameRefs()
	var out []Variable
	for _, sl := range p.slots {
		if sl.secret && sl.include {
			out = append(out, Variable{Name: sl.ref, For: sl.kind + " " + sl.name, Description: describe(sl.in.Description), Required: sl.in.IsRequired})
		}
	}
	return out
}

// Server returns the entry with the inputs given: an error matching
// ErrAnswer says which required input is missing or which answer is
// not one the input takes.
func (p *Plan) Server() (*config.Server, error) {
	p.nameRefs()
	return p.entry()
}

// Installs reports whether the config entry sc is this server's: it
// runs one of the server.json's packages that can be installed with the
// package's runner, at any version (npx with @scope/pkg or @scope/pkg@…
// as what it runs, docker with the image at any tag or digest), or it
// connects to one of its remotes (the remote's URL with any value in
// each {variable}: a segment of the path or the query, or a label of
// the host before the host's own domain). A remote whose scheme, or
// whose host but for such labels, is a {variable} names no server of
// its own, and no entry is its. What else the entry holds (its inputs,
// its secrets' variables, its runtime arguments) is the user's and does
// not count.
func (p *Plan) Installs(sc *config.Server) bool {
	switch sc.Type {
	case config.TypeStdio, "":
		for i := range p.JSON.Packages {
			if runsPackage(sc, &p.JSON.Packages[i]) {
				return true
			}
		}
	default:
		for _, r := range p.JSON.Remotes {
			if re, ok := remoteURL(r); ok && re.MatchString(sc.URL) {
				return true
			}
		}
	}
	return false
}

// runsPackage reports whether the stdio entry sc runs pkg with its
// runner, at any version: pkg is one that can be installed (see ref),
// and the entry's argument that names what the runner runs (see
// packageArg) names it.
func runsPackage(sc *config.Server, pkg *model.Package) bool {
	run := runners[pkg.RegistryType]
	if run == nil || sc.Command != run.command {
		return false
	}
	if _, err := ref(pkg); err != nil {
		return false
	}
	a, ok := packageArg(run, sc.Args)
	if !ok {
		return false
	}
	if pkg.RegistryType == "oci" {
		image := func(s string) string {
			named, err := reference.ParseNormalizedNamed(s)
			if err != nil {
				return ""
			}
			return reference.TrimNamed(named).Name()
		}
		want := image(pkg.Identifier)
		return want != "" && image(a) == want
	}
	if i := strings.LastIndex(a, "@"); i > 0 {
		a = a[:i]
	}
	if pkg.RegistryType == "pypi" {
		a, _, _ = strings.Cut(a, "==")
	}
	return strings.EqualFold(a, pkg.Identifier)
}

// packageArg is the argument of a runner's command line that names what
// it runs: the first that is neither an option nor the value of one (an
// option of run.flags that takes a value), after docker's subcommand,
// run. An argument of the server's own, after it, or an option's value
// is never taken for it.
func packageArg(run *runner, args []string) (string, bool) {
	sub := run.command == "docker"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-"):
			if run.flags[a] {
				i++
			}
		case sub:
			if a != "run" {
				return "", false
			}
			sub = false
		default:
			return a, true
		}
	}
	return "", false
}

// remoteURL matches the URLs a remote's entry may have: its URL, each
// {variable} of the remote's any text of a path segment or the query
// (what a value escaped as a path segment is), or, in the host, one
// label of letters, digits and '-', before a literal rest holding the
// host's registrable domain (https://{tenant}.x.example/mcp). false
// when the scheme, or the host beyond such labels, is a {variable}
// (https://{host}/mcp, {url}, https://{a}.com/mcp): the remote names no
// server of its own, and any URL might match.
func remoteURL(r model.Transport) (*regexp.Regexp, bool) {
	isVariable := func(m []int, s string) bool { _, ok := r.Variables[s[m[2]:m[3]]]; return ok }
	start := strings.Index(r.URL, "://")
	if start < 0 {
		return nil, false
	}
	start += len("://")
	end := len(r.URL) // of the authority
	if i := strings.IndexAny(r.URL[start:], "/?#"); i >= 0 {
		end = start + i
	}
	lastInHost := -1
	for _, m := range placeholder.FindAllStringSubmatchIndex(r.URL, -1) {
		if !isVariable(m, r.URL) {
			continue
		}
		if m[0] < start {
			return nil, false // in the scheme
		}
		if m[0] < end {
			lastInHost = m[1]
		}
	}
	if lastInHost >= 0 {
		rest := r.URL[lastInHost:end]
		if h, _, err := net.SplitHostPort(rest); err == nil {
			rest = h
		}
		dot := strings.IndexByte(rest, '.')
		if dot < 0 || strings.ContainsAny(rest, "@:[]") {
			return nil, false
		}
		domain := rest[dot+1:]
		if _, err := publicsuffix.EffectiveTLDPlusOne(domain); err != nil {
			return nil, false
		}
	}
	var re strings.Builder
	re.WriteString("^")
	at := 0
	for _, m := range placeholder.FindAllStringSubmatchIndex(r.URL, -1) {
		if !isVariable(m, r.URL) {
			continue
		}
		re.WriteString(regexp.QuoteMeta(r.URL[at:m[0]]))
		if m[0] < end {
			re.WriteString("[A-Za-z0-9-]*")
		} else {
			re.WriteString("[^/?#]*")
		}
		at = m[1]
	}
	re.WriteString(regexp.QuoteMeta(r.URL[at:]) + "$")
	return regexp.MustCompile(re.String()), true
}

// ChooseName sets p.Name to the first of ConfigNames(p.JSON.Name) that
// no entry of servers (a config's, by name) has, or that an entry of
// this same server has (Installs): installing a server twice then meets
// its own entry, and the config refuses it as existing already, rather
// than writing it again under a longer name. It returns the names passed
// over, another server's each, for the installer to say why the name is
// not ConfigName's. Should every one be another server's, the last is
// numbered (NAME-2, NAME-3, …, cut to stay within MaxConfigName bytes).
func (p *Plan) ChooseName(servers map[string]*config.Server) (passed []string) {
	free := func(n string) bool { sc, ok := servers[n]; return !ok || p.Installs(sc) }
	names := ConfigNames(p.JSON.Name)
	for _, n := range names {
		if free(n) {
			p.Name = n
			return passed
		}
		passed = append(passed, n)
	}
	last := names[len(names)-1]
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("-%d", i)
		base := last
		if len(base)+len(suffix) > MaxConfigName {
			base = strings.TrimRight(base[:MaxConfigName-len(suffix)], "-_")
		}
		if n := base + suffix; free(n) {
			p.Name = n
			return passed
		}
	}
}
