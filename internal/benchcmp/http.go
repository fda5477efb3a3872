package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
)

// The Streamable HTTP rows: the same cheap server (testproc.BenchHTTP,
// answers from precomputed bytes, as JSON or as a one-event SSE stream, no
// session) runs as a child process, and each client talks to it over
// loopback TCP.

// serveHTTP runs the bench HTTP server ("json" or "sse" answers) on a
// loopback port and prints its URL. Then, for each line read from stdin,
// it prints how many TCP connections clients have opened so far.
func serveHTTP(mode string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	os.Stdout.Sync()
	var conns atomic.Int64
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println(conns.Load())
		}
	}()
	srv := &http.Server{Handler: testproc.BenchHTTP(mode == "sse"), ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}}
	return srv.Serve(ln)
}

// httpServer is a bench HTTP server child process.
type httpServer struct {
	url string
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startHTTPServer(exe, mode string) (*httpServer, error) {
	cmd := exec.Command(exe, "serve-http", mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("bench http server: %w", err)
	}
	return &httpServer{url: strings.TrimSpace(line), cmd: cmd, in: in, out: out}, nil
}

// conns asks the server how many TCP connections clients have opened.
func (s *httpServer) conns() (int64, error) {
	if _, err := io.WriteString(s.in, "?\n"); err != nil {
		return 0, err
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(line), 10, 64)
}

func (s *httpServer) stop() {
	s.in.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// --- the floor: a hand-written net/http client

// It serves many goroutines: ids are atomic and each request has a buffer
// of its own from a pool.
type httpFloor struct {
	url    string
	client *http.Client
	id     atomic.Int64
	bufs   sync.Pool
}

func connectHTTPFloor(ctx context.Context, url string) (client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256 // as mcplug's default client: concurrent calls keep their connections
	f := &httpFloor{url: url, client: &http.Client{Transport: t}}
	f.bufs.New = func() any { b := make([]byte, 0, 512); return &b }
	if _, err := f.post(ctx, `"method":"initialize","params":{"protocolVersion":"`+protocol+`","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}`, true); err != nil {
		return nil, err
	}
	if _, err := f.post(ctx, `"method":"notifications/initialized"`, false); err != nil {
		return nil, err
	}
	return f, nil
}

// post sends one message (with an id when request) and returns the answer
// message: the body of a JSON answer, or the data of an SSE one.
func (f *httpFloor) post(ctx context.Context, rest string, request bool) ([]byte, error) {
	bp := f.bufs.Get().(*[]byte)
	defer f.bufs.Put(bp)
	buf := append((*bp)[:0], `{"jsonrpc":"2.0",`...)
	if request {
		buf = append(buf, `"id":`...)
		buf = strconv.AppendInt(buf, f.id.Add(1), 10)
		buf = append(buf, ',')
	}
	buf = append(buf, rest...)
	buf = append(buf, '}')
	*bp = buf
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(buf))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if !request {
		return nil, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		i := bytes.Index(body, []byte("data: "))
		if i < 0 {
			return nil, errors.New("no data in the SSE answer")
		}
		body = body[i+len("data: "):]
		if j := bytes.IndexByte(body, '\n'); j >= 0 {
			body = body[:j]
		}
	}
	return body, nil
}

func (f *httpFloor) call(ctx context.Context, tool string, args map[string]any) (int, error) {
	arguments := `{"text":"hi"}`
	if n, ok := args["size"].(int); ok {
		arguments = `{"size":` + strconv.Itoa(n) + `}`
	}
	answer, err := f.post(ctx, `"method":"tools/call","params":{"name":"`+tool+`","arguments":`+arguments+`}`, true)
	if err != nil {
		return 0, err
	}
	return textLen(answer)
}

func (f *httpFloor) listTools(ctx context.Context) error {
	_, err := f.post(ctx, `"method":"tools/list"`, true)
	return err
}

func (f *httpFloor) close() { f.client.CloseIdleConnections() }

// --- the SDKs over HTTP

// mcplugTransports keeps one transport per URL, as a Manager keeps one
// per server: what a transport learnt of its server (here, that it offers
// no GET stream) serves its next connections. A new transport per
// connection costs one GET more.
var mcplugTransports sync.Map

func connectMcplugHTTP(ctx context.Context, url string) (client, error) {
	t, _ := mcplugTransports.LoadOrStore(url, &mcp.StreamableHTTPTransport{URL: url})
	c, err := mcp.Connect(ctx, t.(*mcp.StreamableHTTPTransport), &mcp.Options{ProtocolVersion: mcp.LatestLegacyVersion})
	if err != nil {
		return nil, err
	}
	return &mcplugClient{c}, nil
}

func connectGoSDKHTTP(ctx context.Context, url string) (client, error) {
	c := gosdk.NewClient(&gosdk.Implementation{Name: "benchcmp", Version: "1.0.0"}, nil)
	s, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url},
		&gosdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, err
	}
	return &goSDKClient{s}, nil
}

func connectMcpGoHTTP(ctx context.Context, url string) (client, error) {
	c, err := mcpgoclient.NewStreamableHttpClient(url)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return initializeMcpGo(ctx, c)
}
