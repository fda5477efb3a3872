package agent

import (
	"context"
	"fmt"
	"strings"
)

// A PromptSection is a source of a Section of an Agent's system prompt
// (see Agent.Sections): it is asked before every model turn, so that what
// it shows follows what changed (a server's skills, say). A Section with
// no text adds nothing; an error ends the Chat.
type PromptSection interface {
	PromptSection(ctx context.Context) (Section, error)
}

// sections asks each of a.Sections for its Section of this turn, in order.
func (a *Agent) sections(ctx context.Context) ([]Section, error) {
	var out []Section
	for _, p := range a.Sections {
		s, err := p.PromptSection(ctx)
		if err != nil {
			return nil, fmt.Errorf("agent: system prompt section: %w", err)
		}
		if strings.TrimSpace(s.Text) != "" {
			out = append(out, s)
		}
	}
	return out, nil
}
