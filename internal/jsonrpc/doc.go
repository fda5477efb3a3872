// Package jsonrpc is the client's JSON-RPC engine below package mcp:
// requests encoded by hand into one line (AppendRequest), the calls waiting
// for their responses, matched by id (Pending), and the Reader that takes
// the responses out of a stream, letting a call read its own. The Connection matches
// responses to its own requests itself, before
// github.com/sourcegraph/jsonrpc2 sees the stream (which still serves the
// server's requests and notifications): jsonrpc2's Call decodes each
// result several times over (once into interface{}), allocates a map per
// request, and keeps a cancelled call until a response that a well-behaved
// server never sends.
package jsonrpc
