package mcp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// goroutineID is the id of the calling goroutine, from its stack header.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// postRecorder is an http.RoundTripper that notes which goroutine sent
// each POST whose body names a method.
type postRecorder struct {
	mu     sync.Mutex
	method string
	by     []uint64
}

func (p *postRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"`+p.method+`"`)) {
			p.mu.Lock()
			p.by = append(p.by, goroutineID())
			p.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (p *postRecorder) senders() []uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint64(nil), p.by...)
}

func TestHTTPCallSendsItsOwnPost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string
		sse     bool
	}{
		{"a legacy call with a JSON answer", mcp.LatestLegacyVersion, false},
		{"a legacy call with an SSE answer", mcp.LatestLegacyVersion, true},
		{"a modern call with a JSON answer", mcp.LatestProtocolVersion, false},
		{"a modern call with an SSE answer", mcp.LatestProtocolVersion, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			hs := httptest.NewServer(testproc.BenchHTTP(tc.sse))
			t.Cleanup(hs.Close)
			rec := &postRecorder{method: "tools/call"}
			c := connectWith(t, &mcp.StreamableHTTPTransport{URL: hs.URL, Client: &http.Client{Transport: rec}, Logger: quiet},
				&mcp.Options{Logger: quiet, ProtocolVersion: tc.version})
			ctx := ctxTimeout(t, 10*time.Second)
			for range 3 {
				res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"})
				require.NoError(t, err)
				assert.NotEmpty(t, res.Text())
			}
			me := goroutineID()
			assert.Equal(t, []uint64{me, me, me}, rec.senders(), "every call POSTs from the caller's goroutine")
		})
	}
}

func TestHTTPClose(t *testing.T) {
	t.Run("the notifications written before Close are delivered", func(t *testing.T) {
		noLeaks(t)
		var answered, abandoned atomic.Int32
		srv := scriptedServer(t, &scripted{notify: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			select {
			case <-time.After(50 * time.Millisecond): // a slow server
				answered.Add(1)
				w.WriteHeader(http.StatusAccepted)
			case <-r.Context().Done():
				abandoned.Add(1)
			}
		}})
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.StreamableHTTPTransport{URL: srv.URL}, &mcp.Options{Logger: quiet})
		require.NoError(t, err)
		require.NoError(t, c.Notify(ctxTimeout(t, 5*time.Second), "notifications/progress", map[string]any{"progressToken": 1, "progress": 1}))
		require.NoError(t, c.Close())
		assert.Equal(t, int32(1), answered.Load(), "the notification was answered before Close returned")
		assert.Zero(t, abandoned.Load())
	})
	t.Run("a notification the server never answers holds Close only for CloseTimeout", func(t *testing.T) {
		noLeaks(t)
		srv := scriptedServer(t, &scripted{notify: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			<-r.Context().Done()
		}})
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.StreamableHTTPTransport{URL: srv.URL, CloseTimeout: 100 * time.Millisecond}, &mcp.Options{Logger: quiet})
		require.NoError(t, err)
		require.NoError(t, c.Notify(ctxTimeout(t, 5*time.Second), "notifications/progress", map[string]any{"progressToken": 1, "progress": 1}))
		start := time.Now()
		require.NoError(t, c.Close())
		assert.Less(t, time.Since(start), time.Minute, "the notification is never answered: without the bound, Close waits for ever")
	})
}

func TestHTTPServerWithoutGetStreamIsNotAskedAgain(t *testing.T) {
	noLeaks(t)
	var gets atomic.Int32
	srv := scriptedServer(t, &scripted{get: func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}})
	call := func(transport *mcp.StreamableHTTPTransport) {
		c := httpConnect(t, transport, nil)
		_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "echo", nil)
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	transport := &mcp.StreamableHTTPTransport{URL: srv.URL}
	for range 3 {
		call(transport)
	}
	assert.Equal(t, int32(1), gets.Load(), "the server answered the first GET with 405; the transport's next connections send none")
	call(&mcp.StreamableHTTPTransport{URL: srv.URL})
	assert.Equal(t, int32(1), gets.Load(), "another transport to the same URL knew it too")
	call(&mcp.StreamableHTTPTransport{URL: srv.URL, Client: &http.Client{}})
	assert.Equal(t, int32(2), gets.Load(), "a transport with another Client knew nothing")
}

func TestHTTPDeclaredLengthIsNotAllocatedAhead(t *testing.T) {
	noLeaks(t)
	srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(60<<20)) // within the 64 MiB bound
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID))
	}})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	runtime.ReadMemStats(&after)
	require.Error(t, err, "the body ends before its declared length")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "bytes allocated for an answer of a few bytes that declares 60 MiB")
}

func TestHTTPRequestDoesNotWaitForANotification(t *testing.T) {
	noLeaks(t)
	callArrived := make(chan struct{})
	var once sync.Once
	srv := scriptedServer(t, &scripted{
		notify: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			select { // the notification is answered only once the call has arrived
			case <-callArrived:
				w.WriteHeader(http.StatusAccepted)
			case <-r.Context().Done():
			}
		},
		call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
			once.Do(func() { close(callArrived) })
			writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}))
		},
	})
	c := httpConnect(t, &mcp.StreamableHTTPTransport{URL: srv.URL, Logger: quiet}, nil)
	ctx := ctxTimeout(t, 5*time.Second)
	require.NoError(t, c.Notify(ctx, "notifications/progress", map[string]any{"progressToken": 1, "progress": 1}))
	res, err := c.CallTool(ctxTimeout(t, 2*time.Second), "x", nil)
	require.NoError(t, err, "the call was held behind the notification's POST")
	assert.Equal(t, "ok", res.Text())
}
