package mcptest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcplug/mcplug/mcp"
)

// Skill is a skill a Server serves (the Skills extension,
// io.modelcontextprotocol/skills): a directory of files, SKILL.md among
// them, whose entry (skills/list, skills/get) the Server computes from
// the files: the frontmatter parsed from SKILL.md, and every file's
// SHA-256 digest and size. Its files are read with resources/read, and
// listed with resources/directory/read when the Server's DirectoryRead
// is set.
type Skill struct {
	// Path locates the skill: "pdf-processing", "acme/billing/refunds".
	// Its last segment must be the name in SKILL.md's frontmatter.
	Path string
	// Scheme is the URI scheme; "" means "skill".
	Scheme string
	// Files are the skill's files by path relative to its root
	// ("SKILL.md", "references/FORMS.md"); SKILL.md is required.
	Files map[string]string
	// Dynamic serves the entry with "resources": "dynamic": no manifest.
	Dynamic bool
	// Unlisted leaves the skill out of skills/list; skills/get and
	// resources/read still serve it.
	Unlisted bool
	// Entry, if set, may change the entry after it is computed, for tests
	// of a server that lies: a digest or size that is not the file's, a
	// file that is not listed, a frontmatter that is not SKILL.md's.
	Entry func(e *mcp.Skill)
}

// URI returns the URI of the skill's SKILL.md.
func (sk *Skill) URI() string { return sk.root() + "/SKILL.md" }

func (sk *Skill) root() string {
	scheme := sk.Scheme
	if scheme == "" {
		scheme = "skill"
	}
	return scheme + "://" + sk.Path
}

// servedSkill is an added skill and its entry.
type servedSkill struct {
	def   Skill
	entry mcp.Skill
}

// SkillEntry computes the entry of sk as a Server serves it (before
// sk.Entry). It fails when SKILL.md is missing or its frontmatter does
// not parse.
func SkillEntry(sk Skill) (mcp.Skill, error) {
	md, ok := sk.Files["SKILL.md"]
	if !ok {
		return mcp.Skill{}, fmt.Errorf("mcptest: skill %q has no SKILL.md", sk.Path)
	}
	fm, _, err := mcp.ParseFrontmatter([]byte(md))
	if err != nil {
		return mcp.Skill{}, fmt.Errorf("mcptest: skill %q: %w", sk.Path, err)
	}
	e := mcp.Skill{URI: sk.URI(), Frontmatter: fm, Dynamic: sk.Dynamic}
	e.Name, _ = fm["name"].(string)
	e.Description, _ = fm["description"].(string)
	if !sk.Dynamic {
		e.Resources = []mcp.SkillResource{fileResource(e.URI, md)}
		for _, p := range slices.Sorted(maps.Keys(sk.Files)) {
			if p != "SKILL.md" {
				e.Resources = append(e.Resources, fileResource(sk.root()+"/"+p, sk.Files[p]))
			}
		}
	}
	if sk.Entry != nil {
		sk.Entry(&e)
	}
	return e, nil
}

func fileResource(uri, content string) mcp.SkillResource {
	sum := sha256.Sum256([]byte(content))
	return mcp.SkillResource{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(content))}
}

// AddSkills adds skills, replacing those of the same URI, and tells the
// clients connected over a stream that the resources changed, once. It
// panics on a skill SkillEntry refuses.
func (srv *Server) AddSkills(skills ...Skill) {
	srv.mu.Lock()
	for _, sk := range skills {
		e, err := SkillEntry(sk)
		if err != nil {
			srv.mu.Unlock()
			panic(err)
		}
		srv.skills = slices.DeleteFunc(srv.skills, func(x *servedSkill) bool { return x.entry.URI == e.URI })
		srv.skills = append(srv.skills, &servedSkill{def: sk, entry: e})
	}
	srv.mu.Unlock()
	srv.Notify("notifications/resources/list_changed", nil)
}

// RemoveSkill removes the skill whose SKILL.md is uri, and tells the
// clients that the resources changed.
func (srv *Server) RemoveSkill(uri string) {
	srv.mu.Lock()
	srv.skills = slices.DeleteFunc(srv.skills, func(x *servedSkill) bool { return x.entry.URI == uri })
	srv.mu.Unlock()
	srv.Notify("notifications/resources/list_changed", nil)
}

// skillsCaps adds the extension's declaration to caps when skills were
// added. srv.mu is held.
func (srv *Server) skillsCaps(caps map[string]any) {
	if len(srv.skills) == 0 {
		return
	}
	caps["resources"] = map[string]any{"listChanged": true}
	decl := map[string]any{}
	if srv.DirectoryRead {
		decl["directoryRead"] = true
	}
	caps["extensions"] = map[string]any{mcp.ExtensionSkills: decl}
}

// cacheHints adds a modern result's ttlMs and cacheScope.
func (srv *Server) cacheHints(m *Message, res map[string]any) map[string]any {
	if RequestVersion(m.Params) >= mcp.LatestProtocolVersion {
		res["ttlMs"] = srv.SkillsTTLMs
		res["cacheScope"] = "private"
	}
	return complete(m, res)
}

// listSkills serves skills/list, SkillsPageSize entries a page.
func (srv *Server) listSkills(s *Session, m *Message) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(m.Params, &p)
	srv.mu.Lock()
	var entries []mcp.Skill
	for _, sk := range srv.skills {
		if !sk.def.Unlisted {
			entries = append(entries, sk.entry)
		}
	}
	srv.mu.Unlock()
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "skills:"))
		if err != nil || n < 0 || n > len(entries) {
			s.ReplyError(m.ID, mcp.CodeInvalidParams, "invalid cursor")
			return
		}
		start = n
	}
	end := len(entries)
	if srv.SkillsPageSize > 0 {
		end = min(end, start+srv.SkillsPageSize)
	}
	res := map[string]any{"skills": append([]mcp.Skill{}, entries[start:end]...)}
	if end < len(entries) {
		res["nextCursor"] = "skills:" + strconv.Itoa(end)
	}
	s.Reply(m.ID, srv.cacheHints(m, res))
}

// getSkill serves skills/get.
func (srv *Server) getSkill(s *Session, m *Message) {
	uri := newRequest(s, m).URI
	srv.mu.Lock()
	i := slices.IndexFunc(srv.skills, func(x *servedSkill) bool { return x.entry.URI == uri })
	var e mcp.Skill
	if i >= 0 {
		e = srv.skills[i].entry
	}
	srv.mu.Unlock()
	if i < 0 {
		s.ReplyError(m.ID, mcp.CodeInvalidParams, "No skill is served at "+uri)
		return
	}
	s.Reply(m.ID, srv.cacheHints(m, map[string]any{"skill": e}))
}

// skillFile returns the content of the skill file uri.
func (srv *Server) skillFile(uri string) (string, bool) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, sk := range srv.skills {
		if rel, ok := strings.CutPrefix(uri, sk.def.root()+"/"); ok {
			if content, ok := sk.def.Files[rel]; ok {
				return content, true
			}
		}
	}
	return "", false
}

// skillContents is the resources/read result of a skill file: text, or a
// blob when the file is not UTF-8.
func skillContents(uri, content string) *mcp.ReadResourceResult {
	rc := mcp.ResourceContents{URI: uri, MimeType: "text/markdown", Text: &content}
	if !utf8.ValidString(content) {
		blob := base64.StdEncoding.EncodeToString([]byte(content))
		rc = mcp.ResourceContents{URI: uri, MimeType: "application/octet-stream", Blob: &blob}
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{rc}}
}

// readDirectory serves resources/directory/read: the direct children of
// a directory of the skills' files, one page.
func (srv *Server) readDirectory(s *Session, m *Message) {
	dir := newRequest(s, m).URI
	children := map[string]mcp.Resource{}
	srv.mu.Lock()
	for _, sk := range srv.skills {
		root := sk.def.root()
		for rel := range sk.def.Files {
			full := root + "/" + rel
			rest, ok := strings.CutPrefix(full, dir+"/")
			if !ok {
				continue
			}
			name, _, isDir := strings.Cut(rest, "/")
			r := mcp.Resource{URI: dir + "/" + name, Name: name, MimeType: "text/markdown"}
			if isDir {
				r.MimeType = mcp.MIMETypeDirectory
			}
			children[r.URI] = r
		}
	}
	srv.mu.Unlock()
	if len(children) == 0 {
		s.ReplyError(m.ID, mcp.CodeInvalidParams, dir+" is not a directory resource")
		return
	}
	out := make([]mcp.Resource, 0, len(children))
	for _, k := range slices.Sorted(maps.Keys(children)) {
		out = append(out, children[k])
	}
	s.Reply(m.ID, complete(m, map[string]any{"resources": out}))
}

// serveSkills serves the extension's methods: -32601 without skills (or,
// for resources/directory/read, without DirectoryRead), as a server that
// does not declare them.
func (srv *Server) serveSkills(s *Session, m *Message) {
	srv.mu.Lock()
	none := len(srv.skills) == 0
	srv.mu.Unlock()
	switch {
	case none || (m.Method == "resources/directory/read" && !srv.DirectoryRead):
		s.ReplyError(m.ID, mcp.CodeMethodNotFound, "method not found")
	case m.Method == "skills/list":
		srv.listSkills(s, m)
	case m.Method == "skills/get":
		srv.getSkill(s, m)
	default:
		srv.readDirectory(s, m)
	}
}
