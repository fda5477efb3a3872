package config

// Writes of server entries, as `claude mcp add/remove` makes them: the
// same files, keys and shapes, the rest of each file kept byte for byte.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcplug/mcplug/internal/safefile"
)

// Errors of the writes; each is matched with errors.Is.
var (
	// ErrExists: Add of a name the scope has already.
	ErrExists = errors.New("config: the server exists already")
	// ErrNotFound: Remove or Get of a name no scope (or not the one named) has.
	ErrNotFound = errors.New("config: no such server")
	// ErrManyScopes: Remove of a name, without a scope, that more than one
	// scope has (the error is a *ScopesError).
	ErrManyScopes = errors.New("config: the server is in more than one scope")
	// ErrBadName: a name Claude Code refuses (letters, digits, '-' and '_').
	ErrBadName = errors.New("config: invalid server name")
	// ErrLocked: another writer holds ~/.claude.json's lock longer than a
	// write takes.
	ErrLocked = errors.New("config: the file is locked by another writer")
	// ErrChanged: the file kept changing under the write.
	ErrChanged = errors.New("config: the file changed while it was written")
	// ErrManaged: Remove of a server the organisation's managed-mcp.json
	// declares.
	ErrManaged = errors.New("config: the server is managed by the organisation")
)

// ScopesError is ErrManyScopes with the scopes that have the name.
type ScopesError struct {
	Name   string
	Scopes []Scope
}

func (e *ScopesError) Error() string {
	var names []string
	for _, s := range e.Scopes {
		names = append(names, string(s))
	}
	return fmt.Sprintf("config: server %q is in more than one scope (%s); name one", e.Name, strings.Join(names, ", "))
}

func (e *ScopesError) Unwrap() error { return ErrManyScopes }

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidName returns an error matching ErrBadName unless Claude Code takes
// name as a server's: letters, digits, hyphens and underscores.
func ValidName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: names can only contain letters, numbers, hyphens, and underscores", ErrBadName, name)
	}
	return nil
}

// Entry returns the JSON entry `claude mcp add` writes for sc: for stdio,
// type, command, args and env (both always); for http and sse, type,
// url, headers (when there are some) and oauth with its clientId and
// callbackPort (when sc.OAuth has either; --client-id and
// --callback-port). Environment variables and
// headers are in the order of order, where it names them (as Claude Code
// keeps the order of its -e and -H flags), the others after it, sorted.
func Entry(sc *Server, order ...string) json.RawMessage {
	var ms []member
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	obj := func(m map[string]string) json.RawMessage {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			ia, ib := slices.Index(order, a), slices.Index(order, b)
			switch {
			case ia >= 0 && ib >= 0:
				return ia - ib
			case ia >= 0:
				return -1
			case ib >= 0:
				return 1
			}
			return strings.Compare(a, b)
		})
		var inner []member
		for _, k := range keys {
			inner = append(inner, member{k, str(m[k])})
		}
		return objectText(inner)
	}
	switch sc.Type {
	case TypeHTTP, TypeSSE:
		ms = append(ms, member{"type", str(sc.Type)}, member{"url", str(sc.URL)})
		if len(sc.Headers) > 0 {
			ms = append(ms, member{"headers", obj(sc.Headers)})
		}
		if o := sc.OAuth; o != nil && (o.ClientID != "" || o.CallbackPort != 0) {
			var inner []member
			if o.ClientID != "" {
				inner = append(inner, member{"clientId", str(o.ClientID)})
			}
			if o.CallbackPort != 0 {
				inner = append(inner, member{"callbackPort", json.RawMessage(strconv.Itoa(o.CallbackPort))})
			}
			ms = append(ms, member{"oauth", objectText(inner)})
		}
	default:
		args, _ := json.Marshal(append([]string{}, sc.Args...))
		ms = append(ms, member{"type", str(TypeStdio)}, member{"command", str(sc.Command)}, member{"args", args}, member{"env", obj(sc.Env)})
	}
	return objectText(ms)
}

// EntryFromJSON returns the entry `claude mcp add-json` writes for the
// JSON object raw: its members that Claude Code knows, in Claude Code's
// order, others left out, and "args": [] for a stdio entry without args,
// as Claude Code writes it. The object must be a valid entry (see Parse).
func EntryFromJSON(name string, raw json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New("config: not a JSON object; check its quotes, commas and braces")
	}
	if sc := parseEntryLookup(name, raw, "the JSON given", keepVars); sc.Err != nil {
		return nil, sc.Err
	}
	var kind struct {
		Type string `json:"type"`
	}
	json.Unmarshal(raw, &kind)
	if _, ok := obj["args"]; !ok && (kind.Type == "" || kind.Type == TypeStdio) {
		obj["args"] = json.RawMessage("[]") // Claude Code's schema gives a stdio entry its args, empty
	}
	order := []string{"type", "command", "args", "env", "url", "headers", "headersHelper", "oauth", "timeout", "alwaysLoad"}
	var ms []member
	for _, k := range order {
		if v, ok := obj[k]; ok {
			ms = append(ms, member{k, compact(v)})
		}
	}
	return objectText(ms), nil
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// Change says which file a write changed: File, and for the local scope
// the project (Root) whose entry of ~/.claude.json it is.
type Change struct {
	Scope   Scope
	File    string
	Project string
}

func (c *Change) String() string {
	if c.Project != "" {
		return c.File + " [project: " + c.Project + "]"
	}
	return c.File
}

// target is where a scope's servers are written, for the project dir.
type target struct {
	dir, name string   // the file
	path      []string // the servers' object in it
	project   string   // local scope: the project's key
	lock      lockKind
	mode      os.FileMode // of a new file, less the umask
	private   bool        // never wider than 0600
	secrets   bool        // never wider than 0600 once its servers hold a secret (see holdsSecret)
	follow    bool        // written through a link the user owns (~/.claude.json)
	max       int64       // the file's bound
	create    func(depth int) (before, after []member)
}

// lockKind is the lock a write of a file takes.
type lockKind int

const (
	lockNone   lockKind = iota
	lockClaude          // Claude Code's lock of ~/.claude.json: the folder ~/.claude.json.lock
	lockFolder          // among mcplug's writers: flock(2) on the file's folder
)

func targetOf(dir string, scope Scope) (*target, error) {
	switch scope {
	case ScopeProject:
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		// Claude Code writes the .mcp.json of the directory it runs in.
		// It is the project's, to commit (0644, less the umask), unless its
		// servers hold a secret. Its lock is taken on the folder, where a
		// repository cannot plant one.
		return &target{dir: abs, name: ".mcp.json", path: []string{"mcpServers"}, lock: lockFolder, mode: 0o644, secrets: true, max: maxProjectFileSize}, nil
	case ScopeUser, ScopeLocal:
		home, err := userWriteDir()
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		t := userTarget(home)
		if scope == ScopeLocal {
			ws, err := findWorkspace(dir)
			if err != nil {
				return nil, err
			}
			t.project = ws.Root
			t.path = []string{"projects", ws.Root, "mcpServers"}
			t.create = func(depth int) (before, after []member) {
				if depth != 2 {
					return nil, nil
				}
				// A new project entry, with the keys Claude Code gives one.
				return []member{{"allowedTools", json.RawMessage("[]")}, {"mcpContextUris", json.RawMessage("[]")}},
					[]member{
						{"enabledMcpjsonServers", json.RawMessage("[]")}, {"disabledMcpjsonServers", json.RawMessage("[]")},
						{"hasTrustDialogAccepted", json.RawMessage("false")},
						{"hasClaudeMdExternalIncludesApproved", json.RawMessage("false")},
						{"hasClaudeMdExternalIncludesWarningShown", json.RawMessage("false")},
					}
			}
		}
		return t, nil
	}
	return nil, fmt.Errorf("config: invalid scope %q (local, project or user)", scope)
}

// userTarget is ~/.claude.json's servers, in the folder home (the home
// directory, or $CLAUDE_CONFIG_DIR): the user's, private, written under
// Claude Code's lock, and through a link the user keeps there (a dotfile
// manager's).
func userTarget(home string) *target {
	return &target{dir: home, name: ".claude.json", path: []string{"mcpServers"}, lock: lockClaude, mode: 0o600, private: true, follow: true, max: maxClaudeJSONSize}
}

// Bounds of a write: the lock is waited for at most lockWait (Claude
// Code holds it for a few milliseconds), one older than staleLock is a
// writer's that died (proper-lockfile's rule, which Claude Code uses),
// and a file that changes under the write is read again at most
// maxAttempts times.
const (
	staleLock   = 10 * time.Second
	maxAttempts = 5
)

var lockWait = 5 * time.Second

var errRetry = errors.New("the file changed")

// file is the target's file.
func (t *target) file() string { return filepath.Join(t.dir, t.name) }

// edit changes the target's file: decide is given the span of the
// servers' object (nil when missing) and the document, and returns the
// edits; the file is written by temporary file and rename, under the
// target's lock, and read again if it changed meanwhile.
func (t *target) edit(ctx context.Context, decide func(servers *objectSpan, doc io.ReaderAt) ([]jsonEdit, error)) error {
	path := t.file()
	unlock := func() {}
	var err error
	switch t.lock {
	case lockClaude:
		// $CLAUDE_CONFIG_DIR may name a folder not made yet: Claude Code
		// makes it, with its parents.
		if _, err := os.Lstat(t.dir); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(t.dir, 0o700); err != nil {
				return &Error{File: path, Err: err}
			}
		}
		unlock, err = lockFile(ctx, path)
	case lockFolder:
		unlock, err = lockDir(ctx, t.dir)
	}
	if err != nil {
		return &Error{File: path, Err: err}
	}
	defer unlock()
	for range maxAttempts {
		err := t.editOnce(decide)
		if !errors.Is(err, errRetry) {
			if err != nil {
				return &Error{File: path, Err: err}
			}
			return nil
		}
	}
	return &Error{File: path, Err: ErrChanged}
}

func (t *target) editOnce(decide func(servers *objectSpan, doc io.ReaderAt) ([]jsonEdit, error)) error {
	path := t.file()
	max := t.max
	if max == 0 {
		max = maxProjectFileSize
	}
	f, err := safefile.Open(path, max)
	if err != nil {
		return err
	}
	var doc io.ReaderAt
	var size int64
	var before os.FileInfo
	if f == nil {
		doc, size = strings.NewReader("{\n}"), 3
	} else {
		defer f.Close()
		if before, err = f.Stat(); err != nil {
			return err
		}
		doc, size = f, before.Size()
		if size == 0 { // an empty file is an empty object
			doc, size = strings.NewReader("{\n}"), 3
		}
	}
	spans, err := locate(io.NewSectionReader(doc, 0, size), [][]string{t.path})
	if err != nil {
		return fmt.Errorf("not written: it is not valid JSON: %w", withLine(err, doc))
	}
	servers := spans[strings.Join(t.path, "\x00")]
	edits, err := decide(servers, doc)
	if err != nil {
		return err
	}
	splices, err := plan(doc, size, spans, edits)
	if err != nil {
		return err
	}
	if len(splices) == 0 {
		return nil // nothing changes: the file is not written (nor made)
	}
	private := t.private
	if t.secrets && !private {
		if private, err = serversHoldSecret(doc, servers, edits); err != nil {
			return err
		}
	}
	return safefile.WriteWith(t.dir, t.name, &safefile.WriteOptions{
		Mode: t.mode, Private: private, FollowOwnLink: t.follow,
		BeforeRename: func(now os.FileInfo) error {
			switch {
			case before == nil && now == nil:
				return nil
			case before == nil || now == nil:
				return errRetry
			case !os.SameFile(before, now) || before.Size() != now.Size() || !before.ModTime().Equal(now.ModTime()):
				return errRetry
			}
			return nil
		},
	}, func(w io.Writer) error {
		if err := apply(w, doc, size, splices); err != nil {
			return err
		}
		if f == nil || size == 3 && before != nil && before.Size() == 0 {
			_, err = io.WriteString(w, "\n")
		}
		return err
	})
}

// serversHoldSecret reports whether a server of the object, once the
// edits are made, holds a secret (see holdsSecret).
func serversHoldSecret(doc io.ReaderAt, servers *objectSpan, edits []jsonEdit) (bool, error) {
	edited := map[string]bool{}
	for _, e := range edits {
		if e.value != nil && holdsSecret(e.value) {
			return true, nil
		}
		edited[e.name] = true
	}
	if servers == nil {
		return false, nil
	}
	for _, m := range servers.members {
		if edited[m.name] {
			continue
		}
		raw := make([]byte, m.valueEnd-m.valueStart)
		if _, err := doc.ReadAt(raw, m.valueStart); err != nil {
			return false, err
		}
		if holdsSecret(raw) {
			return true, nil
		}
	}
	return false, nil
}

// has reports whether the servers' object has the name.
func has(servers *objectSpan, name string) bool {
	return servers != nil && slices.ContainsFunc(servers.members, func(m memberSpan) bool { return m.name == name })
}

// Add writes the server name, with its JSON entry (Entry or
// EntryFromJSON), to scope, for the project of dir: ScopeLocal is the
// project's entry of ~/.claude.json, ScopeProject the .mcp.json of dir,
// ScopeUser ~/.claude.json's own "mcpServers". A name the scope has
// already is an error matching ErrExists, and nothing is written. The
// rest of the file is kept byte for byte; the file is replaced by
// rename. A new file is made with its mode less the umask (.mcp.json
// 0644, ~/.claude.json 0600); ~/.claude.json is never wider than 0600,
// and neither is a .mcp.json whose servers hold a secret: a value of
// env or headers, an oauth client secret, or the user information or a
// query value of a url, written out rather than as ${VAR} references (a
// setting cannot be told from a secret; arguments never count, a secret
// belongs in env). A .mcp.json that is a
// link is never written through; a ~/.claude.json that is a link the
// user keeps (a dotfile manager's) is: the file it leads to is replaced
// and the link kept, unless a link on the way, the file or its folder is
// another user's or the folder is writable by every user (ErrNotOwned).
// ~/.claude.json is written under the lock Claude Code takes, .mcp.json
// under flock(2) on its folder (a .mcp.json.lock a repository ships is
// no lock), and a file that another writer changes meanwhile is read
// again, so neither write is lost. A file that is not valid JSON is
// never written (the error says where it is broken). The organisation's
// policy judges the entry as Load will read it (ErrPolicy).
func Add(ctx context.Context, dir string, scope Scope, name string, entry json.RawMessage) (*Change, error) {
	return write(ctx, dir, scope, name, entry, false)
}

// Replace is Add that replaces the entry the scope has of the name, in
// its place, if it has one.
func Replace(ctx context.Context, dir string, scope Scope, name string, entry json.RawMessage) (*Change, error) {
	return write(ctx, dir, scope, name, entry, true)
}

func write(ctx context.Context, dir string, scope Scope, name string, entry json.RawMessage, replace bool) (*Change, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(entry, &obj); err != nil || obj == nil {
		return nil, errors.New("config: the entry is not a JSON object")
	}
	policy, err := LoadPolicy()
	if err != nil {
		return nil, err
	}
	if policy != nil && policy.Managed != nil {
		return nil, fmt.Errorf("%w: the organisation's MCP configuration (%s) is active and has exclusive control over MCP servers", ErrPolicy, managedMCPFile())
	}
	sc := parseEntryLookup(name, entry, "the entry", keepVars)
	if sc.Err != nil {
		return nil, sc.Err
	}
	// The policy judges the entry as Load will read it, its ${VAR}s
	// expanded from the environment (and, for a deny entry, as written).
	judged := parseEntry(name, entry, "the entry")
	if judged.Err != nil {
		judged = sc
	}
	if ok, why := policy.Allows(judged); !ok {
		return nil, fmt.Errorf("%w: %q: %s", ErrPolicy, name, why)
	}
	t, err := targetOf(dir, scope)
	if err != nil {
		return nil, err
	}
	err = t.edit(ctx, func(servers *objectSpan, _ io.ReaderAt) ([]jsonEdit, error) {
		if !replace && has(servers, name) {
			return nil, fmt.Errorf("%w: %s has a server %q", ErrExists, scopeName(scope), name)
		}
		return []jsonEdit{{path: t.path, name: name, value: compact(entry), create: t.create}}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Change{Scope: scope, File: t.file(), Project: t.project}, nil
}

// Remove removes the server name from scope, or with scope "" from the
// one scope that has it (local, project, then user, as Claude Code looks);
// a name no scope has matches ErrNotFound, one more than one has is a
// *ScopesError (ErrManyScopes), and one the organisation's
// managed-mcp.json declares matches ErrManaged. The file is written as
// Add writes it.
func Remove(ctx context.Context, dir string, scope Scope, name string) (*Change, error) {
	if managed, err := ManagedServers(); err == nil && managed[name] != nil {
		return nil, fmt.Errorf("%w: %q is in %s", ErrManaged, name, managedMCPFile())
	}
	if scope == "" {
		in, err := ScopesOf(dir, name)
		if err != nil {
			return nil, err
		}
		switch len(in) {
		case 0:
			return nil, fmt.Errorf("%w named %q", ErrNotFound, name)
		case 1:
			scope = in[0]
		default:
			return nil, &ScopesError{Name: name, Scopes: in}
		}
	}
	t, err := targetOf(dir, scope)
	if err != nil {
		return nil, err
	}
	err = t.edit(ctx, func(servers *objectSpan, _ io.ReaderAt) ([]jsonEdit, error) {
		if !has(servers, name) {
			return nil, fmt.Errorf("%w named %q in %s", ErrNotFound, name, scopeName(scope))
		}
		return []jsonEdit{{path: t.path, name: name}}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Change{Scope: scope, File: t.file(), Project: t.project}, nil
}

// ScopesOf returns the scopes whose files have the server name, for the
// project of dir, in the order Claude Code looks: local, project, user.
func ScopesOf(dir, name string) ([]Scope, error) {
	var out []Scope
	for _, scope := range []Scope{ScopeLocal, ScopeProject, ScopeUser} {
		t, err := targetOf(dir, scope)
		if err != nil {
			return nil, err
		}
		f, err := safefile.Open(t.file(), maxClaudeJSONSize)
		if err != nil {
			return nil, &Error{File: t.file(), Err: err}
		}
		if f == nil {
			continue
		}
		info, err := f.Stat()
		if err != nil || info.Size() == 0 {
			f.Close()
			continue
		}
		spans, err := locate(io.NewSectionReader(f, 0, info.Size()), [][]string{t.path})
		if err != nil {
			err = withLine(err, f)
			f.Close()
			return nil, &Error{File: t.file(), Err: fmt.Errorf("it is not valid JSON: %w", err)}
		}
		f.Close()
		if has(spans[strings.Join(t.path, "\x00")], name) {
			out = append(out, scope)
		}
	}
	return out, nil
}

// ResetProjectChoices forgets the user's approvals and rejections of the
// project servers (.mcp.json) of dir's project, as `claude mcp
// reset-project-choices` does: enabledMcpjsonServers,
// disabledMcpjsonServers and enableAllProjectMcpServers leave the
// project's entry of ~/.claude.json and the project's
// .claude/settings.local.json (where SaveApproval writes them). A file
// that has none of them is not written.
func ResetProjectChoices(ctx context.Context, dir string) (*Change, error) {
	t, err := targetOf(dir, ScopeLocal)
	if err != nil {
		return nil, err
	}
	local := &target{dir: filepath.Join(t.project, ".claude"), name: "settings.local.json", mode: 0o600, private: true}
	t.path = t.path[:2] // the project's entry
	for _, t := range []*target{t, local} {
		err := t.edit(ctx, func(*objectSpan, io.ReaderAt) ([]jsonEdit, error) {
			var edits []jsonEdit
			for _, k := range []string{"enabledMcpjsonServers", "disabledMcpjsonServers", "enableAllProjectMcpServers"} {
				edits = append(edits, jsonEdit{path: t.path, name: k})
			}
			return edits, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return &Change{Scope: ScopeLocal, File: t.file(), Project: t.project}, nil
}

// Get returns the entry of the server name in scope, for the project of
// dir, as that scope's file has it (its ${VAR}s expanded as Load expands
// them); a name the scope does not have matches ErrNotFound.
func Get(dir string, scope Scope, name string) (*Server, error) {
	t, err := targetOf(dir, scope)
	if err != nil {
		return nil, err
	}
	f, err := safefile.Open(t.file(), maxClaudeJSONSize)
	if err != nil {
		return nil, &Error{File: t.file(), Err: err}
	}
	if f == nil {
		return nil, fmt.Errorf("%w named %q in %s", ErrNotFound, name, scopeName(scope))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, &Error{File: t.file(), Err: err}
	}
	spans, err := locate(io.NewSectionReader(f, 0, info.Size()), [][]string{t.path})
	if err != nil {
		return nil, &Error{File: t.file(), Err: fmt.Errorf("it is not valid JSON: %w", withLine(err, f))}
	}
	servers := spans[strings.Join(t.path, "\x00")]
	var last *memberSpan
	if servers != nil {
		for i := range servers.members {
			if servers.members[i].name == name {
				last = &servers.members[i]
			}
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%w named %q in %s", ErrNotFound, name, scopeName(scope))
	}
	raw := make([]byte, last.valueEnd-last.valueStart)
	if _, err := f.ReadAt(raw, last.valueStart); err != nil {
		return nil, &Error{File: t.file(), Err: err}
	}
	sc := parseEntry(name, raw, t.file())
	sc.Scope = scope
	return sc, nil
}
