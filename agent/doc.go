// Package agent is a thin agent loop: it alternates between a Model and
// tools until the model answers without calling a tool.
//
// Tools come from ToolProviders. *mcp.Manager and *mcp.Connection are
// ToolProviders without importing this package, and so is Funcs, a set of
// built-in Go functions: to the loop, an MCP tool and a built-in tool are
// the same thing, a name, a schema and a function. A name claimed by two
// providers is an error, never a shadow.
//
// The loop never crashes on a tool: a tool that fails, a call that errors
// (timeout, server crash, unknown tool) becomes a tool result marked as an
// error that the model sees, and the turn goes on. Every tool call in the
// history gets its result. A provider that is also a CallChecker is
// asked before every call, any provider's tool, and may refuse it: the
// refusal is the call's error result (Skills refuses a tool that runs
// code on the host while the model acts on a skill of an MCP server,
// unless the user approved).
//
// A Model gets each turn as a Request it may keep (see Model for the
// contract), and its Response's StopReason steers the loop (see
// Agent.Chat). With ToolSearch on, deferred tools are named for the model
// in a section of the request (DeferredSectionTitle). Package
// agent/agenttest is a scripted Model for a program's tests.
//
// An Agent is not safe for concurrent use: it holds one conversation.
package agent
