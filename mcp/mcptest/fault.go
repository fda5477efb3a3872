package mcptest

import "encoding/json"

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
	}
}
