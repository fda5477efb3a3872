package mcp

// Skills over MCP (io.modelcontextprotocol/skills): a server publishes
// Agent Skills, directories of files whose SKILL.md carries YAML
// frontmatter, as resources; skills/list and skills/get return each
// skill's entry, a complete manifest of its files with their SHA-256
// digests and sizes. This file is the wire: the declaration, the entry
// and its checks, the listing, skills/get and resources/directory/read.
// The verified read of a skill's files is in skillverify.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcplug/mcplug/internal/paging"
)

// ExtensionSkills names the Skills extension. A server declares it in its
// capabilities' extensions; a client may declare it too (SkillsExtension),
// to tell the server it uses skills.
const ExtensionSkills = "io.modelcontextprotocol/skills"

// SkillsExtension returns the client's declaration of ExtensionSkills, for
// Options.Extensions or ManagerOptions.Extensions. The client's methods
// of the extension work whether or not it is declared: what counts is
// the server's declaration.
func SkillsExtension() map[string]json.RawMessage {
	return map[string]json.RawMessage{ExtensionSkills: json.RawMessage(`{}`)}
}

// The limits of one skill the extension fixes: every conforming host
// accepts a skill up to them, and this package refuses one past them
// (a *SkillLimitError, from the entry alone, before any file is read).
const (
	MaxSkillResources = 512      // files in a skill's manifest, SKILL.md included
	MaxSkillBytes     = 16 << 20 // the sum of the sizes of a skill's files (16 MiB)
)

// MaxListedSkills bounds the skills ListSkills keeps of one listing; the
// rest are dropped with a warning in the log.
const MaxListedSkills = 10000

// Bounds on what a server's entries may cost, beyond the extension's own
// limits; past them an entry is invalid (a *SkillEntryError).
const (
	maxSkillEntryBytes       = 2 << 20   // one entry as JSON: 512 files of long URIs fit
	maxSkillFrontmatterBytes = 64 << 10  // the entry's frontmatter as JSON, and SKILL.md's as YAML
	maxSkillURIBytes         = 2048      // a skill's or a file's URI
	maxSkillNameBytes        = 64        // the Agent Skills specification's limit
	maxSkillDescriptionRunes = 1024      // likewise
	maxSkillListingBytes     = 64 << 20  // the entries one ListSkills keeps, as JSON
	maxDirectoryEntries      = 10000     // the children ReadDirectory keeps
	maxSkillListTTL          = time.Hour // the longest a listing is taken as fresh, whatever its ttlMs
)

// Errors of the extension, matched with errors.Is.
var (
	// ErrNoSkills: the server does not declare ExtensionSkills; nothing
	// was sent.
	ErrNoSkills = errors.New("mcp: the server does not declare the skills extension")
	// ErrNoDirectoryRead: the server does not declare directoryRead;
	// nothing was sent.
	ErrNoDirectoryRead = errors.New("mcp: the server does not declare directoryRead (resources/directory/read)")
	// ErrSkillInvalid is matched by a *SkillEntryError and a
	// *SkillLimitError: an entry that must not be loaded.
	ErrSkillInvalid = errors.New("mcp: invalid skill entry")
)

// SkillsCapability is a server's declaration of ExtensionSkills.
type SkillsCapability struct {
	DirectoryRead bool `json:"directoryRead,omitempty"` // the server implements resources/directory/read
}

// SkillsCapability returns the server's declaration of ExtensionSkills,
// nil when it made none (or one that is not an object).
func (c *Connection) SkillsCapability() *SkillsCapability {
	raw, ok := c.InitializeResult().Capabilities.Extensions[ExtensionSkills]
	if !ok {
		return nil
	}
	var sc SkillsCapability
	if requireObject(raw) != nil || json.Unmarshal(raw, &sc) != nil {
		return nil
	}
	return &sc
}

// SkillResource is one file of a skill's manifest.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"` // sha256:<64 lowercase hex digits> of the file's raw bytes
	Size   int64  `json:"size"`   // the length of those bytes
}

// Skill is a skill's entry, from skills/list or skills/get. Its URI is
// that of its SKILL.md; Resources is the complete manifest of its files,
// or nil when Dynamic (the server generates the content and publishes
// no digests: nothing it serves can be verified). An entry decoded by
// this package has passed CheckSkill.
type Skill struct {
	URI         string
	Name        string         // Frontmatter["name"], the last segment of the skill's path
	Description string         // Frontmatter["description"]
	Frontmatter map[string]any // SKILL.md's frontmatter as the entry renders it, every field (JSON's types)
	Resources   []SkillResource
	Dynamic     bool
	Meta        json.RawMessage // the entry's _meta; the extension gives it no meaning
}

// skillWire is an entry as it travels.
type skillWire struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON writes the entry as the extension does.
func (s Skill) MarshalJSON() ([]byte, error) {
	fm, err := json.Marshal(s.Frontmatter)
	if err != nil {
		return nil, err
	}
	res := json.RawMessage(`"dynamic"`)
	if !s.Dynamic {
		list := s.Resources
		if list == nil {
			list = []SkillResource{}
		}
		if res, err = json.Marshal(list); err != nil {
			return nil, err
		}
	}
	return json.Marshal(skillWire{URI: s.URI, Frontmatter: fm, Resources: res, Meta: s.Meta})
}

// UnmarshalJSON reads an entry and checks it (CheckSkill): an entry that
// fails is an error matching ErrSkillInvalid. Member names are exact and
// a name given twice is an error.
func (s *Skill) UnmarshalJSON(b []byte) error {
	uri := entryURI(b)
	if len(b) > maxSkillEntryBytes {
		return &SkillEntryError{URI: uri, Reason: fmt.Sprintf("the entry is %d bytes, over the limit of %d", len(b), maxSkillEntryBytes)}
	}
	var w skillWire
	if err := jsonv2.Unmarshal(b, &w); err != nil {
		return &SkillEntryError{URI: uri, Reason: "the entry does not decode: " + err.Error()}
	}
	out := Skill{URI: w.URI, Meta: w.Meta}
	if len(w.Frontmatter) > maxSkillFrontmatterBytes {
		return &SkillEntryError{URI: w.URI, Reason: fmt.Sprintf("the frontmatter is %d bytes, over the limit of %d", len(w.Frontmatter), maxSkillFrontmatterBytes)}
	}
	if err := jsonv2.Unmarshal(w.Frontmatter, &out.Frontmatter); err != nil || out.Frontmatter == nil {
		return &SkillEntryError{URI: w.URI, Reason: "the frontmatter is not a JSON object"}
	}
	switch r := bytes.TrimSpace(w.Resources); {
	case len(r) == 0:
		return &SkillEntryError{URI: w.URI, Reason: "the entry has no resources"}
	case string(r) == `"dynamic"`:
		out.Dynamic = true
	case r[0] == '[':
		if err := jsonv2.Unmarshal(r, &out.Resources); err != nil {
			return &SkillEntryError{URI: w.URI, Reason: "the resources do not decode: " + err.Error()}
		}
	default:
		return &SkillEntryError{URI: w.URI, Reason: `the resources are neither a list nor "dynamic"`}
	}
	out.Name, _ = out.Frontmatter["name"].(string)
	out.Description, _ = out.Frontmatter["description"].(string)
	if err := CheckSkill(&out); err != nil {
		return err
	}
	*s = out
	return nil
}

// entryURI is the uri of an entry that may not decode, for its error.
func entryURI(b []byte) string {
	var w struct {
		URI string `json:"uri"`
	}
	json.Unmarshal(b, &w)
	if len(w.URI) > maxSkillURIBytes {
		return w.URI[:maxSkillURIBytes] + "…"
	}
	return w.URI
}

// SkillEntryError is an entry that must not be loaded: malformed, or
// against a rule of the extension (a manifest without SKILL.md, a file
// outside the skill's directory, a name that is not the last segment of
// its path, a digest not of the form sha256:<hex>, …).
type SkillEntryError struct {
	URI    string // the entry's uri, as given
	Reason string
}

func (e *SkillEntryError) Error() string {
	return fmt.Sprintf("mcp: skill %q: invalid entry: %s", e.URI, e.Reason)
}

func (e *SkillEntryError) Is(target error) bool { return target == ErrSkillInvalid }

// SkillLimitError is a skill past a limit of the extension
// (MaxSkillResources, MaxSkillBytes), from its entry or, for a dynamic
// skill, from what was read of it.
type SkillLimitError struct {
	URI        string
	What       string // "files" or "bytes"
	Got, Limit int64
}

func (e *SkillLimitError) Error() string {
	return fmt.Sprintf("mcp: skill %q has %d %s, over the limit of %d every host accepts; it is not loaded (the server should split it)", e.URI, e.Got, e.What, e.Limit)
}

func (e *SkillLimitError) Is(target error) bool { return target == ErrSkillInvalid }

// skillNameRule is the Agent Skills specification's rule for a name:
// lowercase letters, digits and single hyphens, neither first nor last.
var skillNameRule = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// digestRule is the form of a digest.
var digestRule = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// SkillRoot returns the URI of the directory of the skill whose SKILL.md
// is uri (uri without "/SKILL.md"), and false when uri does not end in
// "/SKILL.md" after a scheme and at least one segment.
func SkillRoot(uri string) (string, bool) {
	root, ok := strings.CutSuffix(uri, "/SKILL.md")
	i := strings.Index(root, "://")
	if !ok || i <= 0 || len(root) == i+3 {
		return "", false
	}
	return root, true
}

// skillPath is the segments of the skill's path, after the scheme: for
// skill://acme/billing/refunds/SKILL.md, acme, billing and refunds.
func skillPath(root string) []string {
	_, rest, _ := strings.Cut(root, "://")
	return strings.Split(rest, "/")
}

// CheckSkill checks an entry against the rules of the extension and this
// package's bounds: its uri is a SKILL.md within at least one segment
// of path, each segment neither empty nor "." nor ".."; the last
// segment is the frontmatter's name, which follows the Agent Skills
// naming rules (at most 64 lowercase letters, digits and single
// hyphens); a description is given (at most 1024 characters); and,
// unless the skill is dynamic, the manifest lists SKILL.md and every
// other file once, each within the skill's directory, with a digest
// sha256:<64 lowercase hex> and a size, within MaxSkillResources and
// MaxSkillBytes. The error is a *SkillEntryError or a *SkillLimitError.
func CheckSkill(s *Skill) error {
	bad := func(format string, args ...any) error {
		return &SkillEntryError{URI: s.URI, Reason: fmt.Sprintf(format, args...)}
	}
	if err := checkSkillURI(s.URI); err != nil {
		return bad("uri: %v", err)
	}
	root, ok := SkillRoot(s.URI)
	if !ok {
		return bad("the uri is not that of a SKILL.md (<scheme>://<skill-path>/SKILL.md)")
	}
	segments := skillPath(root)
	for _, seg := range segments {
		if seg == "" || seg == "." || seg == ".." {
			return bad("the skill's path has an empty, . or .. segment")
		}
	}
	if s.Frontmatter == nil {
		return bad("the entry has no frontmatter")
	}
	name, ok := s.Frontmatter["name"].(string)
	switch {
	case !ok:
		return bad("frontmatter.name is not a string")
	case len(name) > maxSkillNameBytes || !skillNameRule.MatchString(name):
		return bad("the name %.70q breaks the naming rules (at most %d lowercase letters, digits and single hyphens)", name, maxSkillNameBytes)
	case name != segments[len(segments)-1]:
		return bad("the name %q is not the last segment of the skill's path", name)
	case name != s.Name:
		return bad("Name %q is not frontmatter.name %q", s.Name, name)
	}
	desc, ok := s.Frontmatter["description"].(string)
	switch {
	case !ok || strings.TrimSpace(desc) == "":
		return bad("frontmatter.description is not a non-empty string")
	case utf8.RuneCountInString(desc) > maxSkillDescriptionRunes:
		return bad("the description has %d characters, over the limit of %d", utf8.RuneCountInString(desc), maxSkillDescriptionRunes)
	case desc != s.Description:
		return bad("Description is not frontmatter.description")
	}
	if s.Dynamic {
		if s.Resources != nil {
			return bad("a dynamic skill lists resources")
		}
		return nil
	}
	if len(s.Resources) > MaxSkillResources {
		return &SkillLimitError{URI: s.URI, What: "files", Got: int64(len(s.Resources)), Limit: MaxSkillResources}
	}
	var total int64
	seen := make(map[string]bool, len(s.Resources))
	for _, r := range s.Resources {
		if seen[r.URI] {
			return bad("the manifest lists %q twice", r.URI)
		}
		seen[r.URI] = true
		if r.URI != s.URI {
			if err := checkSkillURI(r.URI); err != nil {
				return bad("file uri: %v", err)
			}
			if _, ok := withinSkill(root, r.URI); !ok {
				return bad("the file %.200q is not within the skill's directory %q", r.URI, root)
			}
		}
		if !digestRule.MatchString(r.Digest) {
			return bad("the digest of %q is not sha256:<64 lowercase hex digits>", r.URI)
		}
		if r.Size < 0 || r.Size > MaxSkillBytes {
			return &SkillLimitError{URI: s.URI, What: "bytes", Got: r.Size, Limit: MaxSkillBytes}
		}
		total += r.Size
	}
	if total > MaxSkillBytes {
		return &SkillLimitError{URI: s.URI, What: "bytes", Got: total, Limit: MaxSkillBytes}
	}
	if !seen[s.URI] {
		return bad("the manifest does not list SKILL.md itself")
	}
	return nil
}

// checkSkillURI bounds a URI and refuses control characters (a URI is
// shown to the model and the user).
func checkSkillURI(uri string) error {
	switch {
	case uri == "":
		return errors.New("empty")
	case len(uri) > maxSkillURIBytes:
		return fmt.Errorf("%d bytes, over the limit of %d", len(uri), maxSkillURIBytes)
	case !utf8.ValidString(uri):
		return errors.New("not UTF-8")
	case strings.ContainsFunc(uri, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("has control characters")
	}
	return nil
}

// withinSkill returns the path of uri relative to the skill directory
// root, and whether uri is a file within it: root, "/", and segments
// none of which is empty, "." or "..".
func withinSkill(root, uri string) (string, bool) {
	rel, ok := strings.CutPrefix(uri, root+"/")
	if !ok || rel == "" {
		return "", false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return rel, true
}

// ResolveSkillFile resolves a path relative to the skill's root (as
// SKILL.md refers to its files: "references/FORMS.md"), or the full URI
// of one of its files, to the file's URI. A path that leaves the skill's
// directory ("../other/SKILL.md", an absolute path, another scheme's
// URI) is an error: a skill reaches only its own files.
func ResolveSkillFile(s *Skill, p string) (string, error) {
	root, ok := SkillRoot(s.URI)
	if !ok {
		return "", &SkillEntryError{URI: s.URI, Reason: "the uri is not that of a SKILL.md"}
	}
	if strings.Contains(p, "://") {
		if p == s.URI {
			return p, nil
		}
		if _, ok := withinSkill(root, p); !ok {
			return "", fmt.Errorf("mcp: %.200q is not a file of skill %q", p, s.URI)
		}
		return p, nil
	}
	rel := strings.TrimPrefix(p, "./")
	uri := root + "/" + rel
	if _, ok := withinSkill(root, uri); !ok || strings.Contains(rel, "\\") {
		return "", fmt.Errorf("mcp: %.200q is not a path within skill %q (give it relative to the skill's root, without ..)", p, s.URI)
	}
	return uri, nil
}

// skillsTTL is how long a listing is taken as fresh: its smallest ttlMs,
// at most maxSkillListTTL.
func skillsTTL(ttl time.Duration) time.Duration { return min(ttl, maxSkillListTTL) }

// ListSkills returns the server's skills, every page of skills/list, at
// most MaxListedSkills of them and maxSkillListingBytes of entries (the
// rest are dropped and logged). An entry that fails CheckSkill, or a uri
// listed twice, is dropped and logged; a listing may be partial, and is
// never proof that a skill does not exist (see GetSkill). The listing
// is cached while known to be current: on a modern server for the
// smallest ttlMs of its pages (at most an hour), on a legacy one that
// announces resources listChanged until notifications/resources/
// list_changed, which drops it in either era. The cache is the
// Connection's alone, never shared with another, whatever the
// cacheScope. A server that does not declare the extension is an error
// matching ErrNoSkills, and is sent nothing.
func (c *Connection) ListSkills(ctx context.Context) ([]Skill, error) {
	return collect(c.AllSkills(ctx))
}

// AllSkills yields the skills as ListSkills lists them, within the same
// bounds, fetching each page of skills/list only when the loop reaches
// it; a loop that stops early fetches no more pages. A listing walked to
// its end is cached as ListSkills caches it.
func (c *Connection) AllSkills(ctx context.Context) iter.Seq2[Skill, error] {
	return func(yield func(Skill, error) bool) {
		if c.SkillsCapability() == nil {
			yield(Skill{}, ErrNoSkills)
			return
		}
		if skills, ok := c.skillCache.Get(); ok {
			for _, s := range skills {
				if !yield(cloneSkill(s), nil) {
					return
				}
			}
			return
		}
		gen := c.skillCache.Generation()
		ttl, first := time.Duration(0), true
		var kept []Skill
		seen := map[string]bool{}
		size := 0
		for raw, err := range seqHints[json.RawMessage](ctx, c.pager(), "skills/list", "skills", func(h CacheHints) {
			if first || h.ttl() < ttl {
				ttl, first = h.ttl(), false
			}
		}) {
			if err != nil {
				yield(Skill{}, err)
				return
			}
			var s Skill
			if err := s.UnmarshalJSON(raw); err != nil {
				c.logger.Warn("mcp: dropped a skill entry", "err", err)
				continue
			}
			if seen[s.URI] {
				c.logger.Warn("mcp: the server lists a skill more than once; the first counts", "skill", s.URI)
				continue
			}
			seen[s.URI] = true
			if len(kept) == MaxListedSkills || size+len(raw) > maxSkillListingBytes {
				c.logger.Warn("mcp: the skills listing is past the bound kept; the rest is dropped", "skills", len(kept), "bytes", size)
				return // not cached: it is not the whole listing
			}
			kept = append(kept, cloneSkill(s)) // keeps none of the page, shares nothing with the caller
			size += len(raw)
			if !yield(s, nil) {
				return
			}
		}
		if _, modern := c.era().(*modern); modern {
			if ttl > 0 {
				c.skillCache.SetFor(kept, gen, skillsTTL(ttl))
			}
		} else if caps := c.InitializeResult().Capabilities.Resources; caps != nil && caps.ListChanged {
			c.skillCache.Set(kept, gen)
		}
	}
}

// cloneSkill is s with copies of its own: of _meta (which may point
// into a page), of its manifest and of its frontmatter, so that a caller
// that changes what it was given changes nothing of the cache's.
func cloneSkill(s Skill) Skill {
	s.Meta = bytes.Clone(s.Meta)
	s.Resources = slices.Clone(s.Resources)
	s.Frontmatter, _ = cloneValue(s.Frontmatter).(map[string]any)
	return s
}

// cloneValue copies a value as JSON decodes it.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = cloneValue(x)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneValue(x)
		}
		return out
	}
	return v
}

// GetSkill returns the entry of the skill whose SKILL.md is uri
// (skills/get): a skill the listing left out is reached this way, and a
// listed one refreshed. The answer is checked (CheckSkill) and must be
// for uri. A server that does not declare the extension is an error
// matching ErrNoSkills; one that serves no such skill answers an *Error
// (CodeInvalidParams).
func (c *Connection) GetSkill(ctx context.Context, uri string) (*Skill, error) {
	if c.SkillsCapability() == nil {
		return nil, ErrNoSkills
	}
	var res struct {
		Skill json.RawMessage `json:"skill"`
		CacheHints
	}
	if err := c.callObject(ctx, "skills/get", map[string]string{"uri": uri}, &res); err != nil {
		return nil, err
	}
	if len(res.Skill) == 0 || string(res.Skill) == "null" {
		return nil, wrap("skills/get", &badResult{errors.New("the result has no skill")})
	}
	var s Skill
	if err := s.UnmarshalJSON(res.Skill); err != nil {
		return nil, err
	}
	if s.URI != uri {
		return nil, &SkillEntryError{URI: uri, Reason: fmt.Sprintf("skills/get answered with the entry of %.200q", s.URI)}
	}
	s = cloneSkill(s)
	return &s, nil
}

// ReadDirectory lists the direct children of the directory resource uri
// (resources/directory/read, every page, at most 10,000 children): its
// files, and its subdirectories with MimeType MIMETypeDirectory. It is
// a live observation of the server: for a skill, it never adds to the
// manifest of its entry, which alone says what may be read of it. A
// server that does not declare directoryRead is an error matching
// ErrNoDirectoryRead (ErrNoSkills when it does not declare the
// extension), and is sent nothing.
func (c *Connection) ReadDirectory(ctx context.Context, uri string) ([]Resource, error) {
	sc := c.SkillsCapability()
	switch {
	case sc == nil:
		return nil, ErrNoSkills
	case !sc.DirectoryRead:
		return nil, ErrNoDirectoryRead
	}
	var out []Resource
	for r, err := range paging.All(func(cursor string) ([]Resource, string, error) {
		var res struct {
			Resources  []Resource `json:"resources"`
			NextCursor string     `json:"nextCursor"`
		}
		err := c.callObject(ctx, "resources/directory/read", directoryParams{URI: uri, Cursor: cursor}, &res)
		return res.Resources, res.NextCursor, err
	}, func(msg string, args ...any) {
		c.logger.Warn(msg, append([]any{"method", "resources/directory/read"}, args...)...)
	}) {
		if err != nil {
			return out, err
		}
		if len(out) == maxDirectoryEntries {
			c.logger.Warn("mcp: directory listing past the bound kept; the rest is dropped", "uri", uri, "children", len(out))
			break
		}
		out = append(out, r)
	}
	return out, nil
}

// MIMETypeDirectory is the MIME type of a directory resource.
const MIMETypeDirectory = "inode/directory"

type directoryParams struct {
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}
