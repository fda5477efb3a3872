package mcptest

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcplug/mcplug/mcp"
)

// Fault is a way for the server to fail one request, made by Hang,
// Disconnect, ErrorReply or Garbage and injected with Server.InjectFault.
type Fault struct {
	kind    faultKind
	code    int
	message string
}

type faultKind int

const (
	faultHang faultKind = iota
	faultDisconnect
	faultError
	faultGarbage
	faultExit
)

// Hang leaves the request unanswered; the client waits for as long as its
// ctx allows.
func Hang() Fault { return Fault{kind: faultHang} }

// Disconnect drops the client: the stream closes (stdio: the server's
// stdout), or the HTTP connection is cut without an answer.
func Disconnect() Fault { return Fault{kind: faultDisconnect} }

// ErrorReply answers the request with a JSON-RPC error.
func ErrorReply(code int, message string) Fault {
	return Fault{kind: faultError, code: code, message: message}
}

// Garbage answers the request with text that is not JSON-RPC (it is
// written as given, with a newline added), and then nothing.
func Garbage(text string) Fault { return Fault{kind: faultGarbage, message: text} }

// Exit makes the server's process exit with status code (0 to 255) when
// the request comes, unanswered, as a server that crashes does: the client
// sees the process end (an *mcp.ExitError with that code and the line
// "mcptest: exiting with status N" in its stderr tail). It is for a
// server that Main runs as a child process (Command). A server in memory
// or over HTTP runs inside the test binary, which must go on: it answers
// the request with a JSON-RPC error (CodeInternalError) that says so, and
// goes on serving. Exit panics for a code outside 0 to 255.
func Exit(code int) Fault {
	if code < 0 || code > 255 {
		panic(fmt.Sprintf("mcptest: Exit(%d): an exit status is 0 to 255", code))
	}
	return Fault{kind: faultExit, code: code}
}

// InjectFault makes the next request of the given method fail with f,
// whatever serves that method. Faults injected for one method are used
// once each, in the order they were injected.
func (srv *Server) InjectFault(method string, f Fault) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.faults == nil {
		srv.faults = map[string][]Fault{}
	}
	srv.faults[method] = append(srv.faults[method], f)
}

// takeFault removes and returns the next fault injected for method.
func (srv *Server) takeFault(method string) (Fault, bool) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	q := srv.faults[method]
	if len(q) == 0 {
		return Fault{}, false
	}
	srv.faults[method] = q[1:]
	return q[0], true
}

func (f Fault) apply(s *Session, m *Message) {
	switch f.kind {
	case faultHang:
	case faultDisconnect:
		s.Close()
	case faultError:
		s.ReplyError(json.RawMessage(m.ID), f.code, f.message)
	case faultGarbage:
		s.WriteRaw(f.message + "\n")
	case faultExit:
		if !s.process {
			s.ReplyError(json.RawMessage(m.ID), mcp.CodeInternalError, fmt.Sprintf(
				"mcptest: the Exit(%d) fault injected for %s is refused: this server runs inside the test binary (in memory or over HTTP), "+
					"which must not exit; run it as a child process (mcptest.Main and mcptest.Command) to see it exit", f.code, m.Method))
			return
		}
		fmt.Fprintf(os.Stderr, "mcptest: exiting with status %d (the Exit fault injected for %s)\n", f.code, m.Method)
		os.Exit(f.code)
	}
}
