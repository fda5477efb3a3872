package testproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcplug/mcplug/mcp/mcptest"
)

// The servers of the idle-connection tests, each in a process of its
// own so that the test process's heap is the client's alone. Each listens
// on a loopback port, prints its URL, then answers each line read from
// stdin: "conns" with the number of TCP connections open to it, "notify"
// by sending notifications/tools/list_changed on every GET stream open
// (stateful) and printing how many. It ends when stdin does.
// http-stateless speaks 2025-11-25 without sessions, http-modern
// 2026-07-28 (stateless by design).
func init() {
	scenarios["http-stateful"] = func() { serveIdle(newStreamingServer()) }
	scenarios["http-stateless"] = func() { serveIdle(&mcptest.Server{}) }
	scenarios["http-modern"] = func() { serveIdle(&mcptest.Server{Versions: mcptest.Modern}) }
}

// notifier is a server that can notify its clients.
type notifier interface {
	http.Handler
	notifyAll() int
}

func serveIdle(h http.Handler) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var open atomic.Int64
	srv := &http.Server{Handler: h, ConnState: func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}}
	go srv.Serve(ln)
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "conns":
			fmt.Println(open.Load())
		case "notify":
			n := 0
			if s, ok := h.(notifier); ok {
				n = s.notifyAll()
			}
			fmt.Println(n)
		}
	}
	os.Exit(0)
}

// streamingServer is a stateful 2025-11-25 server: a session for each
// initialize, and a GET stream for each session that asks for one; it
// answers a request of a newer revision with 400, as such a server does.
type streamingServer struct {
	mu      sync.Mutex
	last    int
	streams map[chan string]bool
}

func newStreamingServer() *streamingServer { return &streamingServer{streams: map[chan string]bool{}} }

func (s *streamingServer) notifyAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.streams {
		ch <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	}
	return len(s.streams)
}

func (s *streamingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet:
		ch := make(chan string, 4)
		s.mu.Lock()
		s.streams[ch] = true
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.streams, ch)
			s.mu.Unlock()
		}()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-ch:
				fmt.Fprintf(w, "data: %s\n\n", msg)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v > "2025-11-25" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: unsupported protocol version"}}`)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch m.Method {
	case "initialize":
		s.mu.Lock()
		s.last++
		w.Header().Set("Mcp-Session-Id", "idle-"+strconv.Itoa(s.last))
		s.mu.Unlock()
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"idle","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
	case "ping":
		result = `{}`
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`, m.ID)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, strings.TrimSpace(string(m.ID)), result)
}
