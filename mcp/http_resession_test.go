package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionServer is a 2025-11-25 server over Streamable HTTP that keeps
// sessions as real servers do: a session serves requests only once its
// notifications/initialized has arrived, an unknown session is 404, and
// forget drops them all (a restart).
type sessionServer struct {
	mu           sync.Mutex
	next         int
	sessions     map[string]bool          // ready
	gets         map[string]chan struct{} // closed when the session is forgotten
	holdInit     bool                     // answer a repeated initialize on SSE and hold the stream open
	holdDiscover bool                     // answer server/discover with an SSE stream that stays open
	refused      []string                 // requests of a session not ready: session and method
	deleted      []string
	getLog       []getSeen
	newGet       chan getSeen
	done         chan struct{}
}

type getSeen struct{ session, lastEventID string }

func newSessionServer(t *testing.T) (*sessionServer, string) {
	f := &sessionServer{sessions: map[string]bool{}, gets: map[string]chan struct{}{}, newGet: make(chan getSeen, 64), done: make(chan struct{})}
	srv := httptest.NewServer(f)
	t.Cleanup(func() { close(f.done); srv.Close() })
	return f, srv.URL + "/mcp"
}

func (f *sessionServer) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.sessions {
		delete(f.sessions, id)
		close(f.gets[id])
		delete(f.gets, id)
	}
}

func (f *sessionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	session := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	ready, known := f.sessions[session]
	f.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		f.mu.Lock()
		f.deleted = append(f.deleted, session)
		f.mu.Unlock()
		return
	case http.MethodGet:
		if !known {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		seen := getSeen{session, r.Header.Get("Last-Event-ID")}
		f.mu.Lock()
		f.getLog = append(f.getLog, seen)
		gone := f.gets[session]
		f.mu.Unlock()
		f.newGet <- seen
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: %s-ev1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n", session)
		w.(http.Flusher).Flush()
		select {
		case <-gone:
		case <-r.Context().Done():
		case <-f.done:
		}
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &m)
	answer := func(result any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
	switch {
	case m.Method == "initialize":
		f.mu.Lock()
		f.next++
		id := fmt.Sprintf("s%d", f.next)
		f.sessions[id] = false
		f.gets[id] = make(chan struct{})
		hold := f.holdInit && f.next > 1
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
		result := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "sessions", "version": "1"}}
		if !hold {
			answer(result)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
		select { // and the stream stays open
		case <-r.Context().Done():
		case <-f.done:
		}
	case session == "" && m.Method == "server/discover" && f.holdDiscover:
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-f.done:
		}
	case session == "" && m.ID != nil: // the era probe's server/discover
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no"}})
	case session != "" && !known:
		w.WriteHeader(http.StatusNotFound)
	case m.Method == "notifications/initialized":
		f.mu.Lock()
		f.sessions[session] = true
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case !ready:
		f.mu.Lock()
		f.refused = append(f.refused, session+" "+m.Method)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32600, "message": "method " + m.Method + " is invalid during session initialization"}})
	case m.Method == "tools/list":
		answer(map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
	case m.Method == "tools/call":
		answer(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
	case m.Method == "ping":
		answer(map[string]any{})
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no"}})
	}
}

func TestANewSessionAfterTheOldIsGone(t *testing.T) {
	parallel(t)
	t.Run("a server that holds the new initialize's stream open holds no call", func(t *testing.T) {
		noLeaks(t)
		f, url := newSessionServer(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: url}, nil)
		_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", nil)
		require.NoError(t, err)
		f.mu.Lock()
		f.holdInit = true
		f.mu.Unlock()
		f.forget()
		start := time.Now()
		res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", nil)
		require.NoError(t, err, "the call goes on in the new session")
		assert.Equal(t, "ok", res.Text())
		t.Logf("the re-session took %v against a server that holds its stream", time.Since(start))
		c.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		assert.Empty(t, f.refused, "no request reached a session before its initialized")
		assert.Contains(t, f.deleted, "s1", "the old session is deleted")
		assert.True(t, f.sessions["s2"], "the new session got notifications/initialized")
	})
	t.Run("calls meanwhile wait until the new session is ready", func(t *testing.T) {
		noLeaks(t)
		f, url := newSessionServer(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: url}, nil)
		_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", nil)
		require.NoError(t, err)
		f.forget()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() {
				_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", nil)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		assert.Empty(t, f.refused, "no request reached a session before its initialized")
		assert.Equal(t, 2, f.next, "one new session for all of them")
	})
	t.Run("the new session's GET stream starts afresh", func(t *testing.T) {
		noLeaks(t)
		f, url := newSessionServer(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: url}, nil)
		first := <-f.newGet
		require.Equal(t, getSeen{"s1", ""}, first)
		f.forget() // the GET of s1 ends after its event s1-ev1
		_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", nil)
		require.NoError(t, err)
		ctx := ctxTimeout(t, 20*time.Second)
		for {
			select {
			case g := <-f.newGet:
				if g.session != "s2" {
					continue
				}
				assert.Empty(t, g.lastEventID, "the old session's event id means nothing in the new one")
				return
			case <-ctx.Done():
				t.Fatal("no GET stream in the new session")
			}
		}
	})
}

// A legacy server may answer a method it does not know by holding an SSE
// stream open: the HTTP era probe has a bound of its own.
func TestTheHTTPEraProbeHasABoundOfItsOwn(t *testing.T) {
	noLeaks(t)
	defer mcp.SetHTTPProbeTimeout(200 * time.Millisecond)()
	f, url := newSessionServer(t)
	f.holdDiscover = true
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: url}, nil)
	assert.Equal(t, "2025-11-25", c.InitializeResult().ProtocolVersion, "taken as the legacy server it is")
	_, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", nil)
	assert.NoError(t, err)
}
