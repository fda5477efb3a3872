package registry

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"github.com/modelcontextprotocol/registry/pkg/model"

	"github.com/mcplug/mcplug/mcp/config"
)

// runner is how a registry type's packages run.
type runner struct {
	title    string   // how the registry's packages are called
	runs     string   // what the runner's first positional argument names
	command  string   // the one runtimeHint taken
	defaults []string // before the runtime arguments
	// flags are the runtime arguments the runner takes from a
	// server.json: true when the flag takes a value. Others would change
	// what runs (npx --call, -p; uvx --from, --with; docker --entrypoint,
	// --privileged) and are refused, or left out when optional.
	flags map[string]bool
	// reads are the environment variables the runner reads itself, to
	// choose where the package comes from or what runs first (npm's
	// registry, node's --import, uv's index, a .NET startup hook,
	// docker's daemon): names, or prefixes ending in '_', in capitals.
	reads []string
}

var runners = map[string]*runner{
	"npm":  {title: "npm package", runs: "package", command: "npx", defaults: []string{"-y"}, flags: map[string]bool{"-y": false, "--yes": false}, reads: []string{"NODE_OPTIONS", "NPM_CONFIG_"}},
	"pypi": {title: "PyPI package", runs: "package", command: "uvx", flags: map[string]bool{"--python": true, "-p": true, "--quiet": false, "-q": false, "--offline": false, "--native-tls": false}, reads: []string{"UV_"}},
	"oci": {title: "OCI image", runs: "image", command: "docker", defaults: []string{"run", "-i", "--rm"}, flags: map[string]bool{
		"-e": true, "--env": true, "--env-file": true, "-v": true, "--volume": true, "--mount": true, "-p": true, "--publish": true,
		"--network": true, "--net": true, "-w": true, "--workdir": true, "--add-host": true, "--pull": true, "--platform": true,
		"-u": true, "--user": true, "--name": true, "-l": true, "--label": true,
		"-i": false, "--interactive": false, "--rm": false, "--init": false, "--read-only": false,
	}, reads: []string{"DOCKER_"}},
	"nuget": {title: "NuGet package", runs: "package", command: "dnx", flags: map[string]bool{"--yes": false}, reads: []string{"DOTNET_", "NUGET_"}},
}

// loaderReads are the environment variables every runner's process
// reads before it runs: the dynamic loader's, and where programs are
// found.
var loaderReads = []string{"LD_", "DYLD_", "PATH"}

// readByRunner reports whether the runner reads the environment
// variable name itself (see runner.reads and loaderReads).
func (r *runner) readByRunner(name string) bool {
	n := strings.ToUpper(name)
	for _, p := range append(slices.Clone(loaderReads), r.reads...) {
		if n == p || strings.HasSuffix(p, "_") && strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// Identifiers and versions, as their registries spell them. None starts
// with '-', so none can be taken for an option; a version is a version,
// never a spec naming another package (npm's "npm:other@1").
var (
	npmName     = regexp.MustCompile(`^(@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$`)
	semver      = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	pypiName    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	pep440      = regexp.MustCompile(`^([0-9]+!)?[0-9]+(\.[0-9]+)*([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?((-[0-9]+)|([-_.]?(post|rev|r)[-_.]?[0-9]*))?([-_.]?dev[-_.]?[0-9]*)?(\+[a-z0-9]+([-_.][a-z0-9]+)*)?$`)
	nugetID     = regexp.MustCompile(`^[A-Za-z0-9_]+([.-][A-Za-z0-9_]+)*$`)
	nugetVer    = regexp.MustCompile(`^[0-9]+(\.[0-9]+){1,3}(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	envVarName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// registries are where each runner takes packages from, unless told
// otherwise (which no entry does): a package whose registryBaseUrl names
// another registry is not the package the runner would run.
var registries = map[string]string{
	"npm":   model.RegistryURLNPM,
	"pypi":  model.RegistryURLPyPI,
	"nuget": model.RegistryURLNuGet,
}

// dockerHub are the names of Docker Hub, where an image whose name has
// no registry comes from.
var dockerHub = []string{"docker.io", "index.docker.io", "registry-1.docker.io"}

// sameRegistry reports whether the registry base URLs a and b are one:
// compared as URLs (case of scheme and host, a trailing slash).
func sameRegistry(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.Path, "/")
	}
	return norm(a) == norm(b)
}

// fromItsRegistry refuses a package whose registryBaseUrl names another
// registry than the one its runner takes it from: the runner would run
// the package of that name there (a company's package name, taken on
// the public registry by anyone), not the one the server.json names. An
// image is taken from the registry its name names.
func fromItsRegistry(pkg *model.Package, image reference.Named) error {
	base := pkg.RegistryBaseURL
	if base == "" {
		return nil
	}
	if image == nil {
		if want := registries[pkg.RegistryType]; !sameRegistry(base, want) {
			return unsafef("%s is a package of the registry %s, but %s would take a package of that name from %s", pkg.Identifier, base, runners[pkg.RegistryType].command, want)
		}
		return nil
	}
	domain := reference.Domain(image)
	u, err := url.Parse(base)
	host := ""
	if err == nil && strings.EqualFold(u.Scheme, "https") && strings.Trim(u.Path, "/") == "" {
		host = strings.ToLower(u.Host)
	}
	if host == domain || slices.Contains(dockerHub, host) && slices.Contains(dockerHub, domain) {
		return nil
	}
	return unsafef("%s is an image of the registry %s, but docker would take it from %s", pkg.Identifier, base, domain)
}

// ref checks a package's identifier and version and returns what the
// runner is given: NAME@VERSION, or the image.
func ref(pkg *model.Package) (string, error) {
	id, ver := pkg.Identifier, pkg.Version
	if pkg.RegistryType != "oci" {
		if err := fromItsRegistry(pkg, nil); err != nil {
			return "", err
		}
	}
	switch pkg.RegistryType {
	case "npm":
		if len(id) > 214 || !npmName.MatchString(strings.ToLower(id)) {
			return "", unsafef("%q is not an npm package name", id)
		}
		if !semver.MatchString(ver) {
			return "", unsafef("npm package %s: its version %q is not a version (x.y.z), and npx would take it for a spec", id, ver)
		}
		return id + "@" + ver, nil
	case "pypi":
		if len(id) > 200 || !pypiName.MatchString(id) {
			return "", unsafef("%q is not a PyPI package name", id)
		}
		if !pep440.MatchString(strings.ToLower(ver)) {
			return "", unsafef("PyPI package %s: its version %q is not a version", id, ver)
		}
		return id + "@" + ver, nil
	case "nuget":
		if len(id) > 100 || !nugetID.MatchString(id) {
			return "", unsafef("%q is not a NuGet package id", id)
		}
		if !nugetVer.MatchString(ver) {
			return "", unsafef("NuGet package %s: its version %q is not a version", id, ver)
		}
		return id + "@" + ver, nil
	case "oci":
		if strings.HasPrefix(id, "-") {
			return "", unsafef("%q is not an OCI image reference", id)
		}
		named, err := reference.ParseNormalizedNamed(id)
		if err != nil {
			return "", unsafef("%q is not an OCI image reference: %v", id, err)
		}
		if err := fromItsRegistry(pkg, named); err != nil {
			return "", err
		}
		if _, ok := named.(reference.Digested); ok {
			return id, nil
		}
		tagged, ok := named.(reference.Tagged)
		if !ok {
			if ver == "" {
				return "", unsafef("OCI image %s has no tag: it would run whatever is pushed next", id)
			}
			if _, err := reference.WithTag(named, ver); err != nil {
				return "", fmt.Errorf("OCI image %s: its version %q is not a tag", id, ver)
			}
			return id + ":" + ver, nil
		}
		if tagged.Tag() == "latest" {
			return "", unsafef("OCI image %s is tagged latest: it would run whatever is pushed next", id)
		}
		return id, nil
	}
	return "", nil
}

// usePackage makes the entry of a package.
func (b *builder) usePackage(pkg *model.Package) error {
	run := runners[pkg.RegistryType]
	switch {
	case pkg.RegistryType == "mcpb":
		return fmt.Errorf("MCP bundle %s: installing .mcpb bundles is not supported (open the bundle with an app that installs them, or install another package of the server)", pkg.Identifier)
	case pkg.RegistryType == "cargo":
		return fmt.Errorf("cargo package %s: installing crates is not supported (cargo install it, then add its command to the config)", pkg.Identifier)
	case pkg.RegistryType == "":
		return fmt.Errorf("package %q names no registry type (registryType)", pkg.Identifier)
	case run == nil:
		return fmt.Errorf("package %s is of type %q, which is not installed (npm, pypi, oci and nuget are)", pkg.Identifier, pkg.RegistryType)
	}
	what := run.title + " " + pkg.Identifier
	if pkg.Transport.Type != "stdio" {
		if pkg.Transport.Type == "" {
			return fmt.Errorf("%s names no transport", what)
		}
		return fmt.Errorf("%s runs a %s server, which is not installed (stdio is)", what, pkg.Transport.Type)
	}
	if err := checkText(what+"'s identifier", pkg.Identifier); err != nil {
		return err
	}
	if err := checkText(what+"'s version", pkg.Version); err != nil {
		return err
	}
	target, err := ref(pkg)
	if err != nil {
		return err
	}
	if h := pkg.RunTimeHint; h != "" && h != run.command {
		return unsafef("%s: its runtime hint %q is not what runs a %s (%s does)", what, h, run.title, run.command)
	}
	rt, err := b.runtimeArguments(what, run, pkg.RuntimeArguments)
	if err != nil {
		return err
	}
	pa, err := b.arguments(what, pkg.PackageArguments)
	if err != nil {
		return err
	}
	for _, v := range pkg.EnvironmentVariables {
		if run.readByRunner(v.Name) {
			return unsafef("%s: its environment variable %s would change what %s runs (%s reads it itself)", what, v.Name, run.command, run.command)
		}
	}
	env, err := b.keyValues(what, "environment variable", pkg.EnvironmentVariables, func(n string) bool { return envVarName.MatchString(n) })
	if err != nil {
		return err
	}
	b.source = fmt.Sprintf("%s %s %s, run by %s", run.title, pkg.Identifier, pkg.Version, run.command)
	if pkg.RegistryType == "oci" {
		b.source = fmt.Sprintf("%s %s, run by %s", run.title, target, run.command)
	}
	oci := pkg.RegistryType == "oci"
	// runtime is the environment and the runtime arguments, each given
	// to the container checked (checkHostSide).
	runtime := func() (map[string]string, []arg, error) {
		e, err := env()
		if err != nil {
			return nil, nil, err
		}
		given, err := rt()
		if err != nil {
			return nil, nil, err
		}
		for _, a := range given {
			if !oci {
				break
			}
			if err := checkHostSide(what+"'s runtime argument", a, e); err != nil {
				return nil, nil, err
			}
		}
		return e, given, nil
	}
	if oci {
		// What the server.json alone gives, before anything is asked: a
		// fixed value, or a default an optional input falls back to.
		if _, _, err := runtime(); errors.Is(err, ErrUnsafe) {
			return err
		}
	}
	b.entry = func() (*config.Server, error) {
		e, given, err := runtime()
		if err != nil {
			return nil, err
		}
		args := slices.Clone(run.defaults)
		for _, a := range given {
			if oci && a.flag == "-e" || oci && a.flag == "--env" {
				// A secret given as -e NAME=…${VAR}… stays out of docker's
				// command line: docker reads NAME from the environment.
				if n, v, ok := strings.Cut(a.value, "="); ok && a.ref && envVarName.MatchString(n) {
					if _, taken := e[n]; !taken {
						e[n] = v
						args = append(args, a.flag, n)
						continue
					}
				}
			}
			if a.flag != "" && !run.flags[a.flag] && slices.Contains(args, a.flag) {
				continue // a flag the defaults give already
			}
			args = append(args, a.words()...)
		}
		if oci { // the container sees the environment it is given by name
			for _, n := range slices.Sorted(maps.Keys(e)) {
				if !slices.Contains(args, n) {
					args = append(args, "-e", n)
				}
			}
		}
		args = append(args, target)
		if pkg.RegistryType == "nuget" {
			args = append(args, "--yes")
		}
		rest, err := pa()
		if err != nil {
			return nil, err
		}
		if pkg.RegistryType == "nuget" && len(rest) > 0 {
			args = append(args, "--")
		}
		for _, a := range rest {
			args = append(args, a.words()...)
		}
		return &config.Server{Type: config.TypeStdio, Command: run.command, Args: args, Env: e}, nil
	}
	return nil
}

// arg is an argument as written: a flag and its value, or a value.
type arg struct {
	flag, value string
	from        []origin // of each byte of value
	hasValue    bool
	ref         bool // the value writes a reference
}

func (a arg) words() []string {
	switch {
	case a.flag == "":
		return []string{a.value}
	case a.hasValue:
		return []string{a.flag, a.value}
	}
	return []string{a.flag}
}

// argument is an argument of the server.json, ready to be written.
type argument struct {
	model.Argument
	t        template // its value; nil for a bare flag
	bool     bool     // a flag given alone when its value is "true"
	required bool
}

// arguments makes the package's arguments, after the package.
func (b *builder) arguments(what string, list []model.Argument) (func() ([]arg, error), error) {
	var all []*argument
	for i, a := range list {
		x, err := b.argument(fmt.Sprintf("%s's argument %d", what, i+1), a)
		if err != nil {
			return nil, err
		}
		all = append(all, x)
	}
	return func() ([]arg, error) { return write(all) }, nil
}

func (b *builder) argument(what string, a model.Argument) (*argument, error) {
	x := &argument{Argument: a, required: a.IsRequired}
	switch a.Type {
	case model.ArgumentTypeNamed:
		if a.Name == "" {
			return nil, fmt.Errorf("%s is named but has no name", what)
		}
		if err := checkText(what+"'s name", a.Name); err != nil {
			return nil, err
		}
		what += " " + a.Name
		if a.Value == "" && a.Description == "" && a.Default == "" && len(a.Choices) == 0 && !a.IsSecret && a.Format == "" && a.Placeholder == "" {
			return x, nil // a bare flag, always given
		}
		x.bool = a.Value == "" && a.Format == model.FormatBoolean
	case model.ArgumentTypePositional:
	default:
		return nil, fmt.Errorf("%s is of type %q (named and positional are known)", what, a.Type)
	}
	name := strings.TrimLeft(a.Name, "-")
	if name == "" {
		name = a.ValueHint
	}
	t, err := b.template(what, "argument", name, a.InputWithVariables)
	if err != nil {
		return nil, err
	}
	x.t = t
	return x, nil
}

// write gives the arguments as they are written: each with its value,
// or left out when an optional one has none.
func write(all []*argument) ([]arg, error) {
	var out []arg
	for _, x := range all {
		if x.t == nil {
			out = append(out, arg{flag: x.Name})
			continue
		}
		v, from, ok, err := x.t.fill("the argument "+x.Name, x.required)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		switch {
		case x.bool && v == "true":
			out = append(out, arg{flag: x.Name})
		case x.bool:
		case x.Type == model.ArgumentTypeNamed:
			out = append(out, arg{flag: x.Name, value: v, from: from, hasValue: true, ref: x.t.hasRef()})
		default:
			out = append(out, arg{value: v, from: from, ref: x.t.hasRef()})
		}
	}
	return out, nil
}

// runtimeArguments makes the runner's arguments, before the package:
// each must be a flag the runner takes (a positional one only as such a
// flag, as "-y" for npx), or the package is refused; an optional one the
// runner does not take is left out, and never asked.
func (b *builder) runtimeArguments(what string, run *runner, list []model.Argument) (func() ([]arg, error), error) {
	var all []*argument
	for i, a := range list {
		w := fmt.Sprintf("%s's runtime argument %d", what, i+1)
		always := a.IsRequired || (a.Value != "" && len(a.Variables) == 0)
		flag, takesValue, known := a.Name, false, false
		if a.Type == model.ArgumentTypePositional {
			flag = a.Value
			takes, ok := run.flags[flag]
			known = ok && !takes && len(a.Variables) == 0
		} else {
			takesValue, known = run.flags[flag]
			bare := a.Value == "" && a.Description == "" && a.Default == "" && len(a.Choices) == 0 && !a.IsSecret && a.Format == "" && a.Placeholder == ""
			if bare {
				always = true
			}
			if known && takesValue == bare { // a flag without its value, or a value for a flag that takes none
				known = false
			}
		}
		if !known {
			desc := flag
			if desc == "" {
				desc = a.ValueHint
			}
			if !always {
				b.notes = append(b.notes, fmt.Sprintf("left out: the optional runtime argument %s, which %s is not given from a server.json", desc, run.command))
				continue
			}
			if a.Type == model.ArgumentTypePositional {
				return nil, unsafef("%s: %s would take %q for the %s to run", w, run.command, desc, run.runs)
			}
			return nil, unsafef("%s: %s is not an option of %s a server.json may give", w, desc, run.command)
		}
		if a.Type == model.ArgumentTypePositional {
			all = append(all, &argument{Argument: model.Argument{Type: model.ArgumentTypeNamed, Name: flag}})
			continue
		}
		x, err := b.argument(w, a)
		if err != nil {
			return nil, err
		}
		if strings.Contains(a.Value+a.Default, "docker.sock") {
			return nil, unsafef("%s mounts docker's socket, which gives the container the host", w)
		}
		all = append(all, x)
	}
	return func() ([]arg, error) { return write(all) }, nil
}

// keyValues makes environment variables or headers, each name checked
// by valid.
func (b *builder) keyValues(what, kind string, kvs []model.KeyValueInput, valid func(string) bool) (func() (map[string]string, error), error) {
	type kv struct {
		name     string
		t        template
		required bool
	}
	var all []kv
	for _, x := range kvs {
		if !valid(x.Name) {
			return nil, fmt.Errorf("%s: %q is not the name of a%s %s", what, x.Name, map[bool]string{true: "n", false: ""}[kind[0] == 'e'], kind)
		}
		t, err := b.template(fmt.Sprintf("%s's %s %s", what, kind, x.Name), kind, x.Name, x.InputWithVariables)
		if err != nil {
			return nil, err
		}
		all = append(all, kv{x.Name, t, x.IsRequired})
	}
	return func() (map[string]string, error) {
		out := map[string]string{}
		for _, x := range all {
			v, _, ok, err := x.t.fill("the "+kind+" "+x.name, x.required)
			if err != nil {
				return nil, err
			}
			if ok {
				out[x.name] = v
			}
		}
		return out, nil
	}, nil
}
