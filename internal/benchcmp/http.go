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
	"net/url"
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
// loopback TCP. It speaks 2025-11-25 only, as most servers deployed do: a
// request of a newer revision gets 400, as such a server answers it.

// serveHTTP runs the bench HTTP server ("json" or "sse" answers) on a
// loopback port and prints its URL. Then, for each line read from stdin,
// it prints how many TCP connections clients have opened so far, and how
// many HTTP requests they made.
func serveHTTP(mode string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	os.Stdout.Sync()
	var conns, requests atomic.Int64
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println(conns.Load(), requests.Load())
		}
	}()
	bench := testproc.BenchHTTP(mode == "sse")
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Mcp-Protocol-Version") > protocol { // a 2025-11-25 server: a newer revision is a bad request
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: unsupported protocol version"}}`)
			return
		}
		bench.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: counted, ConnState: func(_ net.Conn, st http.ConnState) {
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
	conns, _, err := s.counts()
	return conns, err
}

// counts asks the server how many TCP connections clients have opened,
// and how many HTTP requests they made.
func (s *httpServer) counts() (conns, requests int64, err error) {
	if _, err := io.WriteString(s.in, "?\n"); err != nil {
		return 0, 0, err
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscan(line, &conns, &requests); err != nil {
		return 0, 0, fmt.Errorf("bench http server: %q: %w", line, err)
	}
	return conns, requests, nil
}

func (s *httpServer) stop() {
	s.in.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// --- the floor: a hand-written net/http client

// It serves many goroutines: ids are atomic and each request has a buffer
// of its own from a pool. One transport keeps an idle connection for
// each of 64 callers and asks for no gzip; the request headers are built
// once and copied per request; the body is encoded by hand into an
// in-memory reader of known length, so that net/http writes headers and
// body at once; and it makes the three requests a connect needs
// (initialize, initialized, tools/list), no more.
type httpFloor struct {
	contract bool // the contract floor (contract.go)
	url      *url.URL
	client   *http.Client
	header   http.Header
	id       atomic.Int64
	bufs     sync.Pool
}

// floorTransports keeps one transport per URL, as mcplug's do: a
// program's connections to one server share its idle connections.
var floorTransports sync.Map

func connectHTTPFloor(ctx context.Context, u string) (client, error) {
	return startHTTPFloor(ctx, u, false)
}

// connectHTTPContract is the contract floor over HTTP.
func connectHTTPContract(ctx context.Context, u string) (client, error) {
	return startHTTPFloor(ctx, u, true)
}

func startHTTPFloor(ctx context.Context, u string, contract bool) (client, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	t, _ := floorTransports.LoadOrStore(u, &http.Transport{
		DialContext:         (&net.Dialer{}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		DisableCompression:  true,
	})
	f := &httpFloor{contract: contract, url: parsed, client: &http.Client{Transport: t.(*http.Transport)}, header: http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {protocol},
	}}
	f.bufs.New = func() any { return new(floorBuf) }
	if _, err := f.post(ctx, `"method":"initialize","params":{"protocolVersion":"`+protocol+`","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}`, true, nil); err != nil {
		return nil, err
	}
	if _, err := f.post(ctx, `"method":"notifications/initialized"`, false, nil); err != nil {
		return nil, err
	}
	return f, nil
}

// floorBuf is one request's memory: its body, and its answer's.
type floorBuf struct {
	req    []byte
	body   bytes.Reader
	answer bytes.Buffer
}

// post sends one message (with an id when request) and gives what answer
// makes of the answer message: the body of a JSON answer, or the data of
// an SSE one, valid only during answer.
func (f *httpFloor) post(ctx context.Context, rest string, request bool, answer func([]byte) (int, error)) (int, error) {
	return f.postWith(ctx, func(b []byte) []byte { return append(b, rest...) }, request, answer)
}

// postWith is post with the message's members after the id appended by
// rest.
func (f *httpFloor) postWith(ctx context.Context, rest func([]byte) []byte, request bool, answer func([]byte) (int, error)) (int, error) {
	fb := f.bufs.Get().(*floorBuf)
	defer f.bufs.Put(fb)
	buf := append(fb.req[:0], `{"jsonrpc":"2.0",`...)
	if request {
		buf = append(buf, `"id":`...)
		buf = strconv.AppendInt(buf, f.id.Add(1), 10)
		buf = append(buf, ',')
	}
	buf = rest(buf)
	buf = append(buf, '}')
	fb.req = buf
	fb.body.Reset(buf)
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           f.url,
		Host:          f.url.Host,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        f.header.Clone(),
		Body:          io.NopCloser(&fb.body),
		ContentLength: int64(len(buf)),
	}).WithContext(ctx)
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	fb.answer.Reset()
	if _, err := fb.answer.ReadFrom(resp.Body); err != nil {
		return 0, err
	}
	if !request || answer == nil {
		return 0, nil
	}
	body := fb.answer.Bytes()
	if ct := resp.Header["Content-Type"]; len(ct) > 0 && strings.HasPrefix(ct[0], "text/event-stream") {
		i := bytes.Index(body, []byte("data: "))
		if i < 0 {
			return 0, errors.New("no data in the SSE answer")
		}
		body = body[i+len("data: "):]
		if j := bytes.IndexByte(body, '\n'); j >= 0 {
			body = body[:j]
		}
	}
	return answer(body)
}

func (f *httpFloor) call(ctx context.Context, tool string, args map[string]any) (int, error) {
	if f.contract {
		return f.postWith(ctx, func(b []byte) []byte {
			b = append(b, `"method":"tools/call","params":{"name":`...)
			b = appendJSONString(b, tool)
			b = append(b, `,"arguments":`...)
			b = appendContractArgs(b, args)
			return append(b, '}')
		}, true, contractTextLen)
	}
	return f.post(ctx, `"method":"tools/call","params":{"name":"`+tool+`","arguments":`+argsJSON(args)+`}`, true, textLen)
}

func (f *httpFloor) listTools(ctx context.Context) error {
	var answer func([]byte) (int, error)
	if f.contract {
		answer = func(body []byte) (int, error) { return 0, contractListed(body) }
	}
	_, err := f.post(ctx, `"method":"tools/list"`, true, answer)
	return err
}

func (f *httpFloor) close() {}

// --- the SDKs over HTTP

// connectMcplugHTTP connects as a program does: a transport of its own,
// and no version pinned (mcplug finds the server's era).
func connectMcplugHTTP(ctx context.Context, url string) (client, error) {
	c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: url}, nil)
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
