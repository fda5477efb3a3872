package agent

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcplug/mcplug/mcp"
)

// DeferredSectionTitle is the title of the Section that names the tools
// deferred behind a search, so that the model knows what it can search
// for (Claude Code lists them the same way).
const DeferredSectionTitle = "Deferred tools"

// DefaultDeferredListBytes bounds the section of deferred tools: 16 KiB,
// some 4,000 tokens at four bytes a token, 2% of a 200,000-token context.
// The names of the 634 tools of the test fixtures take 21.7 KB: past the
// bound, the servers with the most tools are shown as one row each.
const DefaultDeferredListBytes = 16 << 10

// listedName is what a name must be to be listed: what the model APIs
// take as a tool name. An mcp.Manager's exposed names always are.
var listedName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// deferredSection names the deferred tools for the model, within limit
// bytes of text: every name, or, when they do not fit, a row
// "mcp__<server>__* (N)" for the servers with the most tools, as many as
// it takes; past that, the rows that still do not fit are counted at the
// end. native says the Model searches with its own tool (a
// SearchingModel), else the Agent's tool_search does.
func deferredSection(deferred []mcp.Tool, native bool, limit int) (Section, bool) {
	if len(deferred) == 0 || limit < 0 {
		return Section{}, false
	}
	if limit == 0 {
		limit = DefaultDeferredListBytes
	}
	// The tools by server, in the order they came.
	type group struct {
		prefix string // "mcp__<server>__", or "" for a tool of no server
		names  []string
		row    bool // shown as one row
	}
	var groups []*group
	byPrefix := map[string]*group{}
	unlisted := 0
	for _, t := range deferred {
		if !listedName.MatchString(t.Name) {
			unlisted++
			continue
		}
		prefix := serverPrefix(t.Name)
		g := byPrefix[prefix]
		if g == nil || prefix == "" {
			g = &group{prefix: prefix}
			groups = append(groups, g)
			if prefix != "" {
				byPrefix[prefix] = g
			}
		}
		g.names = append(g.names, t.Name)
	}
	how := "Load one with " + SearchToolName + ` before you call it: query "select:<name>[,<name>...]" for tools named below, or a few words for what it should do.`
	if native {
		how = "Search for one with your tool search tool before you call it: a few words for what it should do, or its name."
	}
	head := "These tools are available, but their definitions are not loaded. " + how
	shortened := " This list is shortened to save room: a row such as mcp__slack__* (42) stands for the 42 tools of that server, whose names are not shown. " +
		`Before you say that something cannot be done, search that server's tools: its name and words for what you need ("slack send message").`
	render := func(short bool) (string, int) {
		var b strings.Builder
		b.WriteString(head)
		if short {
			b.WriteString(shortened)
		}
		b.WriteString(" The tools are:\n")
		rows := 0
		for _, g := range groups {
			if g.row {
				fmt.Fprintf(&b, "%s* (%d)\n", g.prefix, len(g.names))
				rows++
				continue
			}
			for _, n := range g.names {
				b.WriteString(n)
				b.WriteByte('\n')
				rows++
			}
		}
		return b.String(), rows
	}
	text, _ := render(false)
	if len(text)+unlistedLen(unlisted) > limit {
		// The servers with the most tools become rows first.
		order := slices.Clone(groups)
		slices.SortStableFunc(order, func(a, b *group) int { return len(b.names) - len(a.names) })
		for _, g := range order {
			if g.prefix == "" || len(g.names) < 2 {
				continue
			}
			g.row = true
			if text, _ = render(true); len(text)+unlistedLen(unlisted) <= limit {
				break
			}
		}
		text, _ = render(true)
	}
	if unlisted > 0 {
		text += unlistedLine(unlisted)
	}
	if len(text) > limit { // too many servers even as rows: the last rows are counted
		lines := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
		cut := len(lines)
		for cut > 1 {
			cut--
			more := fmt.Sprintf("... and %d more rows, not shown: search for them.\n", len(lines)-cut)
			if n := len(strings.Join(lines[:cut], "")) + len(more); n <= limit {
				text = strings.Join(lines[:cut], "") + more
				break
			}
		}
		if len(text) > limit { // not even the header fits
			return Section{}, false
		}
	}
	return Section{Title: DeferredSectionTitle, Text: strings.TrimSuffix(text, "\n")}, true
}

// serverPrefix is "mcp__<server>__" of an exposed name, or "".
func serverPrefix(name string) string {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok || server == "" {
		return ""
	}
	return "mcp__" + server + "__"
}

func unlistedLine(n int) string {
	return fmt.Sprintf("(%d more with names that cannot be shown: search for them.)\n", n)
}

func unlistedLen(n int) int {
	if n == 0 {
		return 0
	}
	return len(unlistedLine(n))
}

// deferredSections are the sections of a turn whose deferred tools are
// deferred: the one that names them, unless ToolSearch.ListBytes leaves
// it out.
func (a *Agent) deferredSections(deferred []mcp.Tool) []Section {
	sm, native := a.Model.(SearchingModel)
	s, ok := deferredSection(deferred, native && sm.SearchesTools(), a.ToolSearch.ListBytes)
	if !ok {
		return nil
	}
	return []Section{s}
}
