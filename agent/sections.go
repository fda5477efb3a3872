package agent

import (
	"context"
	"fmt"
	"strings"
)

// A PromptSection adds a section to an Agent's system prompt (see
// Agent.Sections): it is asked for its text before every model turn, so
// that what it shows follows what changed (a server's skills, say). An
// empty text adds nothing; an error ends the Chat.
type PromptSection interface {
	PromptSection(ctx context.Context) (string, error)
}

// system is the system prompt of a turn: System, then each section's
// text, separated by blank lines.
func (a *Agent) system(ctx context.Context) (string, error) {
	if len(a.Sections) == 0 {
		return a.System, nil
	}
	parts := []string{}
	if a.System != "" {
		parts = append(parts, a.System)
	}
	for _, s := range a.Sections {
		text, err := s.PromptSection(ctx)
		if err != nil {
			return "", fmt.Errorf("agent: system prompt section: %w", err)
		}
		if text = strings.TrimSpace(text); text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}
