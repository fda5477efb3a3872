package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcplug/mcplug/agent/toolsearch"
	"github.com/mcplug/mcplug/mcp"
)

// ToolSearch says whether an Agent defers its tools behind a search, as
// Claude Code does with MCP tools: a deferred tool's definition reaches the
// model only once a search found it, and its name stays callable. The zero
// value sends every definition on every turn.
type ToolSearch struct {
	Mode SearchMode
	// Percent is the share of ContextTokens past which SearchAuto defers
	// (Claude Code's auto:N); zero means 10.
	Percent int
	// ContextTokens is the model's context window; zero means 200,000.
	ContextTokens int
	// ListBytes bounds the Section that names the deferred tools in each
	// request while tools are deferred (DeferredSectionTitle), so that
	// the model knows what it can search for: every name, or for the
	// servers with the most tools a row "mcp__<server>__* (N)" each, as
	// many as it takes to fit. Zero means DefaultDeferredListBytes; a
	// negative value leaves the section out.
	ListBytes int
}

// SearchMode is when tools are deferred.
type SearchMode int

const (
	SearchOff  SearchMode = iota // every definition, every turn
	SearchOn                     // deferred always
	SearchAuto                   // deferred once their definitions pass Percent of the context
)

// ParseToolSearch reads Claude Code's ENABLE_TOOL_SEARCH: "true", "false",
// "auto" (and "", as Claude Code's default) or "auto:N" (N percent).
func ParseToolSearch(s string) (ToolSearch, error) {
	switch v := strings.TrimSpace(strings.ToLower(s)); {
	case v == "true" || v == "1":
		return ToolSearch{Mode: SearchOn}, nil
	case v == "false" || v == "0":
		return ToolSearch{Mode: SearchOff}, nil
	case v == "" || v == "auto":
		return ToolSearch{Mode: SearchAuto}, nil
	case strings.HasPrefix(v, "auto:"):
		n, err := strconv.Atoi(strings.TrimPrefix(v, "auto:"))
		if err != nil || n < 0 || n > 100 {
			return ToolSearch{}, fmt.Errorf("agent: tool search %q: auto:N takes a percent from 0 to 100", s)
		}
		return ToolSearch{Mode: SearchAuto, Percent: n}, nil
	}
	return ToolSearch{}, fmt.Errorf("agent: tool search %q: want true, false, auto or auto:N", s)
}

// SearchingModel is a Model that searches deferred tools itself (the
// Anthropic API's tool search tool): it gets their definitions in
// Request.Deferred, to be loaded only when found, and reports what it
// found in BlockToolSearchResult blocks.
type SearchingModel interface {
	Model
	SearchesTools() bool
}

// SearchToolName is the tool an Agent offers a Model that does not search
// itself: its arguments are {"query": "a few words" or
// "select:name1,name2", "max_results": N} (default 5, at most 20), and the
// deferred tools it finds are offered from the next request on.
const SearchToolName = "tool_search"

// Bounds of one search.
const (
	defaultSearchResults = 5
	maxSearchResults     = 20
)

// AlwaysLoadMeta is the key of a tool's _meta that Claude Code reads: true
// never defers the tool, false defers it even where its server is always
// loaded (an mcp.Manager sets it for the tools of an alwaysLoad entry).
const AlwaysLoadMeta = "anthropic/alwaysLoad"

// alwaysLoad reports whether t may not be deferred.
func alwaysLoad(t mcp.Tool) bool {
	if len(t.Meta) == 0 {
		return false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(t.Meta, &meta) != nil {
		return false
	}
	var v bool
	return json.Unmarshal(meta[AlwaysLoadMeta], &v) == nil && v
}

// searchState is what an Agent keeps of its tool search: the tools found
// (by name, across turns, list changes and reconnections) and the index of
// the last list.
type searchState struct {
	found map[string]bool
	index *toolsearch.Index
	print uint64 // of the list indexed
}

// Defers reports whether s defers tools of this list (none found yet):
// always in SearchOn, in SearchAuto once the definitions of the tools that
// may be deferred pass Percent of ContextTokens (at four bytes of JSON a
// token), never in SearchOff.
func (s ToolSearch) Defers(tools []mcp.Tool) bool {
	var candidates []mcp.Tool
	for _, t := range tools {
		if !alwaysLoad(t) {
			candidates = append(candidates, t)
		}
	}
	return s.defers(candidates)
}

func (s ToolSearch) defers(candidates []mcp.Tool) bool {
	switch s.Mode {
	case SearchOn:
		return len(candidates) > 0
	case SearchAuto:
		percent, window := s.Percent, s.ContextTokens
		if percent <= 0 {
			percent = 10
		}
		if window <= 0 {
			window = 200_000
		}
		return estimateTokens(candidates) > window*percent/100
	}
	return false
}

// split divides the tools of a turn into those sent whole and those
// deferred, as the Agent's ToolSearch says.
func (a *Agent) split(tools []mcp.Tool) (loaded, deferred []mcp.Tool) {
	if a.ToolSearch.Mode == SearchOff {
		return tools, nil // nothing to look at on every turn
	}
	var candidates []mcp.Tool
	for _, t := range tools {
		if alwaysLoad(t) || a.search.found[t.Name] {
			loaded = append(loaded, t)
		} else {
			candidates = append(candidates, t)
		}
	}
	if !a.ToolSearch.defers(candidates) {
		return tools, nil
	}
	return loaded, candidates
}

// estimateTokens is what the definitions of tools cost the model, at four
// bytes of JSON a token.
func estimateTokens(tools []mcp.Tool) int {
	n := 0
	for _, t := range tools {
		n += len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + 32
	}
	return n / 4
}

// searchTool is the definition of the Agent's own search tool.
var searchTool = mcp.Tool{
	Name:  SearchToolName,
	Title: "Search tools",
	Description: "Find tools to use: most tools are not loaded until searched for. Give what you want to do in a few words " +
		"(\"create a pull request\", \"take a screenshot of the page\"), or \"select:name1,name2\" for tools by exact name. " +
		"The tools found can be called from the next turn on.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what the tool should do, or select:name1,name2"},` +
		`"max_results":{"type":"integer","description":"how many tools to find (default 5, at most 20)"}},"required":["query"]}`),
}

// runSearch answers a call of the search tool over deferred: it finds
// tools, marks them found, and lists them for the model.
func (a *Agent) runSearch(use Block, deferred []mcp.Tool) (*mcp.CallToolResult, error) {
	var in struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}
	if err := json.Unmarshal(use.Input, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return nil, errors.New(`the search needs a "query": what the tool should do, or select:name1,name2`)
	}
	k := in.MaxResults
	if k <= 0 {
		k = defaultSearchResults
	}
	k = min(k, maxSearchResults)
	if p := fingerprint(deferred); a.search.index == nil || p != a.search.print {
		a.search.index, a.search.print = toolsearch.New(deferred), p
	}
	results := a.search.index.Search(in.Query, k)
	if len(results) == 0 {
		return Text("No tool matches " + strconv.Quote(in.Query) + ". Try other words, or fewer." + notLoaded(a.Tools)), nil
	}
	if a.search.found == nil {
		a.search.found = map[string]bool{}
	}
	var b strings.Builder
	if len(results) == 1 {
		b.WriteString("Found 1 tool; it can be called from now on:\n")
	} else {
		fmt.Fprintf(&b, "Found %d tools; they can be called from now on:\n", len(results))
	}
	for _, r := range results {
		a.search.found[r.Tool.Name] = true
		desc := r.Tool.Description
		if len(desc) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(desc[cut]) {
				cut--
			}
			desc = desc[:cut] + "…"
		}
		fmt.Fprintf(&b, "- %s: %s\n", r.Tool.Name, strings.Join(strings.Fields(desc), " "))
	}
	return Text(b.String()), nil
}

// foundByModel marks the tools a SearchingModel found.
func (a *Agent) foundByModel(blocks []Block) {
	for _, b := range blocks {
		if b.Type != BlockToolSearchResult {
			continue
		}
		if a.search.found == nil {
			a.search.found = map[string]bool{}
		}
		for _, n := range b.ToolNames {
			a.search.found[n] = true
		}
	}
}

// fingerprint tells tool lists apart, for the index's sake.
func fingerprint(tools []mcp.Tool) uint64 {
	h := fnv.New64a()
	for _, t := range tools {
		h.Write([]byte(t.Name))
		h.Write([]byte{0})
		h.Write([]byte(t.Description))
		h.Write(t.InputSchema)
	}
	return h.Sum64()
}
