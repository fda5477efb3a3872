package mcp

import (
	"os"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ServerInstructions are what a server says about how to use its tools
// (the instructions of its initialize or server/discover result). The
// server wrote them: a model is to read them as data from that server,
// apart from the program's own prompt (see package agent).
type ServerInstructions struct {
	Server string // the server's name in the Manager (its config name)
	// Text is the instructions, cut at the Manager's bound (see
	// ManagerOptions.MaxInstructions) and then ending with "… [truncated]".
	Text string
	// Length is how many characters (Unicode code points) the server
	// sent; more than Text holds when it was cut.
	Length int
}

// DefaultMaxInstructions is Claude Code's bound on a server's
// instructions, in characters: the default of its
// CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH, which bounds tool descriptions
// too.
const DefaultMaxInstructions = 4096

// truncatedMark ends a server's text cut at its bound, as Claude Code
// ends it.
const truncatedMark = "… [truncated]"

// Instructions returns the instructions of every connected server that
// gave some, sorted by server name. A server being reconnected has none
// until it is connected again, with the instructions of its new
// connection (as Claude Code retracts a disconnected server's); a server
// that failed, or the Manager once closed, none. It starts nothing.
func (m *Manager) Instructions() []ServerInstructions {
	m.mu.Lock()
	servers := m.sorted()
	m.mu.Unlock()
	limit := m.maxInstructions()
	var out []ServerInstructions
	for _, s := range servers {
		s.mu.Lock()
		conn, state := s.conn, s.state
		s.mu.Unlock()
		if state != StateConnected || conn == nil || conn.Err() != nil {
			continue
		}
		text := conn.InitializeResult().Instructions
		if text == "" {
			continue
		}
		cut, n := cutChars(text, limit)
		out = append(out, ServerInstructions{Server: s.name, Text: cut, Length: n})
	}
	return slices.Clip(out)
}

// maxInstructions is ManagerOptions.MaxInstructions, else
// $CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH, else DefaultMaxInstructions.
func (m *Manager) maxInstructions() int {
	if m.opts.MaxInstructions > 0 {
		return m.opts.MaxInstructions
	}
	return DescriptionLimit()
}

// DescriptionLimit is Claude Code's bound on a server's instructions and
// on a tool's description, in characters: $CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH
// when it is a positive number, else DefaultMaxInstructions.
func DescriptionLimit() int {
	if n, err := strconv.Atoi(os.Getenv("CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH")); err == nil && n > 0 {
		return n
	}
	return DefaultMaxInstructions
}

// cutChars returns s cut after limit characters with truncatedMark, or s
// itself, and how many characters s has.
func cutChars(s string, limit int) (string, int) {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s, n
	}
	end, i := 0, 0
	for end = range s {
		if i == limit {
			break
		}
		i++
	}
	return s[:end] + truncatedMark, n
}
