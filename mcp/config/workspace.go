package config

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is the project a Config was loaded for, found the way Claude
// Code finds it.
//
// Everything inside a workspace may have come with a git clone, so until
// the user trusts it, nothing in it decides anything: approvals in
// <project>/.claude/settings.local.json and in the project's entry of
// ~/.claude.json do not count, a project server's headersHelper does not
// run, and the user's own stdio servers and headersHelpers run outside it
// (see Server.WorkDir), where the workspace cannot plant a binary
// or a node_modules that npx, uvx or a relative command would pick up.
// The user's own settings (~/.claude/settings.json) count in any
// workspace.
type Workspace struct {
	// Dir is the directory Load was given, absolute, with symlinks
	// resolved. Stdio servers of the project run there, with
	// CLAUDE_PROJECT_DIR set to it.
	Dir string
	// Root is the project root: the git work tree that holds Dir (the
	// nearest parent with a .git), or Dir itself outside git. Together with
	// Dir, it keys the project's entry in ~/.claude.json.
	Root string
	// Trusted reports whether the user trusts the workspace: Claude Code's
	// "hasTrustDialogAccepted" in ~/.claude.json's entry for Dir or Root
	// (SaveTrust writes it), or mcp.ManagerOptions.TrustWorkspace.
	Trusted bool

	warnings []string // a parent .git passed over
}

// findWorkspace resolves dir to a Workspace; Trusted is left to the caller.
func findWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	ws := &Workspace{Dir: real, Root: real}
	for p := real; ; {
		git := filepath.Join(p, ".git")
		if info, err := os.Lstat(git); err == nil {
			if ownedByUserOrRoot(info) {
				ws.Root = p
				break
			}
			// git's CVE-2022-24765: another user's /tmp/.git must not make
			// /tmp the project whose trust and approvals count.
			ws.warnings = append(ws.warnings, fmt.Sprintf("%s is not taken as the project root: it belongs to another user (%s), and a .git counts only if the user or root owns it (as git's safe.directory)", git, ownerOf(info)))
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	return ws, nil
}

// keys are the project keys of ~/.claude.json that belong to ws, the
// nearer last: Root, then Dir.
func (ws *Workspace) keys() []string {
	if ws.Root == ws.Dir {
		return []string{ws.Dir}
	}
	return []string{ws.Root, ws.Dir}
}

// contains reports whether path is ws's Root or inside it.
func (ws *Workspace) contains(path string) bool {
	rel, err := filepath.Rel(ws.Root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// outsideDir is where the user's own stdio servers and headersHelpers run
// while ws is not trusted: the user's home directory, or the file
// system's root when home is unknown or inside the workspace.
func (ws *Workspace) outsideDir(home string) string {
	if home != "" && filepath.IsAbs(home) && !ws.contains(home) {
		return home
	}
	return string(filepath.Separator)
}

// SaveTrust records that the user trusts the workspace of dir (see
// Workspace): "hasTrustDialogAccepted": true in the entry of its project
// root in ~/.claude.json, as Claude Code's trust dialog does. It is
// written as Add writes ~/.claude.json: every other byte kept, under
// Claude Code's lock, by replacing the file whole (through a link the
// user owns there, to the file it leads to).
func SaveTrust(dir string) error {
	ws, err := findWorkspace(dir)
	if err != nil {
		return &Error{File: dir, Err: err}
	}
	home, err := userWriteDir() // the user's own, wherever it links to
	if err != nil {
		return &Error{Err: err}
	}
	t := userTarget(home)
	t.path = []string{"projects", ws.Root}
	return t.edit(context.Background(), func(*objectSpan, io.ReaderAt) ([]jsonEdit, error) {
		return []jsonEdit{{path: t.path, name: "hasTrustDialogAccepted", value: json.RawMessage("true")}}, nil
	})
}
