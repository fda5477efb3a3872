package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpFake is a scriptable Streamable HTTP server.
type httpFake struct {
	t          *testing.T
	mu         sync.Mutex
	sessions   int
	session    string // the live session; requests with another get 404
	headers    []http.Header
	answers    chan json.RawMessage // the client's answers to server requests
	calls      map[string]int
	pending    json.RawMessage // id of a call whose stream was dropped
	noGet      bool
	deletes    atomic.Int32
	hangDel    bool
	hangNotify bool // never answer notifications/cancelled
	// goneBadRequest: an unknown session gets 400 and a JSON-RPC error,
	// as server-everything answers after a restart, not 404.
	goneBadRequest bool
}

// sessionGoneBadRequest answers as server-everything does a request of a
// session it does not know (after a restart).
func sessionGoneBadRequest(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
}

func newHTTPFake(t *testing.T) (*httpFake, *httptest.Server) {
	f := &httpFake{t: t, answers: make(chan json.RawMessage, 4), calls: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func result(id json.RawMessage, r any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": r}
}

func sseWrite(w http.ResponseWriter, format string, args ...any) {
	fmt.Fprintf(w, format, args...)
	w.(http.Flusher).Flush()
}

func (f *httpFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	session := f.session
	f.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		f.deletes.Add(1)
		if f.hangDel {
			<-r.Context().Done()
		}
		return
	case http.MethodGet:
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			f.mu.Lock()
			id := f.pending
			f.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			b, _ := json.Marshal(result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "resumed after " + last}}}))
			sseWrite(w, "id: e2\ndata: %s\n\n", b)
			return
		}
		if f.noGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, ": open\n\n")
		<-r.Context().Done()
		return
	}
	var m rpcMsg
	body, _ := io.ReadAll(r.Body)
	require.NoError(f.t, json.Unmarshal(body, &m))
	if m.Method == "" { // the client's answer to a server request
		f.answers <- body
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != session {
		if f.goneBadRequest {
			sessionGoneBadRequest(w)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if m.ID == nil {
		if m.Method == "notifications/cancelled" && f.hangNotify {
			<-r.Context().Done() // never answers
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "initialize":
		f.mu.Lock()
		f.sessions++
		f.session = fmt.Sprintf("session-%d", f.sessions)
		w.Header().Set("Mcp-Session-Id", f.session)
		f.mu.Unlock()
		writeJSON(w, result(m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "http-fake", "version": "1"}}))
	case "tools/list":
		writeJSON(w, result(m.ID, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}))
	case "tools/call":
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		f.mu.Lock()
		f.calls[p.Name]++
		n := f.calls[p.Name]
		f.mu.Unlock()
		text := map[string]any{"content": []any{map[string]any{"type": "text", "text": p.Name}}}
		switch p.Name {
		case "sse": // a notification, then the response, on an SSE stream
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
			b, _ := json.Marshal(result(m.ID, text))
			sseWrite(w, "id: 1\ndata: %s\n\n", b)
		case "ask": // a server request interleaved before the response
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n")
			answer := <-f.answers
			b, _ := json.Marshal(result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(answer)}}}))
			sseWrite(w, "data: %s\n\n", b)
		case "flaky":
			if n == 1 {
				http.Error(w, "try later", http.StatusServiceUnavailable)
				return
			}
			writeJSON(w, result(m.ID, text))
		case "expire":
			if n == 1 {
				f.mu.Lock()
				f.session = "" // the server forgets the session
				gone := f.goneBadRequest
				f.mu.Unlock()
				if gone {
					sessionGoneBadRequest(w)
					return
				}
				w.WriteHeader(http.StatusNotFound)
				return
			}
			writeJSON(w, result(m.ID, text))
		case "hang": // never answers
			<-r.Context().Done()
		case "cut": // the connection dies mid-answer, with no event id to resume from
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, ": starting\n\n")
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case "drop": // a priming event, then the connection closes
			f.mu.Lock()
			f.pending = m.ID
			f.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "id: e1\nretry: 20\ndata: \n\n")
		default:
			writeJSON(w, result(m.ID, text))
		}
	default:
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no"}})
	}
}

// requestHeaders returns the headers of every request so far, in order.
func (f *httpFake) requestHeaders() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.headers...)
}

func httpConnect(t *testing.T, tr mcp.Transport, opts *mcp.Options) *mcp.Connection {
	t.Helper()
	if opts == nil {
		opts = &mcp.Options{}
	}
	opts.Logger = quiet
	c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tr, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStreamableHTTP(t *testing.T) {
	parallel(t)
	t.Run("JSON and SSE answers, with the session and version headers", func(t *testing.T) {
		noLeaks(t)
		f, srv := newHTTPFake(t)
		var logs sync.Map
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Headers: http.Header{"X-Static": {"yes"}},
			HeaderFunc: func(context.Context) (http.Header, error) { return http.Header{"X-Dynamic": {"fresh"}}, nil }},
			&mcp.Options{LoggingMessage: func(_ *mcp.Connection, m *mcp.LoggingMessage) { logs.Store(string(m.Data), true) }})
		ctx := ctxTimeout(t, 5*time.Second)
		res, err := c.CallTool(ctx, "plain", nil)
		require.NoError(t, err)
		assert.Equal(t, "plain", res.Text())
		res, err = c.CallTool(ctx, "sse", nil)
		require.NoError(t, err)
		assert.Equal(t, "sse", res.Text())
		require.Eventually(t, func() bool { _, ok := logs.Load(`"working"`); return ok }, 5*time.Second, time.Millisecond,
			"the notification in the SSE answer reaches its handler")

		hs := f.requestHeaders()
		require.GreaterOrEqual(t, len(hs), 3)
		assert.Empty(t, hs[0].Get("Mcp-Session-Id"), "initialize has no session yet")
		assert.Equal(t, "application/json, text/event-stream", hs[0].Get("Accept"))
		last := hs[len(hs)-1]
		assert.Equal(t, "session-1", last.Get("Mcp-Session-Id"))
		assert.Equal(t, "2025-11-25", last.Get("MCP-Protocol-Version"))
		assert.Equal(t, "yes", last.Get("X-Static"))
		assert.Equal(t, "fresh", last.Get("X-Dynamic"))
	})
	t.Run("a server request inside an SSE answer reaches the handlers", func(t *testing.T) {
		noLeaks(t)
		_, srv := newHTTPFake(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "ask", nil)
		require.NoError(t, err)
		assert.JSONEq(t, `{"jsonrpc":"2.0","id":"srv-1","result":{}}`, res.Text(), "the ping was answered with a POST")
	})
	t.Run("a 503 fails one call, the next succeeds", func(t *testing.T) {
		noLeaks(t)
		_, srv := newHTTPFake(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		ctx := ctxTimeout(t, 5*time.Second)
		_, err := c.CallTool(ctx, "flaky", nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "503")
		res, err := c.CallTool(ctx, "flaky", nil)
		require.NoError(t, err)
		assert.Equal(t, "flaky", res.Text())
		assert.NoError(t, c.Err())
	})
	t.Run("a dropped connection fails only its call", func(t *testing.T) {
		noLeaks(t)
		_, srv := newHTTPFake(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		ctx := ctxTimeout(t, 5*time.Second)
		_, err := c.CallTool(ctx, "cut", nil)
		require.Error(t, err)
		assert.NotErrorIs(t, err, mcp.ErrClosed)
		res, err := c.CallTool(ctx, "after", nil)
		require.NoError(t, err, "the session goes on")
		assert.Equal(t, "after", res.Text())
	})
	for _, badRequest := range []bool{false, true} {
		name := "a 404 for an expired session starts one new session and retries once"
		if badRequest {
			name = "so does a 400 for an unknown session, as a restarted server answers"
		}
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			f, srv := newHTTPFake(t)
			f.goneBadRequest = badRequest
			c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
			res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "expire", nil)
			require.NoError(t, err)
			assert.Equal(t, "expire", res.Text())
			f.mu.Lock()
			defer f.mu.Unlock()
			assert.Equal(t, 2, f.sessions, "initialize was sent once more")
			assert.Equal(t, 2, f.calls["expire"], "the call was retried once")
		})
	}
	t.Run("a dropped stream is resumed with Last-Event-ID after the retry delay", func(t *testing.T) {
		noLeaks(t)
		_, srv := newHTTPFake(t)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		start := time.Now()
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "drop", nil)
		require.NoError(t, err)
		assert.Equal(t, "resumed after e1", res.Text())
		assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond, "the retry field is respected")
	})
	t.Run("Close sends DELETE and is bounded when the server never answers it", func(t *testing.T) {
		noLeaks(t)
		f, srv := newHTTPFake(t)
		f.hangDel = true
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.StreamableHTTPTransport{URL: srv.URL, CloseTimeout: 200 * time.Millisecond}, &mcp.Options{Logger: quiet})
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, c.Close())
		assert.Less(t, time.Since(start), time.Minute, "the DELETE is never answered: without the bound, Close waits for ever")
		assert.Equal(t, int32(1), f.deletes.Load())
	})
	t.Run("a notification the server never answers holds later messages only for NotifyTimeout", func(t *testing.T) {
		noLeaks(t)
		f, srv := newHTTPFake(t)
		f.hangNotify = true
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, NotifyTimeout: 200 * time.Millisecond, Logger: quiet}, nil)
		_, err := c.CallTool(ctxTimeout(t, 100*time.Millisecond), "hang", nil) // times out: notifications/cancelled hangs
		require.ErrorIs(t, err, context.DeadlineExceeded)
		start := time.Now()
		res, err := c.CallTool(ctxTimeout(t, time.Minute), "after", nil)
		require.NoError(t, err, "the notification is never answered: without the bound, the call waits for ever")
		assert.Equal(t, "after", res.Text())
		assert.Less(t, time.Since(start), time.Minute)
	})
	t.Run("a server without a GET stream answers 405 and that is fine", func(t *testing.T) {
		noLeaks(t)
		f, srv := newHTTPFake(t)
		f.noGet = true
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "echo", nil)
		require.NoError(t, err)
	})
	t.Run("a server that is not there fails Connect", func(t *testing.T) {
		noLeaks(t)
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.StreamableHTTPTransport{URL: srv.URL}, &mcp.Options{Logger: quiet})
		require.Error(t, err)
	})
}

// legacyFake is a server of the 2024-11-05 HTTP+SSE transport.
func legacyFake(t *testing.T, endpoint string) *httptest.Server {
	return (&legacyServer{endpoint: endpoint}).start(t)
}

// legacyServer is a scriptable server of the 2024-11-05 HTTP+SSE
// transport. Each GET /sse opens a session (numbered from 1) whose endpoint
// event is endpoint, with the session's number for a %d in it; a POST's
// answer goes to the stream of the session its ?s= names, else the latest.
type legacyServer struct {
	endpoint string
	onPost   func(m rpcMsg)                  // sees each POSTed message before it is answered
	answer   func(session int, m rpcMsg) any // nil: the default answers

	mu       sync.Mutex
	sessions int
	streams  map[int]chan []byte
	drops    map[int]chan struct{}
}

func (l *legacyServer) start(t *testing.T) *httptest.Server {
	l.streams, l.drops = map[int]chan []byte{}, map[int]chan struct{}{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		ch, gone := make(chan []byte, 16), make(chan struct{})
		l.mu.Lock()
		l.sessions++
		n := l.sessions
		l.streams[n], l.drops[n] = ch, gone
		l.mu.Unlock()
		endpoint := l.endpoint
		if strings.Contains(endpoint, "%d") {
			endpoint = fmt.Sprintf(endpoint, n)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "event: endpoint\ndata: %s\n\n", endpoint)
		for {
			select {
			case b := <-ch:
				sseWrite(w, "event: message\ndata: %s\n\n", b)
			case <-gone: // the server restarts: the stream ends
				return
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /sse", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed) // not Streamable HTTP
	})
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		var m rpcMsg
		json.NewDecoder(r.Body).Decode(&m)
		if l.onPost != nil {
			l.onPost(m)
		}
		w.WriteHeader(http.StatusAccepted)
		if m.ID == nil || m.Method == "" {
			return
		}
		l.mu.Lock()
		n := l.sessions
		l.mu.Unlock()
		fmt.Sscanf(r.URL.Query().Get("s"), "%d", &n)
		var res any
		if l.answer != nil {
			res = l.answer(n, m)
		} else {
			res = legacyAnswer(m)
		}
		b, _ := json.Marshal(result(m.ID, res))
		l.mu.Lock()
		l.streams[n] <- b
		l.mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// drop ends the stream of session n, as a server restart would.
func (l *legacyServer) drop(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.drops[n])
}

// legacyAnswer is the default answer of a legacyServer.
func legacyAnswer(m rpcMsg) any {
	switch m.Method {
	case "initialize":
		return map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "legacy", "version": "1"}}
	case "tools/list":
		return map[string]any{"tools": []any{map[string]any{"name": "old", "inputSchema": map[string]any{"type": "object"}}}}
	case "tools/call":
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "from the old transport"}}}
	}
	return map[string]any{}
}

func TestLegacySSE(t *testing.T) {
	t.Run("the legacy flow: endpoint event, POST there, answers on the stream", func(t *testing.T) {
		noLeaks(t)
		srv := legacyFake(t, "/messages?session=1")
		c := httpConnect(t, &mcp.SSETransport{URL: srv.URL + "/sse"}, nil)
		assert.Equal(t, "2024-11-05", c.InitializeResult().ProtocolVersion)
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "old", nil)
		require.NoError(t, err)
		assert.Equal(t, "from the old transport", res.Text())
	})
	t.Run("an endpoint on another origin is refused", func(t *testing.T) {
		noLeaks(t)
		srv := legacyFake(t, "http://evil.example/messages")
		_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.SSETransport{URL: srv.URL + "/sse"}, &mcp.Options{Logger: quiet})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "origin")
	})
	t.Run("Streamable HTTP falls back to SSE on a 405", func(t *testing.T) {
		noLeaks(t)
		srv := legacyFake(t, "/messages")
		tr := mcp.NewHTTPTransport(srv.URL+"/sse", nil)
		tr.Logger = quiet
		c := httpConnect(t, tr, nil)
		assert.Equal(t, "legacy", c.InitializeResult().ServerInfo.Name)
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "old", nil)
		require.NoError(t, err)
		assert.Equal(t, "from the old transport", res.Text())
	})
}

func TestManagerRemoteServers(t *testing.T) {
	noLeaks(t)
	f, modern := newHTTPFake(t)
	legacy := legacyFake(t, "/messages")
	t.Setenv("MCPLUG_TEST_TOKEN", "s3cret")
	cfg := configOf(t, map[string]any{
		"modern": map[string]any{"type": "http", "url": modern.URL, "headers": map[string]string{"Authorization": "Bearer ${MCPLUG_TEST_TOKEN}"}},
		"old":    map[string]any{"type": "sse", "url": legacy.URL + "/sse"},
	})
	m := newManager(t, cfg, nil)
	tools, err := m.Tools(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"mcp__modern__echo", "mcp__old__old"}, toolNames(tools))
	for _, s := range m.Status() {
		assert.Equal(t, mcp.StateConnected, s.State, s.Name)
	}
	res, err := m.CallTool(ctxTimeout(t, 5*time.Second), "mcp__old__old", nil)
	require.NoError(t, err)
	assert.Equal(t, "from the old transport", res.Text())
	assert.Equal(t, "Bearer s3cret", f.requestHeaders()[0].Get("Authorization"), "${VAR} expands in headers")
	require.NoError(t, m.Close())
}
