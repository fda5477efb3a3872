package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/mcplug/mcplug/mcp"
)

// Session is one client connection to a Server: a stream served by Serve,
// or one HTTP request served by ServeHTTP. Its methods may be called from
// any goroutine; writes after the session ended fail.
type Session struct {
	srv *Server
	mu  sync.Mutex
	w   io.Writer

	ctx    context.Context // ends with the session
	cancel context.CancelFunc
	key    string         // names the session in cancellation keys
	abort  func() error   // Close; nil means close w when it is an io.Closer
	wg     sync.WaitGroup // handlers of requests still running
	// process reports that the session is the stdio of a child process
	// that Main runs, which an Exit fault may end.
	process bool
}

// errSessionEnded is the cause of a session context that ended.
var errSessionEnded = errors.New("mcptest: the session ended")

func (srv *Server) newSession(ctx context.Context, w io.Writer) *Session {
	ctx, cancel := context.WithCancel(ctx)
	srv.mu.Lock()
	srv.lastID++
	key := "session-" + strconv.FormatInt(srv.lastID, 10)
	srv.mu.Unlock()
	return &Session{srv: srv, w: w, ctx: ctx, cancel: cancel, key: key}
}

// end cancels the requests of the session still running and waits for
// their handlers.
func (s *Session) end() {
	s.cancel()
	s.wg.Wait()
}

// Context ends when the session does: a handler that answers later, from
// a goroutine of its own, ends that goroutine with it.
func (s *Session) Context() context.Context { return s.ctx }

// track and untrack keep the stream sessions that notifications reach.
func (srv *Server) track(s *Session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.sessions == nil {
		srv.sessions = map[*Session]struct{}{}
	}
	srv.sessions[s] = struct{}{}
}

func (srv *Server) untrack(s *Session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	delete(srv.sessions, s)
}

// Notify sends a notification to every client connected over a stream (in
// memory or stdio). HTTP clients have no stream open to the server, and
// get none.
func (srv *Server) Notify(method string, params any) {
	srv.mu.Lock()
	sessions := make([]*Session, 0, len(srv.sessions))
	for s := range srv.sessions {
		sessions = append(sessions, s)
	}
	srv.mu.Unlock()
	for _, s := range sessions {
		s.Notify(method, params)
	}
}

// Send writes v as one line.
func (s *Session) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.WriteRaw(string(b) + "\n")
}

// WriteRaw writes text to the client as is.
func (s *Session) WriteRaw(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := io.WriteString(s.w, text)
	return err
}

// Close ends the session as a server that goes away would: the stream
// closes, or the HTTP connection is dropped without an answer.
func (s *Session) Close() error {
	if s.abort != nil {
		return s.abort()
	}
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Reply sends a result for id.
func (s *Session) Reply(id json.RawMessage, result any) error {
	return s.Send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// ReplyError sends an error for id.
func (s *Session) ReplyError(id json.RawMessage, code int, message string) error {
	return s.Send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
}

// Notify sends a notification.
func (s *Session) Notify(method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return s.Send(m)
}

// Request sends a request with the given id and does not wait for its
// answer (see Call).
func (s *Session) Request(id any, method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return s.Send(m)
}

// Call sends a request to the client and waits for its answer, which it
// decodes into result (unless result is nil). An error answer is returned
// as an error that wraps an *mcp.Error; Call also fails when ctx or the
// session ends first.
func (s *Session) Call(ctx context.Context, method string, params, result any) error {
	srv := s.srv
	ch := make(chan *Message, 1)
	srv.mu.Lock()
	srv.lastID++
	id := json.RawMessage(strconv.Quote("mcptest-" + strconv.FormatInt(srv.lastID, 10)))
	if srv.pending == nil {
		srv.pending = map[string]chan *Message{}
	}
	srv.pending[string(id)] = ch
	srv.mu.Unlock()
	defer func() {
		srv.mu.Lock()
		delete(srv.pending, string(id))
		srv.mu.Unlock()
	}()
	if err := s.Request(id, method, params); err != nil {
		return fmt.Errorf("mcptest: send %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if len(m.Error) > 0 {
			var e struct {
				Code    int64           `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			}
			json.Unmarshal(m.Error, &e)
			return fmt.Errorf("mcptest: the client answered %s with an error: %w", method, &mcp.Error{Code: e.Code, Message: e.Message, Data: e.Data})
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("mcptest: the client's answer to %s: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.ctx.Done():
		return errSessionEnded
	}
}

// deliver hands an answer to the Call waiting for it; an answer nobody
// waits for is dropped.
func (srv *Server) deliver(m *Message) {
	srv.mu.Lock()
	ch := srv.pending[string(m.ID)]
	delete(srv.pending, string(m.ID))
	srv.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// inflightKey names a running request: its session and its id.
type inflightKey struct{ session, id string }

// errCancelled is the cause of a request the client cancelled.
var errCancelled = errors.New("mcptest: the client cancelled the request")

// cancel serves notifications/cancelled: the handler's ctx ends, and no
// answer is sent.
func (srv *Server) cancel(s *Session, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	json.Unmarshal(params, &p)
	srv.mu.Lock()
	cancel := srv.inflight[inflightKey{s.key, string(p.RequestID)}]
	srv.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
}
