package main

// The command lines of mcpls's subcommands, read as Claude Code 2.1.332
// reads `claude mcp …` (its parser is commander.js): options anywhere
// before "--", a value in the next word, after "=" (--scope=user) or, for
// a one-letter option, in the same word (-suser); a list option (-e, -H)
// takes every following word up to the next option; "--" ends the
// options, and what follows is taken as it is; an option the command does
// not know is refused, and so is a value missing; -h or --help anywhere
// before "--" prints the command's usage. Arguments past those the
// command takes are left unused, as Claude Code leaves them (mcpls says
// so on stderr).

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcplug/mcplug/mcp/config"
)

// An option is one option of a subcommand.
type option struct {
	short string   // "-s", or ""
	long  string   // "--scope", or ""
	alias []string // mcpls's own other spellings ("-registry")
	value string   // the value's name in the usage ("SCOPE"); "" for a flag
	list  bool     // takes the words that follow, up to the next option
	help  string
	set   func(c *cmdLine, v string) // v is "" for a flag
}

// names are the option's spellings.
func (o *option) names() []string {
	var n []string
	for _, s := range append([]string{o.short, o.long}, o.alias...) {
		if s != "" {
			n = append(n, s)
		}
	}
	return n
}

// cmdLine is a subcommand's command line once read.
type cmdLine struct {
	scope        config.Scope
	scopeSet     bool
	transport    string
	env          []string
	headers      []string
	clientID     string
	callbackPort string
	clientSecret bool
	dir          string
	registry     string
	name         string
	yes          bool
	all          bool // install: ask for the optional inputs too
	args         []string
	extra        []string // arguments past those the command takes
}

// errUsage is matched by the errors of a command line mcpls cannot read.
var errUsage = errors.New("mcpls: wrong command line")

// usageError is a command line mcpls cannot read.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == errUsage }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// maybeOption is commander's test of a word that may be an option: a
// dash and something after it ("-" alone is an argument).
func maybeOption(arg string) bool { return len(arg) > 1 && arg[0] == '-' }

// find returns the option of cmd spelt s.
func (cmd *command) find(s string) *option {
	for _, o := range cmd.opts {
		for _, n := range o.names() {
			if n == s {
				return o
			}
		}
	}
	return nil
}

// isHelp reports whether arg asks for the usage.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" }

// parse reads args, the words after the subcommand's name. help reports
// that the usage was asked for; err matches errUsage.
func (cmd *command) parse(args []string) (c *cmdLine, help bool, err error) {
	c = &cmdLine{scope: config.ScopeLocal, transport: config.TypeStdio, dir: "."}
	var operands, unknown []string
	dest := &operands
	var active *option // a list option taking the words that follow
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if dest == &unknown {
				unknown = append(unknown, arg)
			}
			*dest = append(*dest, args[i+1:]...)
			break
		}
		if active != nil && !maybeOption(arg) {
			active.set(c, arg)
			continue
		}
		active = nil
		if maybeOption(arg) {
			if o := cmd.find(arg); o != nil {
				if o.value == "" {
					o.set(c, "")
				} else {
					if i+1 >= len(args) {
						return nil, false, usagef("mcpls %s: option %s needs a value (%s)", cmd.name, strings.Join(o.names(), ", "), o.value)
					}
					i++
					o.set(c, args[i])
				}
				if o.list {
					active = o
				}
				continue
			}
		}
		// A one-letter option and its value in one word (-suser), or
		// one-letter flags together.
		if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
			if o := cmd.find(arg[:2]); o != nil {
				if o.value != "" {
					o.set(c, arg[2:])
				} else {
					o.set(c, "")
					args = append(args[:i+1:i+1], append([]string{"-" + arg[2:]}, args[i+1:]...)...)
				}
				continue
			}
		}
		// --name=value
		if strings.HasPrefix(arg, "-") {
			if name, value, ok := strings.Cut(arg, "="); ok && name != "-" && name != "--" {
				if o := cmd.find(name); o != nil && o.value != "" {
					o.set(c, value)
					continue
				}
			}
		}
		if maybeOption(arg) {
			dest = &unknown // what follows an unknown option is its, not the command's
		}
		*dest = append(*dest, arg)
	}
	for _, a := range unknown {
		if isHelp(a) {
			return c, true, nil
		}
	}
	if len(unknown) > 0 {
		msg := fmt.Sprintf("mcpls %s: unknown option %s", cmd.name, safe(unknown[0]))
		if cmd.name == "add" && len(operands) >= 2 {
			msg += fmt.Sprintf(" (a server's own options go after --: mcpls add %s -- %s)", shellQuote(operands[0]), shellJoin(append(operands[1:], unknown...)))
		}
		return nil, false, usagef("%s", msg)
	}
	for i, name := range cmd.need {
		if i >= len(operands) {
			return nil, false, usagef("mcpls %s: missing %s\n%s", cmd.name, name, cmd.synopsis())
		}
	}
	c.args = operands
	if !cmd.more && len(operands) > len(cmd.need)+len(cmd.optional) {
		c.args, c.extra = operands[:len(cmd.need)+len(cmd.optional)], operands[len(cmd.need)+len(cmd.optional):]
	}
	switch c.scope {
	case config.ScopeLocal, config.ScopeProject, config.ScopeUser:
	default:
		return nil, false, usagef("mcpls %s: invalid scope %s: local, project or user", cmd.name, safe(string(c.scope)))
	}
	return c, false, nil
}

// shellJoin is words as a shell command line.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// Options more than one subcommand takes.
var (
	dirOption = &option{short: "-C", value: "DIR", help: "the project directory (default: the working directory)",
		set: func(c *cmdLine, v string) { c.dir = v }}
	scopeOption = &option{short: "-s", long: "--scope", value: "SCOPE", help: "local, user or project (default: local)",
		set: func(c *cmdLine, v string) { c.scope, c.scopeSet = config.Scope(v), true }}
	// helpOption is shown in every usage; parse finds it among the
	// words it does not know, as commander does.
	helpOption = &option{short: "-h", long: "--help", help: "print this usage"}
)
