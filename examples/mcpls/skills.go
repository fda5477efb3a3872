package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcplug/mcplug/mcp"
)

// listSkills prints the skills of every server (-skills): ref, server,
// uri and description, and what else is served under the same name. No
// file of a skill is read.
func listSkills(ctx context.Context, m *mcp.Manager, stdout, stderr io.Writer) int {
	skills, err := m.Skills(ctx)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	if len(skills) == 0 {
		fmt.Fprintln(stdout, "no skills")
		return 0
	}
	for _, s := range skills {
		kind := fmt.Sprintf("%d files", len(s.Resources))
		if s.Dynamic {
			kind = "dynamic"
		}
		fmt.Fprintf(stdout, "%s (server %s, %s, %s)\n    %s\n", oneLine(s.Ref), oneLine(s.Server), oneLine(s.URI), kind, oneLine(s.Description))
		if len(s.SameName) > 0 {
			fmt.Fprintf(stdout, "    same name as: %s\n", oneLine(strings.Join(s.SameName, ", ")))
		}
	}
	return 0
}

// showSkill prints one skill (-skill REF) for the user to inspect before
// any model sees it: its entry, then each of its files read and verified
// against the entry (size, digest; SKILL.md's frontmatter too), then
// SKILL.md. Inspecting a skill loads nothing and needs no approval. The
// exit status is 1 when a file fails verification.
func showSkill(ctx context.Context, m *mcp.Manager, ref string, stdout, stderr io.Writer) int {
	s, err := m.Skill(ctx, ref)
	if err != nil {
		fmt.Fprintf(stderr, "%s (list the skills with mcpls -skills)\n", safe(err.Error()))
		return 2
	}
	c, err := m.Connection(ctx, s.Server)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return 1
	}
	fmt.Fprintf(stdout, "skill %s\n  server  %s\n  uri     %s\n  name    %s\n  about   %s\n", oneLine(s.Ref), oneLine(s.Server), oneLine(s.URI), oneLine(s.Name), oneLine(s.Description))
	if tools := s.Tools(); len(tools) > 0 {
		fmt.Fprintf(stdout, "  asks for allowed-tools %s (granted only by an approval)\n", oneLine(strings.Join(tools, " ")))
	}
	uris := []string{s.URI}
	if s.Dynamic {
		fmt.Fprintln(stdout, "  files   dynamic: the server generates them and publishes no digests, so nothing of it can be verified")
	} else {
		fmt.Fprintf(stdout, "  manifest %s\n", mcp.ManifestDigest(&s.Skill))
		uris = uris[:0]
		for _, r := range s.Resources {
			uris = append(uris, r.URI)
		}
	}
	failed := false
	var md []byte
	for _, uri := range uris {
		f, err := c.ReadSkillFile(ctx, &s.Skill, uri)
		switch {
		case errors.Is(err, mcp.ErrSkillVerification):
			failed = true
			fmt.Fprintf(stdout, "  %-10s %s\n             %s\n", "FAILED", oneLine(uri), oneLine(err.Error()))
		case err != nil:
			failed = true
			fmt.Fprintf(stdout, "  %-10s %s: %s\n", "ERROR", oneLine(uri), oneLine(err.Error()))
		default:
			state := "verified"
			if !f.Verified {
				state = "unverified"
			}
			fmt.Fprintf(stdout, "  %-10s %s (%d bytes)\n", state, oneLine(uri), len(f.Content))
			if uri == s.URI {
				md = f.Content
			}
		}
	}
	if md != nil {
		fmt.Fprintf(stdout, "\n%s\n", safe(string(md)))
	}
	if failed {
		return 1
	}
	return 0
}
