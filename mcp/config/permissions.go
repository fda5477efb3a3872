package config

// Permission rules, as Claude Code reads them: "permissions": {"allow":
// [...], "deny": [...], "ask": [...]} in the managed settings, the user's
// ~/.claude/settings.json, the project's .claude/settings.json and the
// project's .claude/settings.local.json.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mcplug/mcplug/internal/safefile"
)

// Behavior is what a permission rule does with the tools it matches.
type Behavior string

const (
	Allow Behavior = "allow" // permissions.allow
	Deny  Behavior = "deny"  // permissions.deny: the tool is not offered, and a call to it is refused
	Ask   Behavior = "ask"   // permissions.ask: each call waits for the user's answer
)

// Bounds of the permission rules read from one file: more rules, or a
// longer one, are left out with a warning. Leaving out an allow rule only
// narrows; a deny or ask list with more MCP rules than the bound is read
// as one rule for every MCP tool ("mcp__*"), so that a list too long to
// read never lets through what its tail would have kept out.
const (
	maxRulesPerList = 10_000
	maxRuleLength   = 4096
	maxDropIns      = 100 // files of managed-settings.d
)

// Rule is one entry of permissions.allow, deny or ask.
//
// A rule of an MCP tool names it as Claude Code exposes it, with the
// server's and the tool's names made of [a-zA-Z0-9_-] (every other
// character written '_'), case and all:
//
//   - "mcp__github" and "mcp__github__*": every tool of the server github;
//   - "mcp__github__get_issue": that tool;
//   - a '*' anywhere else is a wildcard over the whole name (any
//     characters, none too): "mcp__github__delete_*", "mcp__*". An allow
//     rule may have one only in the tool's part, after a literal
//     "mcp__<server>__".
//
// Rules of Claude Code's own tools ("Bash(git *)", "Read") are kept, and
// decide nothing for MCP tools, unless a deny or ask rule's wildcard
// matches an MCP tool's name ("*" does).
type Rule struct {
	Text     string   // as written
	Behavior Behavior // the list it is in
	Scope    Scope    // ScopeManaged, ScopeUser, ScopeProject or ScopeLocal
	Source   string   // the file it was read from
	// Ignored says why the rule is not in force, or is "" when it is: an
	// allow rule of a workspace that is not trusted, or any rule but the
	// organisation's under allowManagedPermissionRulesOnly.
	Ignored string
}

// String is the rule as its file writes it, with where it comes from.
func (r Rule) String() string {
	return fmt.Sprintf("%s %q (%s, %s)", r.Behavior, r.Text, r.Scope, r.Source)
}

// MCP reports whether the rule is written for MCP tools: it starts with
// "mcp__" and names a server.
func (r Rule) MCP() bool {
	server, _, ok := splitMCP(r.Text)
	return ok && server != ""
}

// MayMatchMCP reports whether the rule may match an MCP tool: an MCP
// rule, or a deny or ask rule whose wildcard may match one ("*"), not one
// of Claude Code's own tools with a pattern in parentheses.
func (r Rule) MayMatchMCP() bool {
	return r.MCP() || (strings.Contains(r.Text, "*") && !strings.ContainsAny(r.Text, "()"))
}

// Matches reports whether the rule names the tool tool of the server
// server (both as they name themselves: the config's server name, the
// tool's name in tools/list). Whether the rule is in force is not
// considered (see Ignored).
func (r Rule) Matches(server, tool string) bool {
	return matchRule(r.Text, SanitizeName(server), SanitizeName(tool))
}

// Permissions are the permission rules a config was loaded with, in the
// order Claude Code reads them: the organisation's managed settings, the
// user's settings, the project's settings and the project's local
// settings; in each, allow, deny, ask. Deny wins over ask, ask over
// allow, wherever a rule is written. Rules is not to change once Decide
// was called: Decide indexes it then.
type Permissions struct {
	// Rules are every rule read, those not in force too (Rule.Ignored).
	Rules []Rule
	// ManagedOnly is the managed settings' allowManagedPermissionRulesOnly:
	// only the organisation's rules are in force.
	ManagedOnly bool
	// Warnings name the entries left out: not a string, not a rule Claude
	// Code accepts (empty, a pattern in parentheses of an MCP rule, a
	// wildcard in an allow rule's server), past a bound.
	Warnings []string
	// Files are the settings files the rules were read from.
	Files []string

	once    sync.Once
	matcher *ruleMatcher
}

// Decide returns what the rules in force say of the tool tool of the
// server server: Deny if a deny rule matches it, else Ask if an ask rule
// does, else Allow if an allow rule does, else "" (no rule: an
// mcp.Manager offers and calls the tool); and the rule that decided. A
// nil Permissions decides nothing.
func (p *Permissions) Decide(server, tool string) (Behavior, *Rule) {
	if p == nil {
		return "", nil
	}
	p.once.Do(func() { p.matcher = newRuleMatcher(p.Rules) })
	return p.matcher.decide(SanitizeName(server), SanitizeName(tool))
}

// InForce returns the rules that are in force, in order.
func (p *Permissions) InForce() []Rule {
	if p == nil {
		return nil
	}
	var out []Rule
	for _, r := range p.Rules {
		if r.Ignored == "" {
			out = append(out, r)
		}
	}
	return out
}

// SanitizeName is a server's or a tool's name as it is in an exposed
// tool name (and so in a permission rule): every character but
// [a-zA-Z0-9_-] written '_', and "" written "_".
func SanitizeName(s string) string {
	if s == "" {
		return "_"
	}
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ParseRule checks one rule as Claude Code checks the entries of its
// settings: it returns the rule, or an error saying why Claude Code
// skips it.
func ParseRule(text string, behavior Behavior) (Rule, error) {
	r := Rule{Text: text, Behavior: behavior}
	switch behavior {
	case Allow, Deny, Ask:
	default:
		return r, fmt.Errorf("config: permission rule %q: behavior %q is not allow, deny or ask", text, behavior)
	}
	if err := checkRule(text, behavior); err != nil {
		return r, fmt.Errorf("config: invalid permission rule %q was skipped: %w", text, err)
	}
	return r, nil
}

// checkRule is Claude Code's check of a rule (its validation of
// settings): the reason it skips one, or nil.
func checkRule(text string, behavior Behavior) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("a permission rule cannot be empty")
	}
	if len(text) > maxRuleLength {
		return fmt.Errorf("a permission rule is at most %d bytes", maxRuleLength)
	}
	name, content, call, err := splitCall(text)
	if err != nil {
		return err
	}
	if call && content == "" {
		if name == "" {
			return fmt.Errorf("empty parentheses with no tool name")
		}
		return fmt.Errorf("empty parentheses: give a pattern or write %q without them", name)
	}
	if server, _, ok := splitMCP(name); ok && server != "" {
		if call {
			return fmt.Errorf("MCP rules do not support patterns in parentheses: write %q, or \"mcp__%s__*\" for every tool of the server", name, server)
		}
		if behavior == Allow && strings.Contains(server, "*") {
			return fmt.Errorf("a wildcard is not supported in an allow rule's server: an allow rule names the server it widens (\"mcp__github__*\", \"mcp__github__get_*\"); deny and ask rules accept wildcards anywhere")
		}
		return nil
	}
	if name == "" {
		return fmt.Errorf("the tool name cannot be empty")
	}
	if behavior == Allow && strings.Contains(name, "*") {
		return fmt.Errorf("a wildcard tool name is not supported in allow rules: write \"mcp__<server>__*\" or \"mcp__<server>__get_*\"")
	}
	if first, size := utf8.DecodeRuneInString(name); !strings.Contains(name, "_") && unicode.ToUpper(first) != first {
		return fmt.Errorf("tool names start with an uppercase letter: %q", string(unicode.ToUpper(first))+name[size:])
	}
	return nil
}

// splitCall splits "Tool(content)" as Claude Code does: a rule without
// parentheses is a bare name; one with them must end at the ')' that
// closes the first '(' (parentheses inside the content are literal).
func splitCall(text string) (name, content string, call bool, err error) {
	open, close := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 && close < 0 {
		return text, "", false, nil
	}
	name = text[:max(open, 0)]
	if open < 0 || close <= open || close != len(text)-1 || strings.ContainsAny(name, "()") {
		return "", "", false, fmt.Errorf("a malformed Tool(content) rule: it must end at the closing \")\"")
	}
	content = text[open+1 : close]
	if content == "*" {
		content = "" // Tool(*) is Tool
		return name, "", false, nil
	}
	return name, content, true, nil
}

// splitMCP splits "mcp__<server>" or "mcp__<server>__<tool>" at the first
// "__" after the prefix, as Claude Code does; ok is false for a name that
// is not an MCP one.
func splitMCP(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found || rest == "" || strings.HasPrefix(rest, "__") {
		return "", "", false
	}
	server, tool, _ = strings.Cut(rest, "__")
	return server, tool, true
}

// matchRule reports whether the rule text matches the tool tool of the
// server server, both sanitized: the whole server ("mcp__<server>"), the
// one tool ("mcp__<server>__<tool>"), or, with a '*', a wildcard over
// the whole name.
func matchRule(text, server, tool string) bool {
	full := "mcp__" + server + "__" + tool
	switch {
	case strings.ContainsAny(text, "()"):
		return false // Tool(content): one of Claude Code's own tools
	case strings.Contains(text, "*"):
		return globMatch(text, full)
	case text == "mcp__"+server, text == full:
		return true
	}
	return false
}

// globMatch matches name against pattern, whose '*' match any run of
// characters (none too); every other character matches itself.
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	rest := name[len(first) : len(name)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// ruleMatcher decides quickly over many rules: exact names in maps, the
// wildcards in a list.
type ruleMatcher struct {
	exact    [3]map[string]*Rule // by behavior: deny, ask, allow
	patterns [3][]*Rule
}

var decideOrder = [3]Behavior{Deny, Ask, Allow}

func newRuleMatcher(rules []Rule) *ruleMatcher {
	m := &ruleMatcher{}
	for i := range m.exact {
		m.exact[i] = map[string]*Rule{}
	}
	for i := range rules {
		r := &rules[i]
		if r.Ignored != "" || !r.MayMatchMCP() {
			continue
		}
		k := slices.Index(decideOrder[:], r.Behavior)
		if k < 0 {
			continue
		}
		switch {
		case strings.Contains(r.Text, "*"):
			m.patterns[k] = append(m.patterns[k], r)
		default:
			if _, dup := m.exact[k][r.Text]; !dup {
				m.exact[k][r.Text] = r
			}
		}
	}
	return m
}

func (m *ruleMatcher) decide(server, tool string) (Behavior, *Rule) {
	full := "mcp__" + server + "__" + tool
	for k, b := range decideOrder {
		if r := m.exact[k]["mcp__"+server]; r != nil {
			return b, r
		}
		if r := m.exact[k][full]; r != nil {
			return b, r
		}
		for _, r := range m.patterns[k] {
			if matchRule(r.Text, server, tool) {
				return b, r
			}
		}
	}
	return "", nil
}

// permissionFiles gathers the rules of the files Load reads, before the
// workspace's trust decides which are in force.
type permissionFiles struct {
	managed, user, project, local []Rule
	managedOnly                   bool
	warnings                      []string
	files                         []string
}

// permissionsKey is the member of a settings file that holds the rules.
const permissionsKey = "permissions"

// add reads the permission rules of the settings file path, whose members
// are m (nil for a file that is not a JSON object: nothing to read), as a
// file of scope.
func (f *permissionFiles) add(scope Scope, path string, m map[string]json.RawMessage) {
	if m == nil {
		return
	}
	if err := caseMismatch(m, permissionsKey); err != nil {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: %v: not read", path, err))
	}
	raw, ok := m[permissionsKey]
	if !ok || string(raw) == "null" {
		return
	}
	lists, err := members(raw)
	if err != nil {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: %q is not an object: not read", path, permissionsKey))
		return
	}
	if err := caseMismatch(lists, string(Allow), string(Deny), string(Ask)); err != nil {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: %s: %v: not read", path, permissionsKey, err))
	}
	f.files = append(f.files, path)
	var rules []Rule
	for _, b := range []Behavior{Allow, Deny, Ask} {
		raw, ok := lists[string(b)]
		if !ok || string(raw) == "null" {
			continue
		}
		var entries []json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			f.warnings = append(f.warnings, fmt.Sprintf("%s: permissions.%s is not an array: not read", path, b))
			continue
		}
		if b == Allow && len(entries) > maxRulesPerList {
			f.warnings = append(f.warnings, fmt.Sprintf("%s: permissions.%s has %d rules: only the first %d are read", path, b, len(entries), maxRulesPerList))
			entries = entries[:maxRulesPerList]
		}
		mcpRules, otherRules, first := 0, 0, len(rules)
		for _, e := range entries {
			var text string
			if err := json.Unmarshal(e, &text); err != nil {
				f.warnings = append(f.warnings, fmt.Sprintf("%s: permissions.%s: a value that is not a string was left out", path, b))
				continue
			}
			r, err := ParseRule(text, b)
			if err != nil {
				f.warnings = append(f.warnings, fmt.Sprintf("%s: permissions.%s: %s", path, b, strings.TrimPrefix(err.Error(), "config: ")))
				continue
			}
			r.Scope, r.Source = scope, path
			if !r.MayMatchMCP() {
				// Kept to be shown, deciding nothing for an MCP tool.
				if otherRules++; otherRules > maxRulesPerList {
					continue
				}
			} else {
				mcpRules++
			}
			rules = append(rules, r)
		}
		if mcpRules > maxRulesPerList {
			f.warnings = append(f.warnings, fmt.Sprintf("%s: permissions.%s has %d rules for MCP tools, more than %d: read as %q, every MCP tool", path, b, mcpRules, maxRulesPerList, "mcp__*"))
			all, _ := ParseRule("mcp__*", b)
			all.Scope, all.Source = scope, path
			kept := rules[:first]
			for _, r := range rules[first:] {
				if !r.MayMatchMCP() {
					kept = append(kept, r)
				}
			}
			rules = append(kept, all)
		}
	}
	switch scope {
	case ScopeManaged:
		f.managed = append(f.managed, rules...)
		var only bool
		if field(m, "allowManagedPermissionRulesOnly", &only) == nil && only {
			f.managedOnly = true
		}
	case ScopeUser:
		f.user = append(f.user, rules...)
	case ScopeProject:
		f.project = append(f.project, rules...)
	case ScopeLocal:
		f.local = append(f.local, rules...)
	}
}

// readManaged reads the rules of the organisation's managed settings:
// managed-settings.json, then the files of managed-settings.d in the
// order of their names, as Claude Code reads them. A drop-in that cannot
// be read is an error; managed-settings.json's own is LoadPolicy's, which
// then allows no server.
func (f *permissionFiles) readManaged() []*Error {
	var errs []*Error
	read := func(path string, report bool) {
		b, err := safefile.Read(path, maxUserFileSize)
		if err != nil {
			if report {
				errs = append(errs, &Error{File: path, Err: err})
			}
			return
		}
		if b == nil {
			return
		}
		m, err := members(b)
		if err != nil {
			return // LoadPolicy reports a file that is not an object
		}
		f.add(ScopeManaged, path, m)
	}
	read(managedSettingsFile(), false)
	dir := managedSettingsFile()
	dir = strings.TrimSuffix(dir, ".json") + ".d"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return errs
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if len(names) > maxDropIns {
		f.warnings = append(f.warnings, fmt.Sprintf("%s has %d files: only the first %d are read", dir, len(names), maxDropIns))
		names = names[:maxDropIns]
	}
	for _, n := range names {
		read(filepath.Join(dir, n), true)
	}
	return errs
}

// resolve is the Permissions of the files when the workspace's trust is
// trusted: the rules of the workspace's own files (project, local) are
// in force in a trusted workspace; in one that is not, only their deny
// and ask rules, which narrow what runs. Under allowManagedPermissionRulesOnly
// only the organisation's rules are.
func (f *permissionFiles) resolve(trusted bool) *Permissions {
	if len(f.files) == 0 && len(f.warnings) == 0 {
		return nil
	}
	p := &Permissions{ManagedOnly: f.managedOnly, Warnings: slices.Clone(f.warnings), Files: slices.Clone(f.files)}
	for _, layer := range [][]Rule{f.managed, f.user, f.project, f.local} {
		for _, r := range layer {
			switch {
			case f.managedOnly && r.Scope != ScopeManaged:
				r.Ignored = "the organisation's managed settings allow only their own rules (allowManagedPermissionRulesOnly)"
			case !trusted && r.Behavior == Allow && (r.Scope == ScopeProject || r.Scope == ScopeLocal):
				r.Ignored = "an allow rule of the workspace's own settings counts only once the workspace is trusted"
			}
			p.Rules = append(p.Rules, r)
		}
	}
	return p
}
