package mcptest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// maxHTTPBody bounds the body of a POST the server reads.
const maxHTTPBody = 16 << 20

// ServeHTTP serves the server over Streamable HTTP, for httptest.NewServer:
// each POST carries one message. A request's answer is a JSON body when the
// answer is the first thing the server sends, or else an SSE stream that
// carries the server's notifications and requests (a legacy request's
// Sample, Elicit, Roots and Progress) before the answer. A legacy
// initialize gets an Mcp-Session-Id; the server does not require it. GET
// (a standalone stream) is not offered (405); DELETE is accepted.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHTTPBody+1))
	if err != nil || len(body) > maxHTTPBody {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "the body is not one JSON-RPC message", http.StatusBadRequest)
		return
	}
	hw := &httpWriter{w: w, id: m.ID, done: make(chan struct{}), dropped: make(chan struct{})}
	if m.Method == "initialize" {
		srv.mu.Lock()
		srv.lastID++
		hw.sessionID = "mcptest-" + strconv.FormatInt(srv.lastID, 10)
		srv.mu.Unlock()
	}
	if !m.IsRequest() {
		hw.finished = true // nothing is sent back but 202
	}
	s := srv.newSession(r.Context(), hw)
	s.key = "http:" + r.Header.Get("Mcp-Session-Id")
	s.abort = hw.drop
	srv.handle(s, &m)
	if !m.IsRequest() {
		s.end()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case <-hw.done:
	case <-hw.dropped:
	case <-r.Context().Done():
	}
	hw.finish()
	s.end()
	select {
	case <-hw.dropped:
		panic(http.ErrAbortHandler) // net/http cuts the connection, quietly
	default:
	}
}

// httpWriter is where a Session of one POST writes: the first line decides
// between a JSON body (the answer, or text that is not a message) and an
// SSE stream; the answer to the POST's request ends it.
type httpWriter struct {
	w         http.ResponseWriter
	id        json.RawMessage
	sessionID string

	mu       sync.Mutex
	sse      bool
	finished bool
	done     chan struct{} // closed once the answer is written
	dropped  chan struct{} // closed by Session.Close
	dropOnce sync.Once
}

func (hw *httpWriter) Write(p []byte) (int, error) {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if hw.finished {
		return 0, io.ErrClosedPipe
	}
	line := bytes.TrimSpace(p)
	var m Message
	isMessage := json.Unmarshal(line, &m) == nil
	answer := isMessage && m.Method == "" && bytes.Equal(m.ID, hw.id)
	if !hw.sse {
		if answer || !isMessage {
			hw.w.Header().Set("Content-Type", "application/json")
			if hw.sessionID != "" {
				hw.w.Header().Set("Mcp-Session-Id", hw.sessionID)
			}
			hw.w.WriteHeader(http.StatusOK)
			hw.w.Write(p)
			hw.end()
			return len(p), nil
		}
		hw.sse = true
		hw.w.Header().Set("Content-Type", "text/event-stream")
		hw.w.Header().Set("Cache-Control", "no-cache")
		if hw.sessionID != "" {
			hw.w.Header().Set("Mcp-Session-Id", hw.sessionID)
		}
		hw.w.WriteHeader(http.StatusOK)
	}
	hw.w.Write([]byte("data: "))
	hw.w.Write(line)
	hw.w.Write([]byte("\n\n"))
	http.NewResponseController(hw.w).Flush()
	if answer {
		hw.end()
	}
	return len(p), nil
}

// end marks the answer written; hw.mu is held.
func (hw *httpWriter) end() {
	hw.finished = true
	close(hw.done)
}

// finish stops writes before ServeHTTP returns: the ResponseWriter is not
// to be used after that.
func (hw *httpWriter) finish() {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	hw.finished = true
}

// drop makes ServeHTTP cut the connection.
func (hw *httpWriter) drop() error {
	hw.dropOnce.Do(func() { close(hw.dropped) })
	return nil
}

var _ http.Handler = (*Server)(nil)
