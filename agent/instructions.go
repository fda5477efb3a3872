package agent

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcplug/mcplug/mcp"
)

// InstructionsProvider is a ToolProvider whose servers say how to use
// their tools: *mcp.Manager (Manager.Instructions).
type InstructionsProvider interface {
	Instructions() []mcp.ServerInstructions
}

var _ InstructionsProvider = (*mcp.Manager)(nil)

// InstructionsTitle is the title of the Section of the servers'
// instructions.
const InstructionsTitle = "MCP Server Instructions"

// DefaultMaxInstructions bounds the section of the servers' instructions,
// in characters (each server's instructions are bounded by its
// provider too: 4096 characters in an mcp.Manager).
const DefaultMaxInstructions = 25_000

// cutShort marks where a server's text stops when the section is past
// its bound, as Claude Code marks it.
const cutShort = "[cut short]"

// instructionsSection is the section of the instructions of the servers
// of the providers that have some, sorted by server and each under a
// heading of its name, as Claude Code lays it out; past limit characters,
// the longest are cut (each ends with "[cut short]") until it fits. ok
// is false when no server has instructions.
func instructionsSection(providers []ToolProvider, limit int) (Section, bool) {
	var all []mcp.ServerInstructions
	for _, p := range providers {
		if ip, ok := p.(InstructionsProvider); ok {
			for _, si := range ip.Instructions() {
				if strings.TrimSpace(si.Text) != "" {
					all = append(all, si)
				}
			}
		}
	}
	if len(all) == 0 {
		return Section{}, false
	}
	slices.SortStableFunc(all, func(a, b mcp.ServerInstructions) int { return strings.Compare(a.Server, b.Server) })
	lead := "The following MCP servers have provided instructions for how to use their tools and resources"
	heads := make([]string, len(all))
	sizes := make([]int, len(all))
	fixed := utf8.RuneCountInString(lead) + 3
	for i, si := range all {
		heads[i] = "## " + oneLine(si.Server, 200) + "\n"
		fixed += utf8.RuneCountInString(heads[i]) + 2
		sizes[i] = utf8.RuneCountInString(si.Text)
	}
	shortened := false
	if room := limit - fixed - len(all)*len(cutShort) - 120; total(sizes) > room {
		shortened = true
		share := fairShare(sizes, max(room, 0))
		for i, si := range all {
			if sizes[i] > share {
				cut, _ := cutChars(si.Text, share)
				cut = strings.TrimSuffix(cut, "… [truncated]")
				all[i].Text = cut + " " + cutShort
			}
		}
	}
	var b strings.Builder
	b.WriteString(lead)
	if shortened {
		b.WriteString(". To save room, some are cut, and " + cutShort + " marks where a server's text stops")
	}
	b.WriteString(":")
	for i, si := range all {
		b.WriteString("\n\n")
		b.WriteString(heads[i])
		b.WriteString(si.Text)
	}
	return Section{Title: InstructionsTitle, Text: b.String()}, true
}

func total(sizes []int) int {
	n := 0
	for _, s := range sizes {
		n += s
	}
	return n
}

// fairShare is the largest share such that the sizes, each cut to it,
// sum to room at most: the short ones keep all, the long ones are cut to
// the same length.
func fairShare(sizes []int, room int) int {
	sorted := slices.Clone(sizes)
	slices.Sort(sorted)
	left := len(sorted)
	for _, s := range sorted {
		if s*left > room {
			return room / left
		}
		room -= s
		left--
	}
	return room
}
