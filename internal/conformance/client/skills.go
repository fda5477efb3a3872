package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcplug/mcplug/mcp"
)

// skills plays a host of the Skills extension in the suite's
// sep-2640-client-* scenarios: it lists the server's skills and shows
// their index, as a host shows it to the model, reading no file. In the
// scenarios where the model then asks for a skill (every one but
// sep-2640-client-no-prefetch), it loads the first: its SKILL.md read
// and verified against the entry (size, digest, frontmatter), then each
// supporting file read and verified in turn. A skill that fails
// verification is refused, and nothing more of it is read: that is the
// host doing its job, so the client still succeeds.
func skills(ctx context.Context, c *mcp.Connection, scenario string) error {
	list, err := c.ListSkills(ctx)
	if err != nil {
		return err
	}
	for _, s := range list {
		fmt.Printf("skill %s: %s (%s)\n", s.Name, s.Description, s.URI)
	}
	if scenario == "sep-2640-client-no-prefetch" || len(list) == 0 {
		return nil
	}
	s := &list[0]
	md, err := c.ReadSkillFile(ctx, s, s.URI)
	if errors.Is(err, mcp.ErrSkillVerification) {
		fmt.Printf("skill %s refused: %v\n", s.Name, err)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Printf("loaded %s (%d bytes, verified %v)\n", s.Name, len(md.Content), md.Verified)
	for _, r := range s.Resources {
		if r.URI == s.URI {
			continue
		}
		f, err := c.ReadSkillFile(ctx, s, r.URI)
		if errors.Is(err, mcp.ErrSkillVerification) {
			fmt.Printf("file %s refused: %v\n", r.URI, err)
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Printf("read %s (%d bytes)\n", f.URI, len(f.Content))
	}
	return nil
}
