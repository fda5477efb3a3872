package agent

import (
	"errors"
	"fmt"
)

// Stop reasons of a Response: why the model's reply ended, in the words
// of the Messages API (a Model of another API says the same things in
// these words). "" is taken as a reply that ended on its own: it ends
// the Chat unless it calls tools.
const (
	StopEndTurn   = "end_turn" // the model finished its turn
	StopToolUse   = "tool_use" // the model calls tools, whose results it waits for
	StopSequence  = "stop_sequence"
	StopMaxTokens = "max_tokens" // the reply was cut off at the model's output limit
	// StopContextWindow: the reply was cut off at the end of the model's
	// context window.
	StopContextWindow = "model_context_window_exceeded"
	// StopPauseTurn: the model's API paused a long turn (its own tools,
	// such as its tool search, were still working); the reply is sent
	// back as it is for the turn to go on.
	StopPauseTurn = "pause_turn"
	StopRefusal   = "refusal" // the model declined to answer
)

// Errors of Chat for a reply that ended otherwise than on its own; each
// is matched with errors.Is, and Chat returns them with the text the
// model gave.
var (
	// ErrTruncated: the model's reply was cut off (StopMaxTokens,
	// StopContextWindow). Its tool calls are not run: the last one may
	// have been cut in the middle of its arguments. Each gets an error
	// result in the history saying so.
	ErrTruncated = errors.New("agent: the model's reply was cut off at its limit, and its tool calls were not run (raise the model's output limit, or ask for less at once)")
	// ErrRefused: the model declined to answer (StopRefusal); a tool call
	// in the reply is not run.
	ErrRefused = errors.New("agent: the model declined to answer")
)

// stopError is the error that ends a Chat for resp's StopReason, or nil
// when the reply ended on its own, calls tools, or paused.
func stopError(reason string) error {
	switch reason {
	case StopMaxTokens, StopContextWindow:
		return fmt.Errorf("%w (stop reason %s)", ErrTruncated, reason)
	case StopRefusal:
		return ErrRefused
	}
	return nil
}

// notRun are the results of a reply's tool calls that are not run, each
// an error result saying why (every tool call in the history gets a
// result).
func notRun(content []Block, why error) []Block {
	var results []Block
	for _, b := range content {
		if b.Type == BlockToolUse {
			results = append(results, Block{Type: BlockToolResult, ToolUseID: b.ID, IsError: true,
				Content: []Block{{Type: BlockText, Text: "Error: not run: " + why.Error()}}})
		}
	}
	return results
}
