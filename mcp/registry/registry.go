// Package registry installs MCP servers from an MCP registry (the
// official one by default): it reads the registry's v0.1 API, and maps a
// server's server.json to a config entry as Claude Code writes them,
// asking the user only for what the entry needs.
//
//	c := &registry.Client{}
//	s, err := c.Get(ctx, "io.github.example/weather-mcp", "latest")
//	plan, err := registry.PlanFor(s, nil)
//	for _, in := range plan.Inputs { in.Value = ask(in.Prompt()) }
//	sc, err := plan.Server()
//	config.Add(ctx, ".", config.ScopeLocal, plan.Name, config.Entry(sc))
//	for _, v := range plan.Variables() { tell("set " + v.Name) }
//
// A server.json comes from a stranger, so what it holds is data, never
// an instruction to the config:
//
//   - No "${" of the publisher's reaches the entry (the config expands
//     ${VAR} from the user's environment when it is loaded, and has no
//     escape): a server.json whose value, default, choice or URL holds
//     one, or whose values would form one side by side, is refused.
//   - A secret (an input marked isSecret, or one whose name says it is a
//     token, password, secret or API key) is never asked for and never
//     written: the entry holds ${VAR}, VAR named for the server
//     (Plan.Variables), and the user sets VAR in the environment.
//   - A package runs with the runner of its registry type and nothing
//     else: npm → npx -y NAME@VERSION, PyPI → uvx NAME@VERSION, OCI →
//     docker run -i --rm IMAGE, NuGet → dnx ID@VERSION --yes; names,
//     versions and image references are checked as their registries
//     spell them (none can be taken for an option), runtimeHint must be
//     that runner, registryBaseUrl the registry the runner takes the
//     package from (never a same-named public package in place of a
//     company's), a runtime argument must be an option the runner is
//     known to take harmlessly, and no environment variable may be one
//     the runner reads itself (NODE_OPTIONS, npm_config_*, UV_*,
//     DOCKER_*, LD_PRELOAD…); what a container gets of the user's
//     machine (a host path to mount, a file of variables, a variable
//     of the user's environment) the user names, never the server.json.
//   - A remote is https without credentials in its URL; plain http only
//     to the loopback interface.
//
// The types are the registry's own (github.com/modelcontextprotocol/registry).
package registry

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultURL is the official MCP Registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// MaxResponseSize bounds an answer of a registry, in bytes; MaxInputs the
// inputs one plan may ask the user for and the variables it may have
// the user set, counted together (a plan that needs more is refused);
// DefaultTimeout bounds each request to a registry when the Client sets
// no Timeout; MaxDescription the description of an Input or a Variable,
// in bytes, past which it is cut (the longest of the tested server.json
// files has 405).
const (
	MaxResponseSize = 8 << 20
	MaxInputs       = 64
	DefaultTimeout  = 30 * time.Second
	MaxDescription  = 500
)

// Errors of the registry and of the mapping, matched with errors.Is.
var (
	// ErrNotFound: the registry has no such server or version.
	ErrNotFound = errors.New("registry: no such server")
	// ErrUnsupported: the server.json cannot be installed; the error (a
	// *RefusedError) says why for each package and remote.
	ErrUnsupported = errors.New("registry: the server cannot be installed")
	// ErrUnsafe: among those reasons, one is a value that would run or
	// reveal what the user did not choose (a "${", an option for a name,
	// a runner of the publisher's, a remote in clear).
	ErrUnsafe = errors.New("registry: unsafe server.json")
	// ErrAnswer: an answer is missing, or not one the input takes.
	ErrAnswer = errors.New("registry: answer refused")
)

// RefusedError is PlanFor's error: the server and, for each package and
// remote tried, why it was not used. It matches ErrUnsupported, and
// ErrUnsafe when one of the reasons does.
type RefusedError struct {
	Server  string
	Reasons []error
}

func (e *RefusedError) Error() string {
	why := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		why[i] = r.Error()
	}
	return fmt.Sprintf("%s %s: %s", ErrUnsupported, e.Server, strings.Join(why, "; "))
}

// Is reports whether target is ErrUnsupported.
func (e *RefusedError) Is(target error) bool { return target == ErrUnsupported }

// Unwrap returns the reasons.
func (e *RefusedError) Unwrap() []error { return e.Reasons }

// unsafe is a reason matching ErrUnsafe, with its own text.
type unsafe struct{ msg string }

func (u *unsafe) Error() string        { return u.msg }
func (u *unsafe) Is(target error) bool { return target == ErrUnsafe }

func unsafef(format string, args ...any) error { return &unsafe{fmt.Sprintf(format, args...)} }

// answerError is Server's error for an input: it matches ErrAnswer.
type answerError struct{ msg string }

func (a *answerError) Error() string        { return "registry: " + a.msg }
func (a *answerError) Is(target error) bool { return target == ErrAnswer }
