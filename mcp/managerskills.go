package mcp

// The skills of a Manager's servers: each identified by the Manager's
// name for its server (never the server's own serverInfo.name) and its
// uri, named per server, loaded under an approval bound to its files,
// and read only from its own server.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ServerSkill is a skill of one of a Manager's servers.
type ServerSkill struct {
	Skill
	Server string // the server's name in the Manager (its config entry)
	// Ref names the skill within the Manager: <server>:<name>, or, where
	// a server lists two skills of one name, <server>:<path of the
	// skill> (<server>:<uri> where even that is shared). ':' and '%' of
	// the server's name are written %3A and %25. A skill's name never
	// stands for another server's.
	Ref string
	// SameName are the Refs of the other skills of the same name, of
	// this server or another: a name is a label, not an identity, and
	// two of them are worth showing the user.
	SameName []string
}

// Tools returns the frontmatter's allowed-tools (a list, or a string of
// names separated by spaces or commas), as asked: nothing is granted by
// it (see LoadedSkill.AllowedTools).
func (s *ServerSkill) Tools() []string { return allowedTools(s.Frontmatter) }

func allowedTools(fm map[string]any) []string {
	var out []string
	switch v := fm["allowed-tools"].(type) {
	case string:
		out = strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' })
	case []any:
		for _, t := range v {
			if s, ok := t.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// skillRef is the Ref of a skill of server: <server>:<key>.
func skillRef(server, key string) string { return refEscaper.Replace(server) + ":" + key }

// Skills connects the servers not yet tried (see Connect) and returns the
// skills of every connected server that declares the Skills extension,
// as each lists them (Connection.ListSkills: cached while current,
// listed again after notifications/resources/list_changed, and from
// scratch after a reconnection). No file of any skill is read. A server
// whose listing fails contributes none (it is logged). The error is
// non-nil only when ctx ends or the Manager is closed.
func (m *Manager) Skills(ctx context.Context) ([]ServerSkill, error) {
	servers, err := m.connected(ctx)
	if err != nil {
		return nil, err
	}
	var out []ServerSkill
	for _, s := range servers {
		c, err := m.wait(ctx, s)
		if err != nil || c.SkillsCapability() == nil {
			continue
		}
		skills, err := c.ListSkills(ctx)
		if err != nil {
			m.logger.Warn("mcp: could not list skills", "server", s.name, "err", err)
			continue
		}
		byName := map[string]int{}
		byPath := map[string]int{}
		for _, sk := range skills {
			byName[sk.Name]++
			root, _ := SkillRoot(sk.URI)
			byPath[strings.SplitN(root, "://", 2)[1]]++
		}
		for _, sk := range skills {
			ref := skillRef(s.name, sk.Name)
			if byName[sk.Name] > 1 { // disambiguated by path, never one preferred
				root, _ := SkillRoot(sk.URI)
				ref = skillRef(s.name, strings.SplitN(root, "://", 2)[1])
				if byPath[strings.SplitN(root, "://", 2)[1]] > 1 {
					ref = skillRef(s.name, sk.URI)
				}
			}
			out = append(out, ServerSkill{Skill: sk, Server: s.name, Ref: ref})
		}
	}
	names := map[string][]string{}
	for _, sk := range out {
		names[sk.Name] = append(names[sk.Name], sk.Ref)
	}
	for i := range out {
		if refs := names[out[i].Name]; len(refs) > 1 {
			out[i].SameName = slices.DeleteFunc(slices.Clone(refs), func(r string) bool { return r == out[i].Ref })
		}
	}
	return out, ctx.Err()
}

// Skill returns the skill ref names (as Skills gives it). A ref of the
// form <server>:<uri> names a skill by the URI of its SKILL.md, listed or
// not: it is asked of that server with skills/get.
func (m *Manager) Skill(ctx context.Context, ref string) (*ServerSkill, error) {
	skills, err := m.Skills(ctx)
	if err != nil {
		return nil, err
	}
	for i := range skills {
		if skills[i].Ref == ref {
			return &skills[i], nil
		}
	}
	key, uri, ok := strings.Cut(ref, ":")
	if ok && strings.Contains(uri, "://") {
		name := refUnescaper.Replace(key)
		if _, err := m.lookup(name); err == nil {
			c, err := m.Connection(ctx, name)
			if err != nil {
				return nil, err
			}
			sk, err := c.GetSkill(ctx, uri)
			if err != nil {
				return nil, wrap(fmt.Sprintf("server %q", name), err)
			}
			return &ServerSkill{Skill: *sk, Server: name, Ref: ref}, nil
		}
	}
	return nil, fmt.Errorf("%w: no skill %q (list them with Skills)", ErrUnknownRef, ref)
}

// LoadedSkill is a skill a Manager has loaded: its SKILL.md read and
// verified under an approval, and the entry it was loaded from, held
// while the program acts on the skill. Its files are read through it,
// from its own server only, each verified against that entry.
type LoadedSkill struct {
	ServerSkill
	Content []byte // SKILL.md, verified (unverifiable when Dynamic)
	Body    []byte // Content after its frontmatter

	m     *Manager
	tools bool // allowed-tools granted

	mu   sync.Mutex
	read int64 // bytes read of a dynamic skill
}

// AllowedTools returns the frontmatter's allowed-tools when the approval
// granted them (SkillDecision.Tools), and nil otherwise: a skill that
// arrives over MCP widens no permission by itself.
func (l *LoadedSkill) AllowedTools() []string {
	if !l.tools {
		return nil
	}
	return l.Tools()
}

// LoadSkill loads the skill ref names (see Skill): under an approval,
// then its SKILL.md read from its server and verified (ReadSkillFile).
//
// The approval is per skill, (server, uri): a stored one covers the
// skill only while its manifest is the one approved (ManifestDigest);
// one for another manifest is revoked, and the host asked again. A
// dynamic skill is never covered by a stored approval: the host is asked
// at each load. Without SkillOptions.Approve, a skill no approval covers
// is not loaded: the error matches ErrSkillNotApproved (a
// *SkillApprovalError). A verification that fails (ErrSkillVerification)
// drops the server's cached listing, so that the next one shows the
// skill as it now is.
func (m *Manager) LoadSkill(ctx context.Context, ref string) (*LoadedSkill, error) {
	sk, err := m.Skill(ctx, ref)
	if err != nil {
		return nil, err
	}
	tools, err := m.approveSkill(ctx, sk)
	if err != nil {
		return nil, err
	}
	c, err := m.Connection(ctx, sk.Server)
	if err != nil {
		return nil, err
	}
	f, err := c.ReadSkillFile(ctx, &sk.Skill, sk.URI)
	if err != nil {
		if errors.Is(err, ErrSkillVerification) {
			c.skillCache.Invalidate()
		}
		return nil, wrap(fmt.Sprintf("server %q", sk.Server), err)
	}
	_, body, _ := ParseFrontmatter(f.Content)
	l := &LoadedSkill{ServerSkill: *sk, Content: f.Content, Body: body, m: m, tools: tools}
	if sk.Dynamic {
		l.read = int64(len(f.Content))
	}
	return l, nil
}

// approveSkill finds or asks for the approval of sk, and reports whether
// its allowed-tools are granted.
func (m *Manager) approveSkill(ctx context.Context, sk *ServerSkill) (bool, error) {
	var opts SkillOptions
	if m.opts.Skills != nil {
		opts = *m.opts.Skills
	}
	store := opts.Approvals
	if store == nil {
		store = m.skillApprovals()
	}
	digest := ManifestDigest(&sk.Skill)
	changed := false
	if !sk.Dynamic {
		a, ok, err := store.Get(sk.Server, sk.URI)
		switch {
		case err != nil:
			m.logger.Warn("mcp: could not read the skill approvals", "err", err)
		case ok && a.Manifest == digest:
			return a.Tools, nil
		case ok: // the files changed since: the approval no longer holds
			changed = true
			if err := store.Delete(sk.Server, sk.URI); err != nil {
				m.logger.Warn("mcp: could not revoke a skill approval", "server", sk.Server, "skill", sk.URI, "err", err)
			}
		}
	}
	if opts.Approve == nil {
		return false, &SkillApprovalError{Server: sk.Server, URI: sk.URI, Changed: changed}
	}
	d := opts.Approve(ctx, &SkillApprovalRequest{Skill: sk, Changed: changed, Tools: sk.Tools()})
	if !d.Load {
		return false, &SkillApprovalError{Server: sk.Server, URI: sk.URI, Changed: changed}
	}
	if d.Remember && !sk.Dynamic {
		a := SkillApproval{Server: sk.Server, URI: sk.URI, Manifest: digest, Tools: d.Tools, Time: time.Now().UTC()}
		if err := store.Put(a); err != nil {
			m.logger.Warn("mcp: could not store a skill approval", "server", sk.Server, "skill", sk.URI, "err", err)
		}
	}
	return d.Tools, nil
}

// skillApprovals is the Manager's in-memory approvals.
func (m *Manager) skillApprovals() SkillApprovals {
	m.skillsOnce.Do(func() { m.memApprovals = &memoryApprovals{} })
	return m.memApprovals
}

// Files returns the skill's manifest: the files it may read (none listed
// for a dynamic skill; see ReadDirectory).
func (l *LoadedSkill) Files() []SkillResource { return slices.Clone(l.Resources) }

// Read reads a file of the skill: a path relative to its root
// ("references/FORMS.md", as SKILL.md refers to it) or the URI of one of
// its files, from the skill's own server (whatever that server's
// connection is now), verified against the entry the skill was loaded
// from (ReadSkillFile). A path that leaves the skill's directory is
// refused before anything is sent. What is read of a dynamic skill is
// bounded by MaxSkillBytes in all.
func (l *LoadedSkill) Read(ctx context.Context, p string) (*SkillFile, error) {
	uri, err := ResolveSkillFile(&l.Skill, p)
	if err != nil {
		return nil, err
	}
	c, err := l.m.Connection(ctx, l.Server)
	if err != nil {
		return nil, err
	}
	f, err := c.ReadSkillFile(ctx, &l.Skill, uri)
	if err != nil {
		if errors.Is(err, ErrSkillVerification) {
			c.skillCache.Invalidate()
		}
		return nil, wrap(fmt.Sprintf("server %q", l.Server), err)
	}
	if l.Dynamic {
		l.mu.Lock()
		l.read += int64(len(f.Content))
		total := l.read
		l.mu.Unlock()
		if total > MaxSkillBytes {
			return nil, &SkillLimitError{URI: l.URI, What: "bytes", Got: total, Limit: MaxSkillBytes}
		}
	}
	return f, nil
}

// ReadDirectory lists a directory of the skill (a path relative to its
// root; "" for the root) on its own server, when that server declares
// directoryRead. For a skill with a manifest the answer adds nothing
// that may be read: only the manifest's files can be.
func (l *LoadedSkill) ReadDirectory(ctx context.Context, p string) ([]Resource, error) {
	root, _ := SkillRoot(l.URI)
	uri := root
	if p != "" && p != "." {
		u, err := ResolveSkillFile(&l.Skill, p)
		if err != nil {
			return nil, err
		}
		uri = u
	}
	c, err := l.m.Connection(ctx, l.Server)
	if err != nil {
		return nil, err
	}
	return c.ReadDirectory(ctx, uri)
}
