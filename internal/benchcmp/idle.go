package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The idle rows: what a session costs while it does nothing, as a gateway
// or an IDE host holds thousands of them. For each client and transport a
// process of its own (this program, started again with "idle-client")
// connects N sessions to the same server, one at a time, and reports,
// after two collections, the heap, goroutines and file descriptors they
// added, divided by N; then it closes them all and reports what is left:
// goroutines, TCP connections, file descriptors, child processes.
//
// The servers: over stdio the bench server (a child process each); over
// HTTP a go-sdk server in a process of its own, stateful (2025-11-25, a
// session and a GET stream each) or stateless (every revision the SDK
// knows, so that mcplug speaks 2026-07-28 with it; its peers speak
// 2025-11-25 without a session).

// idleTransports are the transports the idle rows measure.
var idleTransports = []string{"stateful", "stateless", "stdio"}

// idleResult is what one idle-client process reports, as JSON.
type idleResult struct {
	Client, Transport string
	N                 int
	HeapPerSession    float64 // bytes
	OwnGoroutines     float64 // per session, the client's own
	NetGoroutines     float64 // per session, net/http's (a persistConn's readLoop and writeLoop)
	FDsPerSession     float64
	RSSPerSession     float64 // bytes
	RSS               int64   // bytes, the whole process with N sessions open
	ConnectSeconds    float64 // the N connects, one at a time
	// After every session is closed:
	LeftGoroutines int // above the count before the first connect
	LeftConns      int // TCP connections still open (idle keep-alive connections)
	LeftFDs        int
	LeftChildren   int
	Err            string `json:",omitempty"`
}

// connectResult is what a "connect-client" process reports: the time to
// connect 1000 stateful sessions one at a time, then 1000 from 64
// goroutines.
type connectResult struct {
	Client               string
	N                    int
	Sequential, Parallel float64 // seconds
	Err                  string  `json:",omitempty"`
}

// runIdle measures every client on every transport, rounds times,
// interleaved, and prints the medians with their spread.
func runIdle(exe string, n, stdioN, connects, rounds int, chosen func(string) bool) error {
	servers := map[string]*idleServer{}
	for _, mode := range []string{"stateful", "stateless"} {
		s, err := startIdleServer(exe, mode)
		if err != nil {
			return err
		}
		defer s.stop()
		servers[mode] = s
	}
	clients := []string{"mcplug", "go-sdk", "mcp-go"}
	results := map[string][]idleResult{}
	conn := map[string][]connectResult{}
	for range rounds {
		for _, tr := range idleTransports {
			for _, cl := range clients {
				if !chosen(cl) {
					continue
				}
				count, target := n, ""
				if tr == "stdio" {
					count = stdioN
				} else {
					target = servers[tr].url
				}
				if count <= 0 {
					continue
				}
				var r idleResult
				if err := runChild(exe, &r, "idle-client", cl, tr, strconv.Itoa(count), target); err != nil {
					r = idleResult{Client: cl, Transport: tr, N: count, Err: err.Error()}
				}
				results[tr+"/"+cl] = append(results[tr+"/"+cl], r)
			}
		}
		if connects > 0 {
			for _, cl := range clients {
				if !chosen(cl) {
					continue
				}
				var r connectResult
				if err := runChild(exe, &r, "connect-client", cl, strconv.Itoa(connects), servers["stateful"].url); err != nil {
					r = connectResult{Client: cl, N: connects, Err: err.Error()}
				}
				conn[cl] = append(conn[cl], r)
			}
		}
	}
	fmt.Printf("%s, %d cores, GOMAXPROCS %d, %s; idle sessions: HTTP N = %d, stdio N = %d; %d rounds (median, and the lowest and highest in brackets where they differ)\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), n, stdioN, rounds)
	fmt.Println("| per idle session | client | heap | goroutines: own + net/http's | fds | RSS | connect, one at a time | left after Close: goroutines / TCP connections / fds / children |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, tr := range idleTransports {
		for _, cl := range clients {
			rs := results[tr+"/"+cl]
			if len(rs) == 0 {
				continue
			}
			var ok []idleResult
			for _, r := range rs {
				if r.Err == "" {
					ok = append(ok, r)
				}
			}
			if len(ok) == 0 {
				fmt.Printf("| %s, N = %d | %s | fails: %s |\n", tr, rs[0].N, cl, oneLine(rs[0].Err))
				continue
			}
			f := func(get func(idleResult) float64, show func(float64) string) string {
				return spreadOf(ok, get, show)
			}
			kib := func(v float64) string { return fmt.Sprintf("%.1f KiB", v/1024) }
			num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
			two := func(v float64) string { return fmt.Sprintf("%.2f", v) }
			secs := func(v float64) string { return fmt.Sprintf("%.2f s", v) }
			fmt.Printf("| %s, N = %d | %s | %s | %s + %s | %s | %s | %s | %s / %s / %s / %s |\n", tr, ok[0].N, cl,
				f(func(r idleResult) float64 { return r.HeapPerSession }, kib),
				f(func(r idleResult) float64 { return r.OwnGoroutines }, two),
				f(func(r idleResult) float64 { return r.NetGoroutines }, two),
				f(func(r idleResult) float64 { return r.FDsPerSession }, two),
				f(func(r idleResult) float64 { return r.RSSPerSession }, kib),
				f(func(r idleResult) float64 { return r.ConnectSeconds }, secs),
				f(func(r idleResult) float64 { return float64(r.LeftGoroutines) }, num),
				f(func(r idleResult) float64 { return float64(r.LeftConns) }, num),
				f(func(r idleResult) float64 { return float64(r.LeftFDs) }, num),
				f(func(r idleResult) float64 { return float64(r.LeftChildren) }, num))
		}
	}
	if connects > 0 {
		fmt.Println()
		fmt.Printf("| connect %d stateful HTTP sessions (initialize, initialized, and what the client does next) | client | one at a time | 64 at once |\n", connects)
		fmt.Println("|---|---|---|---|")
		for _, cl := range clients {
			rs := conn[cl]
			var ok []connectResult
			for _, r := range rs {
				if r.Err == "" {
					ok = append(ok, r)
				}
			}
			if len(ok) == 0 {
				if len(rs) > 0 {
					fmt.Printf("| | %s | fails: %s | |\n", cl, oneLine(rs[0].Err))
				}
				continue
			}
			secs := func(v float64) string { return fmt.Sprintf("%.2f s", v) }
			fmt.Printf("| | %s | %s | %s |\n", cl,
				spreadOf(ok, func(r connectResult) float64 { return r.Sequential }, secs),
				spreadOf(ok, func(r connectResult) float64 { return r.Parallel }, secs))
		}
	}
	return nil
}

// spreadOf is the median of get over rs, followed by the lowest and the
// highest when they differ from it.
func spreadOf[R any](rs []R, get func(R) float64, show func(float64) string) string {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = get(r)
	}
	slices.Sort(vs)
	med := vs[len(vs)/2]
	s := show(med)
	if lo, hi := show(vs[0]), show(vs[len(vs)-1]); lo != s || hi != s {
		s += " (" + lo + "–" + hi + ")"
	}
	return s
}

// runChild runs this program with args and decodes the JSON it prints
// last into v.
func runChild(exe string, v any, args ...string) error {
	cmd := exec.Command(exe, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", args[0], args[1], err, lastLine(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return json.Unmarshal([]byte(lines[len(lines)-1]), v)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// --- the client process

// idleClient is the idle-client process: it connects n sessions of one
// client over one transport and prints an idleResult.
func idleClient(exe, cl, tr string, n int, url string) idleResult {
	r := idleResult{Client: cl, Transport: tr, N: n}
	if os.Getenv("BENCHCMP_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1 // every allocation, for a profile of few sessions
	}
	connect, err := idleConnector(exe, cl, tr, url)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	ctx := context.Background()
	// One session first, closed again: what a client sets up once (its
	// pools, its memory of the server), and what a Close leaves for a
	// moment, are not a session's cost.
	if c, err := connect(ctx); err != nil {
		r.Err = err.Error()
		return r
	} else {
		c.close()
	}
	time.Sleep(time.Second)
	before := snapshot()
	sessions := make([]client, 0, n)
	start := time.Now()
	for range n {
		c, err := connect(ctx)
		if err != nil {
			for _, c := range sessions {
				c.close()
			}
			r.Err = fmt.Sprintf("after %d sessions: %v", len(sessions), err)
			return r
		}
		sessions = append(sessions, c)
	}
	r.ConnectSeconds = time.Since(start).Seconds()
	held := snapshot()
	per := func(a, b int64) float64 { return float64(a-b) / float64(n) }
	r.HeapPerSession = per(int64(held.heap), int64(before.heap))
	r.OwnGoroutines = per(int64(held.own), int64(before.own))
	r.NetGoroutines = per(int64(held.net), int64(before.net))
	r.FDsPerSession = per(int64(held.fds), int64(before.fds))
	r.RSSPerSession = per(held.rss, before.rss)
	r.RSS = held.rss
	if path := os.Getenv("BENCHCMP_HEAPPROFILE"); path != "" {
		// The sessions' heap, to read with go tool pprof -sample_index=inuse_space.
		if f, err := os.Create(fmt.Sprintf("%s.%s.%s", path, cl, tr)); err == nil {
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}

	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, c := range sessions {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c.close()
		})
	}
	wg.Wait()
	sessions = nil
	// What a Close leaves running ends by itself soon, or never: look
	// for a second at most, until nothing more ends.
	var after state
	for deadline := time.Now().Add(time.Second); ; {
		after = snapshot()
		if after.own+after.net <= before.own+before.net || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.LeftGoroutines = after.own + after.net - before.own - before.net
	r.LeftConns = after.tcp - before.tcp
	r.LeftFDs = after.fds - before.fds
	r.LeftChildren = after.children - before.children
	return r
}

// connectClient is the connect-client process: n stateful sessions
// connected one at a time, closed, then n connected from 64 goroutines.
func connectClient(exe, cl string, n int, url string) connectResult {
	r := connectResult{Client: cl, N: n}
	connect, err := idleConnector(exe, cl, "stateful", url)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	ctx := context.Background()
	if c, err := connect(ctx); err != nil {
		r.Err = err.Error()
		return r
	} else {
		c.close()
	}
	closeAll := func(cs []client) {
		var wg sync.WaitGroup
		for _, c := range cs {
			if c != nil {
				wg.Go(c.close)
			}
		}
		wg.Wait()
	}
	sessions := make([]client, n)
	start := time.Now()
	for i := range n {
		c, err := connect(ctx)
		if err != nil {
			closeAll(sessions)
			r.Err = err.Error()
			return r
		}
		sessions[i] = c
	}
	r.Sequential = time.Since(start).Seconds()
	closeAll(sessions)

	sessions = make([]client, n)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start = time.Now()
	for range 64 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c, err := connect(ctx)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				sessions[i] = c
			}
		})
	}
	wg.Wait()
	r.Parallel = time.Since(start).Seconds()
	closeAll(sessions)
	if err := failed.Load(); err != nil {
		r.Err = (*err).Error()
	}
	return r
}

// idleConnector returns how client cl connects one session over tr.
func idleConnector(exe, cl, tr, url string) (func(context.Context) (client, error), error) {
	i := slices.IndexFunc(sdks, func(s sdk) bool { return s.name == cl })
	if i < 0 || i < iMcplug { // the floors hold no idle sessions
		return nil, fmt.Errorf("no client %q", cl)
	}
	s := sdks[i]
	switch tr {
	case "stdio":
		return func(ctx context.Context) (client, error) { return s.connect(ctx, exe) }, nil
	case "stateful", "stateless":
		return func(ctx context.Context) (client, error) { return s.connectHTTP(ctx, url) }, nil
	}
	return nil, fmt.Errorf("no transport %q", tr)
}

// state is what the process holds at one moment.
type state struct {
	heap     uint64
	own, net int // goroutines: the program's own, and net/http's connection loops
	fds, tcp int
	children int
	rss      int64
}

func snapshot() state {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := state{heap: ms.HeapAlloc, rss: rss(), children: children()}
	s.own, s.net = goroutines()
	s.fds, s.tcp = fds()
	return s
}

// goroutines counts the goroutines, setting apart those of net/http's
// connections (a persistConn's readLoop and writeLoop, two per open
// connection).
func goroutines() (own, netHTTP int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if len(bytes.TrimSpace(g)) == 0 {
			continue
		}
		if bytes.Contains(g, []byte("net/http.(*persistConn).readLoop")) || bytes.Contains(g, []byte("net/http.(*persistConn).writeLoop")) {
			netHTTP++
		} else {
			own++
		}
	}
	return own, netHTTP
}

// fds counts the open file descriptors, and the TCP sockets among them.
func fds() (all, tcp int) {
	entries, _ := os.ReadDir("/proc/self/fd")
	inodes := socketInodes()
	for _, e := range entries {
		all++
		if link, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			if ino, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
				tcp++
			}
		}
	}
	return all, tcp
}

// socketInodes are the inodes of this process's established TCP sockets.
func socketInodes() map[string]bool {
	m := map[string]bool{}
	for _, f := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && fields[3] == "01" { // ESTABLISHED
				m[fields[9]] = true
			}
		}
	}
	return m
}

func rss() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// children counts the live processes whose parent is this one.
func children() int {
	self := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so look after
		// its closing parenthesis.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			n++
		}
	}
	return n
}

// --- the HTTP server process

// idleServer is a go-sdk HTTP server in a process of its own.
type idleServer struct {
	url string
	cmd *exec.Cmd
	in  io.WriteCloser
}

func startIdleServer(exe, mode string) (*idleServer, error) {
	cmd := exec.Command(exe, "idle-serve", mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("idle server: %w", err)
	}
	return &idleServer{url: strings.TrimSpace(line), cmd: cmd, in: in}, nil
}

func (s *idleServer) stop() {
	s.in.Close() // the server ends when its stdin does
	if err := s.cmd.Wait(); err != nil {
		s.cmd.Process.Kill()
	}
}

// idleServe serves a go-sdk server over Streamable HTTP on a loopback
// port, stateful (2025-11-25 only) or stateless (every revision the SDK
// knows), prints its URL, and ends when stdin does.
func idleServe(mode string) error {
	var versions []string
	stateless := mode == "stateless"
	if !stateless {
		versions = []string{protocol}
	}
	srv := gosdk.NewServer(&gosdk.Implementation{Name: "idle-" + mode, Version: "1.0.0"}, &gosdk.ServerOptions{SupportedProtocolVersions: versions})
	gosdk.AddTool(srv, &gosdk.Tool{Name: "echo"}, func(_ context.Context, _ *gosdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*gosdk.CallToolResult, any, error) {
		return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: in.Text}}}, nil, nil
	})
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return srv }, &gosdk.StreamableHTTPOptions{Stateless: stateless})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	os.Stdout.Sync()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	err = (&http.Server{Handler: h}).Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
