package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callName is the tool name of a tools/call.
func callName(m rpcMsg) string {
	var p struct{ Name string }
	json.Unmarshal(m.Params, &p)
	return p.Name
}

func okResult(w http.ResponseWriter, m rpcMsg) {
	writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}))
}

// Every wait of a call over Streamable HTTP ends with the call's ctx: a
// broken response stream and its resumption hold the call no longer than
// its ctx allows, and the connection serves the next call.
func TestHTTPCallWaitsEndWithItsCtx(t *testing.T) {
	parallel(t)
	tests := []struct {
		name  string
		retry string                                       // the retry: field before the stream breaks
		get   func(w http.ResponseWriter, r *http.Request) // the resumption's GET
	}{
		{"a stream broken with retry: 0", "retry: 0\n", nil},
		{"a stream broken with a retry of an hour", "retry: 3600000\n", nil},
		{"a resume GET that hangs", "retry: 1\n", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			getEnded := make(chan struct{}, 8)
			getStarted := make(chan struct{}, 8)
			srv := scriptedServer(t, &scripted{
				call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
					if callName(m) != "slow" {
						okResult(w, m)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, "id: ev-1\n%sdata: \n\n", tt.retry) // then the stream breaks, no response
				},
				get: func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Last-Event-ID") == "" {
						w.WriteHeader(http.StatusMethodNotAllowed) // no stream of its own
						return
					}
					defer func() { getEnded <- struct{}{} }()
					if tt.get != nil {
						getStarted <- struct{}{}
						tt.get(w, r)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, "id: ev-2\n%sdata: \n\n", tt.retry) // broken again
				},
			})
			c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
			// A ctx far shorter than a retry of an hour; one that ends while
			// the resumption's GET hangs, however long the GET took to come.
			ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
			defer cancel()
			if tt.get != nil {
				ctx, cancel = context.WithCancel(context.Background())
				defer cancel()
				go func() {
					select {
					case <-getStarted:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			errc := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, "slow", nil)
				errc <- err
			}()
			select { // a minute stands for never: the retry of an hour, the GET that hangs
			case err := <-errc:
				require.Error(t, err)
				require.ErrorIs(t, err, ctx.Err(), "the call ends with its ctx")
			case <-time.After(time.Minute):
				t.Fatal("the call outlived its ctx")
			}
			if tt.get != nil {
				select {
				case <-getEnded:
				case <-time.After(time.Minute):
					t.Fatal("the resumption's GET is still open at the server")
				}
			}
			res, err := c.CallTool(ctxTimeout(t, time.Minute), "next", nil)
			require.NoError(t, err, "the connection serves the next call")
			assert.Equal(t, "ok", res.Text())
		})
	}
}

// A server may finish setting up while it handles notifications/initialized
// (server-everything registers tools then): the first request goes out
// once that POST is answered.
func TestHTTPFirstRequestWaitsForInitialized(t *testing.T) {
	parallel(t)
	t.Run("until the notification's POST is answered", func(t *testing.T) {
		noLeaks(t)
		var during atomic.Bool
		handling := make(chan struct{})
		var once sync.Once
		arrived := make(chan struct{}, 1)
		srv := scriptedServer(t, &scripted{
			initialized: func() {
				once.Do(func() { close(handling) })
				select { // a slow set-up, cut short by a request that comes meanwhile
				case <-arrived:
					during.Store(true)
				case <-time.After(500 * time.Millisecond):
				}
			},
			call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
				select {
				case arrived <- struct{}{}:
				default:
				}
				okResult(w, m)
			},
		})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
		res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text())
		<-handling
		assert.False(t, during.Load(), "the call reached the server while it was still handling notifications/initialized")
	})
	t.Run("which the handshake sends before Connect returns", func(t *testing.T) {
		noLeaks(t)
		var handled atomic.Bool
		srv := scriptedServer(t, &scripted{initialized: func() { handled.Store(true) }})
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
		assert.True(t, handled.Load(), "Connect returned before the server had handled notifications/initialized")
		res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "x", nil)
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text())
	})
	t.Run("at most a short while for a server that never answers it", func(t *testing.T) {
		noLeaks(t)
		release := make(chan struct{})
		srv := scriptedServer(t, &scripted{initialized: func() { <-release }})
		defer close(release) // before the server closes: its handler ends
		start := time.Now()
		c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet, CloseTimeout: 100 * time.Millisecond}, nil)
		res, err := c.CallTool(ctxTimeout(t, time.Minute), "x", nil)
		require.NoError(t, err, "the call waited for a notification that is never answered")
		assert.Equal(t, "ok", res.Text())
		assert.Less(t, time.Since(start), time.Minute, "the connect and the call waited for a notification that is never answered")
		require.NoError(t, c.Close())
	})
}

// The stream of a call's answer may be kept open after the answer: the
// call returns at once, and the rest of the stream is read apart.
func TestHTTPAnswerOnAnOpenStreamIsNotDelayed(t *testing.T) {
	noLeaks(t)
	defer mcp.SetDrainTimeout(time.Hour)() // what follows the answer would hold the caller for an hour
	returned := make(chan struct{})
	var heldOpen atomic.Bool // the server had to end the stream itself
	srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "early"}}}))
		sseWrite(w, "data: %s\n\n", b)
		select { // the stream stays open until the client is done with it
		case <-returned:
		case <-r.Context().Done():
		case <-time.After(10 * time.Second): // what an hour's drain in the caller would come to
			heldOpen.Store(true)
		}
	}})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
	res, err := c.CallTool(ctxTimeout(t, 20*time.Second), "x", nil)
	close(returned)
	require.NoError(t, err)
	assert.Equal(t, "early", res.Text())
	require.NoError(t, c.Close())
	assert.False(t, heldOpen.Load(), "the call returned only after the server ended the stream")
}

// Over the legacy HTTP+SSE transport a call given up on ends its POST, or
// is never POSTed, so that no connection stays open at the server for it.
func TestLegacySSECancelledCallEndsItsPost(t *testing.T) {
	parallel(t)
	noLeaks(t)
	arrived, ended := make(chan string, 64), make(chan string, 64)
	stream := make(chan []byte, 64)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseWrite(w, "event: endpoint\ndata: /messages\n\n")
		for {
			select {
			case b := <-stream:
				sseWrite(w, "event: message\ndata: %s\n\n", b)
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		var m rpcMsg
		json.NewDecoder(r.Body).Decode(&m)
		if m.Method == "tools/call" && callName(m) == "slow" {
			arrived <- string(m.ID)
			<-r.Context().Done() // this server answers a POST once the work is done
			ended <- string(m.ID)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		if m.ID == nil {
			return
		}
		res := legacyAnswer(m)
		if m.Method == "tools/call" {
			res = map[string]any{"content": []any{map[string]any{"type": "text", "text": "fast"}}}
		}
		b, _ := json.Marshal(result(m.ID, res))
		stream <- b
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close) // after the Connection's Close, which ends the stream
	c := httpConnect(t, &mcp.SSETransport{URL: srv.URL + "/sse", Logger: quiet}, nil)
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { // once the POST is at the server, however long that takes
			<-arrived
			cancel()
		}()
		_, err := c.CallTool(ctx, "slow", nil)
		cancel()
		require.ErrorIs(t, err, context.Canceled, "call %d", i)
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d: its POST is still open at the server", i)
		}
	}
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "fast", nil)
	require.NoError(t, err)
	assert.Equal(t, "fast", res.Text())
}

// Options.Logger gets every line of the Connection and of its transport.
func TestOneLogger(t *testing.T) {
	var global bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	defer slog.SetDefault(old)
	t.Run("stdio: lines that are not messages", func(t *testing.T) {
		noLeaks(t)
		global.Reset()
		var mine bytes.Buffer
		tr := &mcp.CommandTransport{Command: testproc.Command("noisy"), ShutdownTimeout: 300 * time.Millisecond}
		c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tr, &mcp.Options{Logger: slog.New(slog.NewTextHandler(&mine, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		require.NoError(t, err)
		_, err = c.Tools(ctxTimeout(t, 10*time.Second))
		require.NoError(t, err)
		require.NoError(t, c.Close())
		assert.Contains(t, mine.String(), "Starting fake server", "the skipped line reached Options.Logger")
		assert.Empty(t, global.String(), "nothing went to slog.Default")
	})
	t.Run("Streamable HTTP: a failed POST", func(t *testing.T) {
		noLeaks(t)
		global.Reset()
		var mine bytes.Buffer
		srv := scriptedServer(t, &scripted{notify: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			w.WriteHeader(http.StatusInternalServerError)
		}})
		c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), &mcp.StreamableHTTPTransport{URL: srv.URL}, &mcp.Options{Logger: slog.New(slog.NewTextHandler(&mine, nil))})
		require.NoError(t, err)
		require.NoError(t, c.Notify(ctxTimeout(t, 5*time.Second), "notifications/progress", map[string]any{"progressToken": 1, "progress": 1}))
		_, err = c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil) // after the notification's POST
		require.NoError(t, err)
		require.NoError(t, c.Close())
		assert.Contains(t, mine.String(), "http post failed")
		assert.Empty(t, global.String(), "nothing went to slog.Default")
	})
	t.Run("a transport's own logger stays its own", func(t *testing.T) {
		noLeaks(t)
		var theirs, mine bytes.Buffer
		tr := &mcp.CommandTransport{Command: testproc.Command("noisy"), ShutdownTimeout: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&theirs, nil))}
		c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tr, &mcp.Options{Logger: slog.New(slog.NewTextHandler(&mine, nil))})
		require.NoError(t, err)
		require.NoError(t, c.Close())
		assert.Contains(t, theirs.String(), "Starting fake server")
		assert.NotContains(t, mine.String(), "Starting fake server")
	})
}
