package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// approver records the requests it is asked and answers with d.
type approver struct {
	mu   sync.Mutex
	asks []mcp.SkillApprovalRequest
	d    mcp.SkillDecision
}

func (a *approver) approve(_ context.Context, req *mcp.SkillApprovalRequest) mcp.SkillDecision {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asks = append(a.asks, *req)
	return a.d
}

func (a *approver) asked() []mcp.SkillApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]mcp.SkillApprovalRequest(nil), a.asks...)
}

// listChanged is ServerOptions that signal each resources/list_changed,
// once the Connection has handled it.
func listChanged(ch chan struct{}) func(string, *config.Server) *mcp.Options {
	return func(string, *config.Server) *mcp.Options {
		return &mcp.Options{ResourceListChanged: func(*mcp.Connection) {
			select {
			case ch <- struct{}{}:
			default:
			}
		}}
	}
}

func waitFor(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx(t).Done():
		t.Fatal("no notification")
	}
}

func refs(skills []mcp.ServerSkill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Ref)
	}
	return out
}

func TestTwoServersServingTheSameURIAndNameAreTwoSkillsNamedByTheirConfigNames(t *testing.T) {
	noLeaks(t)
	recA, recB := &recorder{}, &recorder{}
	a, b := skillServer(recA, pdfSkill()), skillServer(recB, pdfSkill())
	a.Name, b.Name = "trusted-docs", "trusted-docs" // what each says of itself counts for nothing
	ap := &approver{d: mcp.SkillDecision{Load: true, Remember: true}}
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: ap.approve}})
	require.NoError(t, m.Add("docs", a.Transport()))
	require.NoError(t, m.Add("evil", b.Transport()))

	skills, err := m.Skills(ctx(t))
	require.NoError(t, err)
	require.Equal(t, []string{"docs:pdf-processing", "evil:pdf-processing"}, refs(skills))
	assert.Equal(t, "docs", skills[0].Server)
	assert.Equal(t, "evil", skills[1].Server)
	assert.Equal(t, skills[0].URI, skills[1].URI)
	assert.Equal(t, []string{"evil:pdf-processing"}, skills[0].SameName, "the collision is there to show")

	l, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
	require.NoError(t, err)
	assert.Equal(t, "docs", l.Server)
	_, err = l.Read(ctx(t), "references/FORMS.md")
	require.NoError(t, err)
	assert.Len(t, recA.params("resources/read"), 2)
	assert.Empty(t, recB.params("resources/read"), "a skill of docs reads nothing of evil")

	_, err = m.LoadSkill(ctx(t), "evil:pdf-processing")
	require.NoError(t, err)
	require.Len(t, ap.asked(), 2, "the approval of docs' skill does not cover evil's of the same uri")
	assert.Equal(t, "evil", ap.asked()[1].Skill.Server)
}

func TestNamesThatCollideWithinAServerAreDisambiguatedByPath(t *testing.T) {
	noLeaks(t)
	skill := func(p string) mcptest.Skill {
		return mcptest.Skill{Path: p, Files: map[string]string{"SKILL.md": "---\nname: refunds\ndescription: at " + p + "\n---\n"}}
	}
	srv := skillServer(&recorder{}, skill("acme/billing/refunds"), skill("acme/support/refunds"), skill("refunds"))
	other := skill("refunds")
	other.Scheme = "github"
	srv.AddSkills(other)
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("s:1", srv.Transport()))
	skills, err := m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"s%3A1:acme/billing/refunds", "s%3A1:acme/support/refunds",
		"s%3A1:skill://refunds/SKILL.md", "s%3A1:github://refunds/SKILL.md",
	}, refs(skills), "none is dropped, none preferred")
	for _, s := range skills {
		assert.Len(t, s.SameName, 3)
	}
}

func TestNoSkillIsLoadedWithoutAnApproval(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("docs", skillServer(rec, pdfSkill()).Transport()))
	_, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
	var ae *mcp.SkillApprovalError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, mcp.ErrSkillNotApproved)
	assert.Equal(t, "docs", ae.Server)
	assert.Empty(t, rec.params("resources/read"), "nothing of the skill is read")

	ap := &approver{d: mcp.SkillDecision{Load: false}}
	m = newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: ap.approve}})
	require.NoError(t, m.Add("docs", skillServer(rec, pdfSkill()).Transport()))
	_, err = m.LoadSkill(ctx(t), "docs:pdf-processing")
	assert.ErrorIs(t, err, mcp.ErrSkillNotApproved)
	assert.Len(t, ap.asked(), 1)
	assert.Empty(t, rec.params("resources/read"))
}

func TestAnApprovalIsRevokedWhenTheManifestChanges(t *testing.T) {
	noLeaks(t)
	store := &mcp.SkillApprovalFile{Path: filepath.Join(t.TempDir(), "skills.json")}
	ap := &approver{d: mcp.SkillDecision{Load: true, Remember: true}}
	srv := skillServer(&recorder{}, pdfSkill())
	changedCh := make(chan struct{}, 1)
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: ap.approve, Approvals: store}, ServerOptions: listChanged(changedCh)})
	require.NoError(t, m.Add("docs", srv.Transport()))

	_, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
	require.NoError(t, err)
	_, err = m.LoadSkill(ctx(t), "docs:pdf-processing")
	require.NoError(t, err)
	require.Len(t, ap.asked(), 1, "the stored approval covers the same files")
	stored, ok, err := store.Get("docs", "skill://pdf-processing/SKILL.md")
	require.NoError(t, err)
	require.True(t, ok)

	changed := pdfSkill()
	changed.Files["references/credit-note.md"] = "A file added after the approval.\n"
	srv.AddSkills(changed) // and notifications/resources/list_changed
	waitFor(t, changedCh)  // handled: the connection's cached listing is dropped
	skills, err := m.Skills(ctx(t))
	require.NoError(t, err)
	require.Len(t, skills, 1)
	require.Len(t, skills[0].Resources, 4)

	ap.d = mcp.SkillDecision{Load: false}
	_, err = m.LoadSkill(ctx(t), "docs:pdf-processing")
	var ae *mcp.SkillApprovalError
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.Changed)
	require.Len(t, ap.asked(), 2)
	assert.True(t, ap.asked()[1].Changed, "the host is told the skill changed")
	_, ok, err = store.Get("docs", "skill://pdf-processing/SKILL.md")
	require.NoError(t, err)
	assert.False(t, ok, "the stored approval %v was revoked", stored.Manifest)
}

func TestADynamicSkillIsNeverCoveredByAStoredApproval(t *testing.T) {
	noLeaks(t)
	store := &mcp.SkillApprovalFile{Path: filepath.Join(t.TempDir(), "skills.json")}
	ap := &approver{d: mcp.SkillDecision{Load: true, Remember: true}}
	sk := pdfSkill()
	sk.Dynamic = true
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: ap.approve, Approvals: store}})
	require.NoError(t, m.Add("docs", skillServer(&recorder{}, sk).Transport()))
	for range 2 {
		l, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
		require.NoError(t, err)
		f, err := l.Read(ctx(t), "references/FORMS.md")
		require.NoError(t, err)
		assert.False(t, f.Verified)
	}
	assert.Len(t, ap.asked(), 2, "asked at each load")
	_, ok, err := store.Get("docs", "skill://pdf-processing/SKILL.md")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Error(t, store.Put(mcp.SkillApproval{Server: "docs", URI: "skill://x/SKILL.md"}), "no approval without a manifest")

	// A store of the program's own that keeps whatever it is given, and
	// already holds an approval of the skill without a manifest (the
	// digest of a dynamic skill is ""): it is never asked, never given.
	held := &keepingApprovals{m: map[[2]string]mcp.SkillApproval{}}
	held.m[[2]string{"docs", "skill://pdf-processing/SKILL.md"}] = mcp.SkillApproval{Server: "docs", URI: "skill://pdf-processing/SKILL.md", Tools: true}
	ap = &approver{d: mcp.SkillDecision{Load: true, Remember: true}}
	m = newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: ap.approve, Approvals: held}})
	require.NoError(t, m.Add("docs", skillServer(&recorder{}, sk).Transport()))
	for range 2 {
		l, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
		require.NoError(t, err)
		assert.Nil(t, l.AllowedTools(), "the held approval's grant does not count")
	}
	assert.Len(t, ap.asked(), 2, "the held approval covers nothing a dynamic skill serves")
	assert.Empty(t, held.puts(), "no approval of a dynamic skill is given to the store")
}

// keepingApprovals keeps every approval it is given, as a program's own
// store may, recording the Puts.
type keepingApprovals struct {
	mu  sync.Mutex
	m   map[[2]string]mcp.SkillApproval
	put []mcp.SkillApproval
}

func (k *keepingApprovals) Get(server, uri string) (mcp.SkillApproval, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	a, ok := k.m[[2]string{server, uri}]
	return a, ok, nil
}

func (k *keepingApprovals) Put(a mcp.SkillApproval) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[[2]string{a.Server, a.URI}] = a
	k.put = append(k.put, a)
	return nil
}

func (k *keepingApprovals) Delete(server, uri string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, [2]string{server, uri})
	return nil
}

func (k *keepingApprovals) puts() []mcp.SkillApproval {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]mcp.SkillApproval(nil), k.put...)
}

func TestAllowedToolsAreIgnoredUnlessGrantedAndANestedSkillNeedsItsOwnApproval(t *testing.T) {
	noLeaks(t)
	ap := &approver{d: mcp.SkillDecision{Load: true}}
	sk := pdfSkill()
	sk.Files["SKILL.md"] = strings.Replace(pdfSkillMD, "license:", "allowed-tools: Bash(rm:*) Read\nlicense:", 1)
	inner := mcptest.Skill{Path: "pdf-processing/inner", Files: map[string]string{"SKILL.md": sk.Files["inner/SKILL.md"]}}
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: ap.approve}})
	require.NoError(t, m.Add("docs", skillServer(&recorder{}, sk, inner).Transport()))

	l, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
	require.NoError(t, err)
	assert.Equal(t, []string{"Bash(rm:*)", "Read"}, ap.asked()[0].Tools, "the host sees what is asked")
	assert.Nil(t, l.AllowedTools(), "not granted: ignored")
	f, err := l.Read(ctx(t), "inner/SKILL.md")
	require.NoError(t, err)
	assert.True(t, f.Nested, "the nested SKILL.md is read as markdown of the enclosing skill")

	ap.d = mcp.SkillDecision{Load: true, Tools: true, Remember: true}
	l, err = m.LoadSkill(ctx(t), "docs:pdf-processing")
	require.NoError(t, err)
	assert.Equal(t, []string{"Bash(rm:*)", "Read"}, l.AllowedTools())

	ap.d = mcp.SkillDecision{}
	_, err = m.LoadSkill(ctx(t), "docs:inner")
	assert.ErrorIs(t, err, mcp.ErrSkillNotApproved, "approving the enclosing skill approves none nested in it")
	assert.Equal(t, "skill://pdf-processing/inner/SKILL.md", ap.asked()[len(ap.asked())-1].Skill.URI)
}

func TestASkillReadsOnlyItsOwnFilesFromItsOwnServer(t *testing.T) {
	noLeaks(t)
	recA, recB := &recorder{}, &recorder{}
	secret := mcptest.Skill{Path: "secrets", Files: map[string]string{"SKILL.md": "---\nname: secrets\ndescription: s\n---\n", "token.txt": "hunter2"}}
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: (&approver{d: mcp.SkillDecision{Load: true}}).approve}})
	require.NoError(t, m.Add("a", skillServer(recA, pdfSkill()).Transport()))
	require.NoError(t, m.Add("b", skillServer(recB, secret).Transport()))
	l, err := m.LoadSkill(ctx(t), "a:pdf-processing")
	require.NoError(t, err)
	for _, p := range []string{"skill://secrets/token.txt", "../secrets/token.txt", "@b:skill://secrets/token.txt", "/secrets/token.txt"} {
		_, err := l.Read(ctx(t), p)
		assert.Error(t, err, p)
	}
	_, err = l.Read(ctx(t), "references/NEW.md")
	assert.ErrorIs(t, err, mcp.ErrSkillVerification, "a file the manifest does not list")
	assert.Empty(t, recB.params("resources/read"), "nothing reaches server b")
	assert.Len(t, recA.params("resources/read"), 1, "only SKILL.md was read of a")
}

func TestSkillsAreListedAgainAfterListChangedAndReconnection(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	srv := skillServer(rec, pdfSkill())
	changed := make(chan struct{}, 1)
	m := newManager(t, nil, &mcp.ManagerOptions{ServerOptions: listChanged(changed)})
	require.NoError(t, m.Add("docs", srv.Transport()))
	skills, err := m.Skills(ctx(t))
	require.NoError(t, err)
	require.Len(t, skills, 1)
	_, err = m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Len(t, rec.params("skills/list"), 1, "cached while current")

	srv.AddSkills(mcptest.Skill{Path: "new", Files: map[string]string{"SKILL.md": "---\nname: new\ndescription: d\n---\n"}})
	waitFor(t, changed)
	skills, err = m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Len(t, skills, 2, "list_changed drops the cached listing")

	n := len(rec.params("skills/list"))
	require.NoError(t, m.Reconnect(ctx(t), "docs"))
	_, err = m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Len(t, rec.params("skills/list"), n+1, "a new connection lists anew")
}

func TestASkillIsLoadedByURIAlone(t *testing.T) {
	noLeaks(t)
	hidden := pdfSkill()
	hidden.Unlisted = true
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: (&approver{d: mcp.SkillDecision{Load: true}}).approve}})
	require.NoError(t, m.Add("docs", skillServer(&recorder{}, hidden).Transport()))
	skills, err := m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Empty(t, skills)
	l, err := m.LoadSkill(ctx(t), "docs:skill://pdf-processing/SKILL.md")
	require.NoError(t, err)
	assert.Equal(t, pdfSkillMD, string(l.Content))
	_, err = m.LoadSkill(ctx(t), "nobody:skill://pdf-processing/SKILL.md")
	assert.ErrorIs(t, err, mcp.ErrUnknownRef)
}

func TestSkillApprovalFile(t *testing.T) {
	dir := t.TempDir()
	f := &mcp.SkillApprovalFile{Path: filepath.Join(dir, "sub", "skills.json")}
	a := mcp.SkillApproval{Server: "docs", URI: "skill://a/SKILL.md", Manifest: "sha256:" + strings.Repeat("1", 64), Time: time.Unix(1, 0).UTC()}
	_, ok, err := f.Get("docs", a.URI)
	require.NoError(t, err)
	assert.False(t, ok, "no file is no approval")
	require.NoError(t, f.Put(a))
	fi, err := os.Stat(f.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	got, ok, err := f.Get("docs", a.URI)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, a, got)
	_, ok, _ = f.Get("other", a.URI)
	assert.False(t, ok, "keyed by server and uri, never the uri alone")
	entries, _ := os.ReadDir(filepath.Dir(f.Path))
	assert.Len(t, entries, 1, "no temporary file is left behind")

	b := a
	b.Server = "other"
	require.NoError(t, f.Put(b))
	require.NoError(t, f.Delete("docs", a.URI))
	_, ok, _ = f.Get("docs", a.URI)
	assert.False(t, ok)
	_, ok, _ = f.Get("other", a.URI)
	assert.True(t, ok, "the other server's approval stays")

	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(f.Path, link))
	_, _, err = (&mcp.SkillApprovalFile{Path: link}).Get("docs", a.URI)
	assert.Error(t, err, "a link is not followed")
	assert.Error(t, (&mcp.SkillApprovalFile{Path: link}).Put(a), "nor written through")
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"approvals":[`+strings.Repeat(" ", 4<<20)+`]}`), 0o600))
	_, _, err = (&mcp.SkillApprovalFile{Path: big}).Get("docs", a.URI)
	assert.ErrorContains(t, err, "over")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{`), 0o600))
	assert.Error(t, (&mcp.SkillApprovalFile{Path: bad}).Put(a), "a file that does not parse is not written over")
	kept, _ := os.ReadFile(bad)
	assert.Equal(t, "{", string(kept))
}

func TestSkillApprovalFileKeepsAtMostItsBound(t *testing.T) {
	f := &mcp.SkillApprovalFile{Path: filepath.Join(t.TempDir(), "skills.json")}
	var list []string
	for i := range mcp.MaxSkillApprovals {
		list = append(list, `{"server":"s","uri":"skill://u`+strconv.Itoa(i)+`/SKILL.md","manifest":"sha256:`+strings.Repeat("1", 64)+`","time":"2026-01-01T00:00:00Z"}`)
	}
	require.NoError(t, os.WriteFile(f.Path, []byte(`{"approvals":[`+strings.Join(list, ",")+`]}`), 0o600))
	require.NoError(t, f.Put(mcp.SkillApproval{Server: "s", URI: "skill://newest/SKILL.md", Manifest: "sha256:" + strings.Repeat("2", 64), Time: time.Now()}))
	_, ok, err := f.Get("s", "skill://newest/SKILL.md")
	require.NoError(t, err)
	assert.True(t, ok)
	_, ok, _ = f.Get("s", "skill://u0/SKILL.md")
	assert.False(t, ok, "the oldest is dropped past the bound")
	_, ok, _ = f.Get("s", "skill://u4095/SKILL.md")
	assert.True(t, ok)
}

func TestAVerificationThatFailsDropsTheServersCachedListing(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	tampered := pdfSkill() // its FORMS.md is not what the entry says
	tampered.Entry = func(e *mcp.Skill) { formsOf(e).Digest = "sha256:" + strings.Repeat("0", 64) }
	stale := mcptest.Skill{Path: "stale", Files: map[string]string{"SKILL.md": "---\nname: stale\ndescription: d\n---\n"},
		Entry: func(e *mcp.Skill) { e.Resources[0].Size++ }} // its SKILL.md is not
	m := newManager(t, nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{Approve: (&approver{d: mcp.SkillDecision{Load: true}}).approve}})
	require.NoError(t, m.Add("docs", skillServer(rec, tampered, stale).Transport()))
	listings := func() int { return len(rec.params("skills/list")) }

	l, err := m.LoadSkill(ctx(t), "docs:pdf-processing")
	require.NoError(t, err)
	_, err = m.Skills(ctx(t))
	require.NoError(t, err)
	require.Equal(t, 1, listings(), "cached while current")
	_, err = l.Read(ctx(t), "references/FORMS.md")
	require.ErrorIs(t, err, mcp.ErrSkillVerification)
	_, err = m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, 2, listings(), "a file that fails verification: the skill may have changed, listed again")

	_, err = m.LoadSkill(ctx(t), "docs:stale")
	require.ErrorIs(t, err, mcp.ErrSkillVerification)
	_, err = m.Skills(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, 3, listings(), "LoadSkill found the skill in the cache, and the SKILL.md that failed dropped it")
}
