package mcp

// Approvals of skills: per skill, identified by the Manager's name for
// its server and its uri, and bound to its manifest (every file's uri
// and digest) at the moment the approval was given.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// SkillApproval is a user's approval of one skill: the skill of uri on
// the server the Manager names Server, as its manifest stood then
// (Manifest, see ManifestDigest). It covers that manifest only: an
// entry that lists another set of files revokes it.
type SkillApproval struct {
	Server   string    `json:"server"`
	URI      string    `json:"uri"`
	Manifest string    `json:"manifest"`
	Tools    bool      `json:"allowedTools,omitempty"` // the frontmatter's allowed-tools were granted too
	Time     time.Time `json:"time"`
}

// ManifestDigest is the digest an approval binds to: SHA-256 over the
// manifest's (uri, digest) pairs, sorted, as "sha256:<hex>"; "" for a
// dynamic skill, which no stored approval covers.
func ManifestDigest(s *Skill) string {
	if s.Dynamic {
		return ""
	}
	pairs := make([]string, len(s.Resources))
	for i, r := range s.Resources {
		pairs[i] = r.URI + "\x00" + r.Digest + "\n"
	}
	slices.Sort(pairs)
	h := sha256.New()
	for _, p := range pairs {
		io.WriteString(h, p)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// SkillApprovals keeps approvals where a program wants them (see
// SkillApprovalFile). Get reports the approval of (server, uri), if
// any; Put stores one (replacing that of the same skill); Delete drops
// one. Their errors are reported and count as no approval.
type SkillApprovals interface {
	Get(server, uri string) (SkillApproval, bool, error)
	Put(a SkillApproval) error
	Delete(server, uri string) error
}

// SkillDecision is the host's answer for a skill about to be loaded.
type SkillDecision struct {
	Load bool // load it; false refuses it
	// Tools grants the frontmatter's allowed-tools (LoadedSkill.
	// AllowedTools); without it they are ignored.
	Tools bool
	// Remember stores the approval (SkillOptions.Approvals), bound to
	// the manifest, so that the next load of the same files asks no
	// more. A dynamic skill's approval is never stored.
	Remember bool
}

// SkillApprovalRequest is what the host is asked to decide on.
type SkillApprovalRequest struct {
	Skill *ServerSkill
	// Changed: an approval was stored for this skill, for another set
	// of files; it has been revoked.
	Changed bool
	// Tools are the frontmatter's allowed-tools, asked for.
	Tools []string
}

// SkillOptions configure the skills of a Manager (ManagerOptions.Skills).
type SkillOptions struct {
	// Approve decides on a skill to load that no stored approval covers;
	// it runs under the ctx of LoadSkill. Nil loads nothing that is not
	// covered: every skill needs an approval.
	Approve func(ctx context.Context, req *SkillApprovalRequest) SkillDecision
	// Approvals keeps the approvals remembered; nil keeps them in memory
	// for the Manager's life.
	Approvals SkillApprovals
}

// ErrSkillNotApproved is matched by the error of LoadSkill for a skill
// no approval covers and the host did not approve.
var ErrSkillNotApproved = errors.New("mcp: the skill is not approved")

// SkillApprovalError is a load refused for want of an approval.
type SkillApprovalError struct {
	Server, URI string
	Changed     bool // a stored approval was revoked: the skill's files changed
}

func (e *SkillApprovalError) Error() string {
	why := "needs the user's approval (SkillOptions.Approve)"
	if e.Changed {
		why = "changed since it was approved (its files differ) and needs the user's approval again"
	}
	return fmt.Sprintf("mcp: skill %q of server %q %s", e.URI, e.Server, why)
}

func (e *SkillApprovalError) Is(target error) bool { return target == ErrSkillNotApproved }

// memoryApprovals keeps approvals in memory.
type memoryApprovals struct {
	mu sync.Mutex
	m  map[[2]string]SkillApproval
}

func (a *memoryApprovals) Get(server, uri string) (SkillApproval, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.m[[2]string{server, uri}]
	return v, ok, nil
}

func (a *memoryApprovals) Put(v SkillApproval) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[[2]string]SkillApproval{}
	}
	a.m[[2]string{v.Server, v.URI}] = v
	return nil
}

func (a *memoryApprovals) Delete(server, uri string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, [2]string{server, uri})
	return nil
}

// Bounds of an approvals file.
const (
	MaxSkillApprovals     = 4096    // approvals a file keeps; the oldest go first
	maxSkillApprovalsFile = 4 << 20 // bytes read of it
)

// SkillApprovalFile keeps approvals in a JSON file of the program's
// choice: written whole to a temporary file beside it and renamed over
// it (a reader never sees half a file), mode 0600, at most
// MaxSkillApprovals approvals (the oldest dropped first). A file that
// is not a regular file (a link, say), is larger than 4 MiB or does not
// parse is an error, and is never written over. It is safe for
// concurrent use within one process.
type SkillApprovalFile struct {
	Path string
	mu   sync.Mutex
}

var (
	_ SkillApprovals = (*SkillApprovalFile)(nil)
	_ SkillApprovals = (*memoryApprovals)(nil)
)

type approvalsDoc struct {
	Approvals []SkillApproval `json:"approvals"`
}

// read returns the approvals of the file; none when it does not exist.
func (f *SkillApprovalFile) read() ([]SkillApproval, error) {
	fi, err := os.Lstat(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("mcp: skill approvals %s: not a regular file", f.Path)
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxSkillApprovalsFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSkillApprovalsFile {
		return nil, fmt.Errorf("mcp: skill approvals %s: over %d bytes", f.Path, maxSkillApprovalsFile)
	}
	var doc approvalsDoc
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("mcp: skill approvals %s: %w (fix or remove the file)", f.Path, err)
		}
	}
	return doc.Approvals, nil
}

// write replaces the file with list, atomically.
func (f *SkillApprovalFile) write(list []SkillApproval) error {
	if len(list) > MaxSkillApprovals {
		slices.SortStableFunc(list, func(a, b SkillApproval) int { return a.Time.Compare(b.Time) })
		list = list[len(list)-MaxSkillApprovals:]
	}
	b, err := json.MarshalIndent(approvalsDoc{Approvals: list}, "", "  ")
	if err != nil {
		return err
	}
	if len(b) > maxSkillApprovalsFile {
		return fmt.Errorf("mcp: skill approvals %s: would be over %d bytes", f.Path, maxSkillApprovalsFile)
	}
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.Path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a failure; the rename moved it otherwise
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}

// Get returns the approval of (server, uri).
func (f *SkillApprovalFile) Get(server, uri string) (SkillApproval, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	list, err := f.read()
	if err != nil {
		return SkillApproval{}, false, err
	}
	for _, a := range list {
		if a.Server == server && a.URI == uri {
			return a, true, nil
		}
	}
	return SkillApproval{}, false, nil
}

// Put stores a, replacing the approval of the same skill.
func (f *SkillApprovalFile) Put(a SkillApproval) error {
	if a.Manifest == "" || !strings.HasPrefix(a.Manifest, "sha256:") {
		return errors.New("mcp: an approval without a manifest digest is not stored (a dynamic skill's never is)")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	list, err := f.read()
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(x SkillApproval) bool { return x.Server == a.Server && x.URI == a.URI })
	return f.write(append(list, a))
}

// Delete drops the approval of (server, uri); the file is rewritten only
// when it held one.
func (f *SkillApprovalFile) Delete(server, uri string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	list, err := f.read()
	if err != nil {
		return err
	}
	n := len(list)
	list = slices.DeleteFunc(list, func(x SkillApproval) bool { return x.Server == server && x.URI == uri })
	if len(list) == n {
		return nil
	}
	return f.write(list)
}
