package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripted is an mcptest server over Streamable HTTP whose tools/call
// (and, when set, GET and notifications) the test answers at the HTTP
// level: status codes, redirects, bodies no server should send. A call
// with no call set gets "ok".
type scripted struct {
	call        func(w http.ResponseWriter, r *http.Request, m rpcMsg)
	get         func(w http.ResponseWriter, r *http.Request)
	initialized func()                                                 // runs while the server handles notifications/initialized
	notify      func(w http.ResponseWriter, r *http.Request, m rpcMsg) // other notifications

	srv mcptest.Server
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		if s.get == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		s.get(w, r)
		return
	}
	if r.Method != http.MethodPost {
		s.srv.ServeHTTP(w, r)
		return
	}
	var m rpcMsg
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &m)
	switch {
	case m.Method == "notifications/initialized" && s.initialized != nil:
		s.initialized()
	case m.ID == nil && m.Method != "notifications/initialized" && s.notify != nil:
		s.notify(w, r, m)
		return
	case m.Method == "tools/call" && s.call != nil:
		s.call(w, r, m)
		return
	case m.Method == "tools/call":
		writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.srv.ServeHTTP(w, r)
}

func scriptedServer(t *testing.T, s *scripted) *httptest.Server {
	s.srv.Name = "scripted"
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// counting is a server that only counts the requests it gets.
func counting(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		writeJSON(w, map[string]any{})
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestHTTPRedirects(t *testing.T) {
	t.Run("a redirect to another origin is refused and carries nothing there", func(t *testing.T) {
		noLeaks(t)
		other, hits := counting(t)
		srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		}})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Headers: http.Header{"Authorization": {"Bearer secret"}}}, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", map[string]any{"password": "hunter2"})
		var re *mcp.RedirectError
		require.ErrorAs(t, err, &re)
		assert.Zero(t, hits.Load(), "the other origin got a request")
		assert.NoError(t, c.Err(), "the connection goes on")
	})
	t.Run("a redirect to the same host on another port is another origin", func(t *testing.T) {
		noLeaks(t)
		other, hits := counting(t)
		srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1), http.StatusTemporaryRedirect)
		}})
		srv2 := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv2, Headers: http.Header{"Authorization": {"Bearer secret"}}}, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		var re *mcp.RedirectError
		require.ErrorAs(t, err, &re)
		assert.Zero(t, hits.Load())
	})
	t.Run("a redirect within the origin is followed", func(t *testing.T) {
		noLeaks(t)
		var redirected atomic.Int64
		s := &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			if r.URL.Path != "/moved" {
				redirected.Add(1)
				http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
				return
			}
			writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "moved " + r.Header.Get("X-Key")}}}))
		}}
		srv := scriptedServer(t, s)
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Headers: http.Header{"X-Key": {"k"}}}, nil)
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "moved k", res.Text())
		// The handshake was not redirected, so the first call went
		// straight to the transport, met the redirect, and was sent again
		// through the client, which followed it; from then on every
		// request goes through the client: one redirect each.
		assert.LessOrEqual(t, redirected.Load(), int64(2), "the first redirected call")
		before := redirected.Load()
		res, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "moved k", res.Text())
		assert.Equal(t, int64(1), redirected.Load()-before, "a call after the first redirect")
	})
	t.Run("an SSE endpoint on the origin that redirects away is refused", func(t *testing.T) {
		noLeaks(t)
		other, hits := counting(t)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "event: endpoint\ndata: /messages\n\n")
			<-r.Context().Done()
		})
		mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.SSETransport{URL: srv.URL + "/sse", Headers: http.Header{"Authorization": {"Bearer secret"}}}, &mcp.Options{Logger: quiet})
		var re *mcp.RedirectError
		require.ErrorAs(t, err, &re)
		assert.Zero(t, hits.Load())
	})
}

func TestHTTPBadAnswersFailOnlyTheirCall(t *testing.T) {
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, m rpcMsg)
	}{
		{"an empty JSON body", func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
		}},
		{"a body that is not JSON", func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "<html>oops</html>")
		}},
		{"a body that is JSON inside but broken", func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[tru]}}`)
		}},
		{"a body shorter than its declared length", func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID))
		}},
		{"a declared length far past what is sent", func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(60<<20))
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID))
		}},
		{"a response with another id", func(w http.ResponseWriter, m rpcMsg) {
			writeJSON(w, result(json.RawMessage(`424242`), map[string]any{}))
		}},
		{"a response with a null id", func(w http.ResponseWriter, m rpcMsg) {
			writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": "no"}})
		}},
		{"SSE data that is not JSON and no response", func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, "data: not json\n\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			var calls atomic.Int32
			srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
				if calls.Add(1) == 1 {
					tt.reply(w, m)
					return
				}
				writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "fine"}}}))
			}})
			c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
			_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
			require.Error(t, err)
			assert.NotErrorIs(t, err, errors.ErrUnsupported)
			assert.NotContains(t, err.Error(), "deadline", "the call failed at once, not at its deadline")
			assert.NoError(t, c.Err(), "the connection goes on")
			res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
			require.NoError(t, err)
			assert.Equal(t, "fine", res.Text())
		})
	}
	t.Run("SSE data that is not JSON before the response is skipped", func(t *testing.T) {
		noLeaks(t)
		srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			w.Header().Set("Content-Type", "text/event-stream")
			b, _ := json.Marshal(result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "after noise"}}}))
			sseWrite(w, "data: {broken\n\ndata: %s\n\n", b)
		}})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
		res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "after noise", res.Text())
	})
}

func TestHTTPTypedErrors(t *testing.T) {
	t.Run("a 401 is an *HTTPStatusError with its WWW-Authenticate", func(t *testing.T) {
		noLeaks(t)
		srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
		}})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		var se *mcp.HTTPStatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, http.StatusUnauthorized, se.StatusCode)
		assert.Contains(t, se.Header.Get("WWW-Authenticate"), "resource_metadata=")
	})
	t.Run("a JSON answer over the maximum is a *MessageTooLargeError", func(t *testing.T) {
		noLeaks(t)
		srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 8<<10)}}}))
		}})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, MaxMessageSize: 4 << 10}, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		var tl *mcp.MessageTooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, 4<<10, tl.Max)
		assert.NoError(t, c.Err())
	})
	t.Run("a server cannot pass its own error off as a transport error", func(t *testing.T) {
		noLeaks(t)
		srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": "fake", "data": map[string]any{"mcplug/transport": true, "mcplug/ref": "1"}}})
		}})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
		var rpcErr *mcp.Error
		require.ErrorAs(t, err, &rpcErr)
		assert.Equal(t, "fake", rpcErr.Message)
	})
}

func TestHTTPAbandonedCallEndsItsRequest(t *testing.T) {
	noLeaks(t)
	ended := make(chan struct{})
	srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		<-r.Context().Done() // the server works until the client goes
		close(ended)
	}})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
	_, err := c.CallTool(ctxTimeout(t, 100*time.Millisecond), "slow", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the timed-out call's request is still open")
	}
	assert.NoError(t, c.Err())
}

func TestHTTPRetryHasAFloor(t *testing.T) {
	parallel(t)
	noLeaks(t)
	var mu sync.Mutex
	var gets []time.Time
	enough := make(chan struct{})
	srv := scriptedServer(t, &scripted{get: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets = append(gets, time.Now())
		if len(gets) == 4 {
			close(enough)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "retry: 1\n\n") // and the stream ends at once
	}})
	httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, nil)
	select {
	case <-enough:
	case <-time.After(20 * time.Second):
		t.Fatal("the GET stream was not reopened")
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < 4; i++ {
		assert.GreaterOrEqual(t, gets[i].Sub(gets[i-1]), 200*time.Millisecond, "reopened %d after %v", i, gets[i].Sub(gets[i-1]))
	}
	assert.Greater(t, gets[3].Sub(gets[2]), gets[1].Sub(gets[0]), "a stream that serves nothing is reopened less and less often")
}

func TestHTTPGetStreamOpenBeforeInitialized(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var stream chan string
	s := &scripted{
		get: func(w http.ResponseWriter, r *http.Request) {
			ch := make(chan string, 4)
			mu.Lock()
			stream = ch
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			sseWrite(w, ": open\n\n")
			for {
				select {
				case msg := <-ch:
					sseWrite(w, "data: %s\n\n", msg)
				case <-r.Context().Done():
					return
				}
			}
		},
		initialized: func() {
			mu.Lock()
			defer mu.Unlock()
			if stream != nil { // a server sends on the stream it has, or not at all
				stream <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
			}
		},
	}
	srv := scriptedServer(t, s)
	changed := make(chan struct{}, 1)
	httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL}, &mcp.Options{ToolListChanged: func(*mcp.Connection) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("a message the server sent while handling notifications/initialized was lost")
	}
}

func TestLegacySSEKeepsWriteOrder(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var order []string
	l := &legacyServer{endpoint: "/messages", onPost: func(m rpcMsg) {
		if m.Method == "notifications/initialized" {
			time.Sleep(50 * time.Millisecond) // a slow server: what is sent meanwhile must wait
		}
		mu.Lock()
		order = append(order, m.Method)
		mu.Unlock()
	}}
	srv := l.start(t)
	c := httpConnect(t, &mcp.SSETransport{URL: srv.URL + "/sse"}, nil)
	_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"server/discover", "ping", "initialize", "notifications/initialized", "tools/call"}, order)
}

func TestHTTPServerThatStopsTakingMessagesFailsTheConnection(t *testing.T) {
	noLeaks(t)
	defer mcp.SetHTTPMaxQueue(4 << 10)()
	stuck := make(chan struct{})
	defer close(stuck)
	srv := scriptedServer(t, &scripted{})
	wrap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"method":"notifications/message-flood"`) {
				select { // a server that takes no more
				case <-stuck:
				case <-r.Context().Done():
				}
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(wrap.Close)
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: wrap.URL, NotifyTimeout: time.Minute}, &mcp.Options{ProtocolVersion: mcp.LatestLegacyVersion})
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = c.Notify(ctxTimeout(t, 5*time.Second), "notifications/message-flood", map[string]any{"n": i, "pad": strings.Repeat("x", 100)})
	}
	require.Error(t, err, "the queue of messages waiting to be POSTed is bounded")
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not end")
	}
	assert.Contains(t, c.Err().Error(), "stopped reading")
}
