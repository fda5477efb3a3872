// Package jsonrpc is the client's JSON-RPC engine below package mcp:
// messages encoded by hand into one line (AppendRequest, AppendResponse),
// the calls waiting for their responses, matched by id (Pending), and the
// Reader, which reads every message of a stream once, whoever reads it (a
// call may read its own response): responses go to their calls, the
// server's requests and notifications to the connection, in the order
// read. The stream below is any github.com/sourcegraph/jsonrpc2
// ObjectStream; no jsonrpc2.Conn takes part.
package jsonrpc
