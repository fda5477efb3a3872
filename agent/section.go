package agent

import "strings"

// Section is a part of the system prompt that the program did not write:
// the instructions of MCP servers, the index of their skills, the names
// of tools deferred behind a search. Its text comes from servers, so it
// is untrusted: a Model sends each section apart from Request.System
// (the Messages API model as a system block of its own, after the
// program's), never mixed into it.
type Section struct {
	// Title names the section, e.g. "MCP Server Instructions".
	Title string
	// Text is the section's body, already bounded by whoever made it.
	Text string
}

// String is the section as a model reads it: "# Title", a blank line,
// then the text.
func (s Section) String() string {
	var b strings.Builder
	b.Grow(len(s.Title) + len(s.Text) + 4)
	b.WriteString("# ")
	b.WriteString(s.Title)
	b.WriteString("\n\n")
	b.WriteString(s.Text)
	return b.String()
}

// ownSections are the sections the Agent itself makes for this turn,
// before those of Agent.Sections: the servers' instructions, the tools
// left out because the model's API would refuse them, and the servers
// whose tools could not be loaded.
func (a *Agent) ownSections(refused []refused) []Section {
	var out []Section
	limit := a.MaxInstructions
	if limit <= 0 {
		limit = DefaultMaxInstructions
	}
	if s, ok := instructionsSection(a.Tools, limit); ok {
		out = append(out, s)
	}
	if s, ok := unavailableSection(refused); ok {
		out = append(out, s)
	}
	if s, ok := unavailableServersSection(a.Tools); ok {
		out = append(out, s)
	}
	return out
}
