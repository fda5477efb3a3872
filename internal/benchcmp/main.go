// Command benchcmp runs the same client scenarios through mcplug, the
// official go-sdk, mcp-go and a minimal hand-written client (the floor)
// against one cheap stdio server (this program,
// started again with "serve"), interleaving the clients round by round,
// and prints the medians and the ratios. It lives in its own module so
// that mcplug does not depend on the other SDKs.
//
//	cd internal/benchcmp && go run . -rounds 5
//
// Absolute times drift on a shared machine; compare the ratios of one run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/mcplug/mcplug/mcp/config"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocol is the revision all three clients speak here.
const protocol = "2025-11-25"

// client is one SDK under test: a session that can call a tool.
type client interface {
	call(ctx context.Context, tool string, args map[string]any) (textLen int, err error)
	listTools(ctx context.Context) error
	close()
}

type sdk struct {
	name        string
	connect     func(ctx context.Context, exe string) (client, error)
	connectHTTP func(ctx context.Context, url string) (client, error)
	// connectMany, when set, is the stdio client for concurrent
	// scenarios (the floor's is another).
	connectMany func(ctx context.Context, exe string) (client, error)
	// servers connects n servers at once, lists their tools and closes
	// them.
	servers func(ctx context.Context, exe string, n int) error
}

// sdks are the clients measured: the floor, the contract floor, mcplug
// (at iFloor, iContract, iMcplug), then its peers.
var sdks = []sdk{
	{name: "floor", connect: connectFloor, connectHTTP: connectHTTPFloor, connectMany: connectFloorMux, servers: serversAtOnce(connectFloor)},
	{name: "contract", connect: connectContract, connectHTTP: connectHTTPContract, connectMany: connectContractMux, servers: serversAtOnce(connectContract)},
	{name: "mcplug", connect: connectMcplug, connectHTTP: connectMcplugHTTP, servers: mcplugServers},
	{name: "go-sdk", connect: connectGoSDK, connectHTTP: connectGoSDKHTTP, servers: serversAtOnce(connectGoSDK)},
	{name: "mcp-go", connect: connectMcpGo, connectHTTP: connectMcpGoHTTP, servers: serversAtOnce(connectMcpGo)},
}

// serversAtOnce connects n servers with connect from n goroutines, lists
// their tools, then closes them all, also at once.
func serversAtOnce(connect func(ctx context.Context, exe string) (client, error)) func(ctx context.Context, exe string, n int) error {
	return func(ctx context.Context, exe string, n int) error {
		clients := make([]client, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				c, err := connect(ctx, exe)
				if err == nil {
					err = c.listTools(ctx)
				}
				clients[i], errs[i] = c, err
			})
		}
		wg.Wait()
		for _, c := range clients {
			if c != nil {
				wg.Go(c.close)
			}
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}

// mcplugServers is how a host connects many servers with mcplug: one
// Manager, whose Connect starts them all at once and lists their tools.
func mcplugServers(ctx context.Context, exe string, n int) error {
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: quiet, ServerOptions: func(string, *config.Server) *mcp.Options {
		return &mcp.Options{ProtocolVersion: mcp.LatestLegacyVersion} // the peers speak 2025-11-25
	}})
	defer m.Close()
	for i := range n {
		server := mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
			return (&mcp.CommandTransport{Command: exec.Command(exe, "serve")}).Connect(ctx)
		})
		if err := m.Add(fmt.Sprintf("s%d", i), server); err != nil {
			return err
		}
	}
	if err := m.Connect(ctx); err != nil {
		return err
	}
	tools, err := m.Tools(ctx)
	if err == nil && len(tools) != 2*n {
		err = fmt.Errorf("%d tools from %d servers", len(tools), n)
	}
	return err
}

var quiet = slog.New(slog.DiscardHandler)

// Where the floor, the contract floor and mcplug are in sdks.
const (
	iFloor = iota
	iContract
	iMcplug
)

// columns names the clients in the order of sdks, for a table's cells.
func columns() string {
	var names []string
	for _, s := range sdks {
		names = append(names, s.name)
	}
	return strings.Join(names, " / ")
}

type scenario struct {
	name string
	run  func(b *testing.B, c client)
	// fresh makes each measurement connect anew (the connect scenario).
	connect bool
	size    int
	// concurrent runs the floor that serves many goroutines (floorMux
	// over stdio; the HTTP floor serves many as it is).
	concurrent bool
	// p99 reports the 99th percentile of a call's latency instead of the
	// time per call; run must record each call with latency.
	p99 bool
	// servers, when set, connects that many servers at once (each
	// started, initialized and listed) and closes them: the time is for
	// all of them.
	servers int
	// http, when set, runs the scenario over Streamable HTTP with "json"
	// or "sse" answers instead of over stdio.
	http string
}

func scenarios() []scenario {
	echo := map[string]any{"text": "hi"}
	text := func(tool string, n int) func(b *testing.B, c client) {
		args := map[string]any{"size": n}
		return func(b *testing.B, c client) {
			b.SetBytes(int64(n))
			latencies.reset()
			mine := make([]time.Duration, 0, 1024)
			defer func() { latencies.add(mine) }()
			for b.Loop() {
				start := time.Now()
				got, err := c.call(context.Background(), tool, args)
				mine = append(mine, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("got %d bytes of text, want %d", got, n)
				}
			}
		}
	}
	sequential := func(b *testing.B, c client) {
		latencies.reset()
		mine := make([]time.Duration, 0, 1<<16)
		defer func() { latencies.add(mine) }()
		for b.Loop() {
			start := time.Now()
			if _, err := c.call(context.Background(), "echo", echo); err != nil {
				b.Fatal(err)
			}
			mine = append(mine, time.Since(start))
		}
	}
	parallel := func(b *testing.B, c client) {
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.call(context.Background(), "echo", echo); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	parallelLatency := func(b *testing.B, c client) {
		latencies.reset()
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			mine := make([]time.Duration, 0, 1024)
			defer func() { latencies.add(mine) }()
			for pb.Next() {
				start := time.Now()
				if _, err := c.call(context.Background(), "echo", echo); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(start))
			}
		})
	}
	return []scenario{
		{name: "sequential call", run: sequential},
		{name: "64 goroutines", concurrent: true, run: parallel},
		{name: "64 goroutines, p99 latency of a call", concurrent: true, p99: true, run: parallelLatency},
		{name: "1 MiB result, a newline every 64 bytes (JSON \\n escapes)", run: text("big", 1<<20), size: 1 << 20},
		{name: "1 MiB result without escapes", run: text("plain", 1<<20), size: 1 << 20},
		{name: "16 MiB result, a newline every 64 bytes", run: text("big", 16<<20), size: 16 << 20},
		{name: "connect", connect: true},
		{name: "20 servers connected at once", servers: 20},
		{name: "HTTP sequential call, JSON answers", http: "json", run: sequential},
		{name: "HTTP sequential call, SSE answers", http: "sse", run: sequential},
		{name: "HTTP 64 goroutines, JSON answers", http: "json", concurrent: true, run: parallel},
		{name: "HTTP 1 MiB result, JSON", http: "json", run: text("big", 1<<20), size: 1 << 20},
		{name: "HTTP connect (initialize, initialized, tools/list)", http: "json", connect: true},
	}
}

var spread *bool

// errNotRun stands for the measurement of a client left out by -clients.
var errNotRun = errors.New("not run")

type measurement struct {
	ns, allocs, bytes float64
	conns             float64 // new TCP connections per 1,000 calls after the first; -1: not counted
	requests          float64 // HTTP requests per connect; 0: not counted
	p50               float64 // ns, the median latency of a call of the last run; 0: not measured
	cpu               float64 // ns of this process's CPU (user and system) per call; 0: not measured
	err               error
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := testproc.BenchServe(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "serve-http" {
		if err := serveHTTP(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "spin" {
		spin()
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "serve-tools" {
		if err := serveTools(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "idle-serve" {
		if err := idleServe(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 5 && os.Args[1] == "idle-client" {
		n, _ := strconv.Atoi(os.Args[4])
		exe, _ := os.Executable()
		printJSON(idleClient(exe, os.Args[2], os.Args[3], n, os.Args[5]))
		return
	}
	if len(os.Args) > 4 && os.Args[1] == "connect-client" {
		n, _ := strconv.Atoi(os.Args[3])
		exe, _ := os.Executable()
		printJSON(connectClient(exe, os.Args[2], n, os.Args[4]))
		return
	}
	rounds := flag.Int("rounds", 3, "interleaved rounds; the median is reported")
	idle := flag.Bool("idle", false, "measure idle sessions instead: heap, goroutines, fds and RSS per session, connect time, and what is left after Close")
	idleN := flag.Int("n", 5000, "with -idle: sessions held over HTTP")
	stdioN := flag.Int("stdio-n", 200, "with -idle: stdio children held")
	many := flag.String("many", "", "connect a stdio server for each tool list of the fixtures through one Manager while busy loops run: python or go servers")
	load := flag.Int("load", 24, "with -many: busy loops")
	claude := flag.String("claude", "", "with -many: also run Claude Code's claude mcp list, this executable, on the same servers")
	fixtures := flag.String("fixtures", "", "with -many: the folder of tool lists (default: the repository's ../shared/fixtures/tools)")
	connects := flag.Int("connects", 1000, "with -idle: stateful HTTP sessions connected one at a time, then 64 at once (0: none)")
	spread = flag.Bool("spread", false, "also print mcplug ÷ floor for each round")
	benchtime := flag.String("benchtime", "1s", "time per measurement, or a number of iterations as 1000x")
	only := flag.String("run", "", "only scenarios whose name matches this regular expression")
	clients := flag.String("clients", "", "only these clients, comma-separated (floor,contract,mcplug,go-sdk,mcp-go); the others are shown as not run")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	testing.Init()
	flag.Parse()
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp: -benchtime:", err)
		os.Exit(2)
	}
	run, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp: -run:", err)
		os.Exit(2)
	}
	var chosen []string // the clients to run; none: all
	if *clients != "" {
		chosen = strings.Split(*clients, ",")
		for _, name := range chosen {
			if !slices.ContainsFunc(sdks, func(s sdk) bool { return s.name == name }) {
				fmt.Fprintf(os.Stderr, "benchcmp: -clients: no client %q (%s)\n", name, strings.ReplaceAll(columns(), " / ", ", "))
				os.Exit(2)
			}
		}
	}
	selected := func(name string) bool { return chosen == nil || slices.Contains(chosen, name) }
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	if *many != "" {
		if err := runMany(exe, *many, *fixtures, *claude, *load, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, "benchcmp:", err)
			os.Exit(1)
		}
		return
	}
	if *idle {
		if err := runIdle(exe, *idleN, *stdioN, *connects, *rounds, selected); err != nil {
			fmt.Fprintln(os.Stderr, "benchcmp:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("%s, %d cores, GOMAXPROCS %d, %s %s/%s, %d rounds of %s\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, *rounds, *benchtime)
	fmt.Println()
	fmt.Println("| scenario | floor | contract | mcplug | go-sdk | mcp-go | mcplug ÷ floor | mcplug ÷ contract | mcplug ÷ go-sdk | mcplug ÷ mcp-go | allocs/op (" + columns() + ") | B/op (" + columns() + ") |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, sc := range scenarios() {
		if !run.MatchString(sc.name) {
			continue
		}
		results := make([][]measurement, len(sdks))
		for range *rounds {
			for i, s := range sdks { // interleaved: every round runs every client
				if !selected(s.name) {
					results[i] = append(results[i], measurement{err: errNotRun})
					continue
				}
				results[i] = append(results[i], measure(sc, s, exe))
			}
		}
		med := make([]measurement, len(sdks))
		var cells []string
		for i := range sdks {
			med[i] = median(results[i])
			cells = append(cells, show(med[i]))
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", sc.name, strings.Join(cells, " | "),
			ratioFloor(med[iMcplug], med[iFloor]), ratioFloor(med[iMcplug], med[iContract]), ratio(med[iMcplug], med[3]), ratio(med[iMcplug], med[4]),
			triple(med, func(m measurement) float64 { return m.allocs }),
			triple(med, func(m measurement) float64 { return m.bytes }))
		if med[iMcplug].err == nil && med[iMcplug].conns >= 0 {
			var parts []string
			for _, m := range med {
				if m.err != nil || m.conns < 0 {
					parts = append(parts, "–")
					continue
				}
				parts = append(parts, fmt.Sprintf("%.1f", m.conns))
			}
			fmt.Printf("|   new TCP connections per 1,000 calls after the first (%s) | %s |\n", columns(), strings.Join(parts, " / "))
		}
		subRow(med, "median latency of a call", func(m measurement) float64 { return m.p50 }, showNs)
		subRow(med, "client CPU per call", func(m measurement) float64 { return m.cpu }, showNs)
		if med[iMcplug].err == nil && med[iMcplug].requests > 0 {
			var parts []string
			for _, m := range med {
				if m.err != nil {
					parts = append(parts, "–")
					continue
				}
				parts = append(parts, fmt.Sprintf("%.1f", m.requests))
			}
			fmt.Printf("|   HTTP requests per connect (%s) | %s |\n", columns(), strings.Join(parts, " / "))
		}
		if *spread {
			fmt.Printf("|   spread of mcplug ÷ floor over the rounds | %s |\n", roundRatios(results[iMcplug], results[iFloor]))
			fmt.Printf("|   spread of mcplug ÷ contract over the rounds | %s |\n", roundRatios(results[iMcplug], results[iContract]))
		}
	}
}

// subRow prints a figure of each client, and mcplug's ÷ the floor's and
// ÷ the contract floor's, when mcplug's was measured.
func subRow(med []measurement, what string, f func(measurement) float64, show func(float64) string) {
	if med[iMcplug].err != nil || f(med[iMcplug]) == 0 {
		return
	}
	var parts []string
	for _, m := range med {
		if m.err != nil || f(m) == 0 {
			parts = append(parts, "–")
			continue
		}
		parts = append(parts, show(f(m)))
	}
	over := func(i int) string {
		if med[i].err != nil || f(med[i]) <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", f(med[iMcplug])/f(med[i]))
	}
	fmt.Printf("|   %s (%s; mcplug ÷ floor, ÷ contract) | %s | %s, %s |\n", what, columns(), strings.Join(parts, " / "), over(iFloor), over(iContract))
}

// roundRatios is mcplug ÷ floor for each round, lowest to highest.
func roundRatios(ours, floor []measurement) string {
	var rs []float64
	for i := range ours {
		if ours[i].err == nil && floor[i].err == nil {
			rs = append(rs, ours[i].ns/floor[i].ns)
		}
	}
	slices.Sort(rs)
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%.2f", r))
	}
	return strings.Join(parts, ", ")
}

// latencies gathers the call latencies of a p99 scenario's last run.
var latencies latencyLog

type latencyLog struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *latencyLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = l.all[:0]
}

func (l *latencyLog) add(d []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d...)
}

// quantile is the q-th percentile of the latencies gathered.
func (l *latencyLog) quantile(q int) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.all) == 0 {
		return 0, false
	}
	slices.Sort(l.all)
	return l.all[len(l.all)*q/100], true
}

// ratioFloor says how many times the floor's time mcplug takes.
func ratioFloor(ours, floor measurement) string {
	if ours.err != nil || floor.err != nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", ours.ns/floor.ns)
}

func measure(sc scenario, s sdk, exe string) (m measurement) {
	defer func() {
		if r := recover(); r != nil {
			m = measurement{err: fmt.Errorf("%v", r)}
		}
	}()
	ctx := context.Background()
	connect, target := s.connect, exe
	var srv *httpServer
	if sc.concurrent && s.connectMany != nil {
		connect = s.connectMany
	}
	if sc.servers > 0 {
		res := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.servers(ctx, exe, sc.servers); err != nil {
					m.err = err
					b.SkipNow()
				}
			}
		})
		return result(res, m.err)
	}
	if sc.http != "" {
		var err error
		if srv, err = startHTTPServer(exe, sc.http); err != nil {
			return measurement{err: err}
		}
		defer srv.stop()
		connect, target = s.connectHTTP, srv.url
	}
	if sc.connect {
		var requestsBefore int64
		if srv != nil {
			var err error
			if _, requestsBefore, err = srv.counts(); err != nil {
				return measurement{err: err}
			}
		}
		connects := 0
		res := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := connect(ctx, target)
				if err != nil {
					m.err = err
					b.SkipNow()
				}
				if err := c.listTools(ctx); err != nil {
					m.err = err
				}
				c.close()
				connects++
			}
		})
		m = result(res, m.err)
		if srv != nil && m.err == nil {
			_, after, err := srv.counts()
			if err != nil {
				return measurement{err: err}
			}
			m.requests = float64(after-requestsBefore) / float64(max(1, connects))
		}
		return m
	}
	c, err := connect(ctx, target)
	if err != nil {
		return measurement{err: err}
	}
	defer c.close()
	// Connections are counted after the first call: from then on a client
	// should need no new one.
	var connsBefore int64
	if srv != nil {
		if _, err := c.call(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
			return measurement{err: err}
		}
		if connsBefore, err = srv.conns(); err != nil {
			return measurement{err: err}
		}
	}
	chk := &checked{client: c}
	var failed error
	latencies.reset() // what a run that records none would report
	cpuBefore := processCPU()
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		defer func() {
			if b.Failed() && failed == nil {
				failed = fmt.Errorf("failed")
			}
		}()
		sc.run(b, chk)
	})
	if err := chk.firstErr(); err != nil {
		failed = err
	}
	cpu := processCPU() - cpuBefore
	m = result(res, failed)
	if m.err == nil {
		m.cpu = float64(cpu) / float64(max(1, chk.calls.Load()))
		if p, ok := latencies.quantile(50); ok && !sc.p99 {
			m.p50 = float64(p)
		}
	}
	if srv != nil && m.err == nil {
		after, err := srv.conns()
		if err != nil {
			return measurement{err: err}
		}
		m.conns = float64(after-connsBefore) * 1000 / float64(max(1, chk.calls.Load()))
	}
	if sc.p99 && m.err == nil {
		p, ok := latencies.quantile(99)
		if !ok {
			return measurement{err: errors.New("no latencies")}
		}
		m.ns = float64(p)
	}
	return m
}

// checked records a client's first error, since testing.Benchmark hides
// it, and counts the calls.
type checked struct {
	client
	mu    sync.Mutex
	err   error
	calls atomic.Int64
}

func (c *checked) call(ctx context.Context, tool string, args map[string]any) (int, error) {
	c.calls.Add(1)
	n, err := c.client.call(ctx, tool, args)
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *checked) firstErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func result(r testing.BenchmarkResult, err error) measurement {
	if err != nil || r.N == 0 {
		if err == nil {
			err = fmt.Errorf("no iterations")
		}
		return measurement{err: err}
	}
	return measurement{ns: float64(r.NsPerOp()), allocs: float64(r.AllocsPerOp()), bytes: float64(r.AllocedBytesPerOp()), conns: -1}
}

func median(ms []measurement) measurement {
	var ok []measurement
	for _, m := range ms {
		if m.err == nil {
			ok = append(ok, m)
		}
	}
	if len(ok) == 0 {
		return ms[0]
	}
	slices.SortFunc(ok, func(a, b measurement) int { return int(a.ns - b.ns) })
	return ok[len(ok)/2]
}

func show(m measurement) string {
	if m.err == errNotRun {
		return "–"
	}
	if m.err != nil {
		return "fails: " + oneLine(m.err.Error())
	}
	return showNs(m.ns)
}

func showNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func ratio(ours, peer measurement) string {
	if ours.err != nil || peer.err != nil {
		return "–"
	}
	return fmt.Sprintf("%.2f (%.1f× faster)", ours.ns/peer.ns, peer.ns/ours.ns)
}

func triple(ms []measurement, f func(measurement) float64) string {
	var parts []string
	for _, m := range ms {
		if m.err != nil {
			parts = append(parts, "–")
			continue
		}
		v := f(m)
		if v >= 1<<20 {
			parts = append(parts, fmt.Sprintf("%.1f MiB", v/(1<<20)))
		} else {
			parts = append(parts, fmt.Sprintf("%.0f", v))
		}
	}
	return strings.Join(parts, " / ")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// printJSON prints v as one line of JSON: a child process's report.
func printJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(b))
}

// --- mcplug

type mcplugClient struct{ c *mcp.Connection }

func connectMcplug(ctx context.Context, exe string) (client, error) {
	c, err := mcp.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(exe, "serve")}, &mcp.Options{ProtocolVersion: mcp.LatestLegacyVersion}) // the peers speak 2025-11-25
	if err != nil {
		return nil, err
	}
	return &mcplugClient{c}, nil
}

func (m *mcplugClient) call(ctx context.Context, tool string, args map[string]any) (int, error) {
	res, err := m.c.CallTool(ctx, tool, args)
	if err != nil {
		return 0, err
	}
	return len(res.Content[0].Text), nil
}

func (m *mcplugClient) listTools(ctx context.Context) error { _, err := m.c.Tools(ctx); return err }
func (m *mcplugClient) close()                              { m.c.Close() }

// --- go-sdk

type goSDKClient struct{ s *gosdk.ClientSession }

func connectGoSDK(ctx context.Context, exe string) (client, error) {
	c := gosdk.NewClient(&gosdk.Implementation{Name: "benchcmp", Version: "1.0.0"}, nil)
	s, err := c.Connect(ctx, &gosdk.CommandTransport{Command: exec.Command(exe, "serve")},
		&gosdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, err
	}
	return &goSDKClient{s}, nil
}

func (g *goSDKClient) call(ctx context.Context, tool string, args map[string]any) (int, error) {
	res, err := g.s.CallTool(ctx, &gosdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return 0, err
	}
	t, ok := res.Content[0].(*gosdk.TextContent)
	if !ok {
		return 0, fmt.Errorf("content is %T", res.Content[0])
	}
	return len(t.Text), nil
}

func (g *goSDKClient) listTools(ctx context.Context) error {
	_, err := g.s.ListTools(ctx, nil)
	return err
}
func (g *goSDKClient) close() { g.s.Close() }

// --- mcp-go

type mcpGoClient struct{ c *mcpgoclient.Client }

func connectMcpGo(ctx context.Context, exe string) (client, error) {
	c, err := mcpgoclient.NewStdioMCPClient(exe, nil, "serve")
	if err != nil {
		return nil, err
	}
	return initializeMcpGo(ctx, c)
}

// initializeMcpGo runs mcp-go's handshake at the protocol all clients
// speak.
func initializeMcpGo(ctx context.Context, c *mcpgoclient.Client) (client, error) {
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcpgo.Implementation{Name: "benchcmp", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, err
	}
	return &mcpGoClient{c}, nil
}

func (m *mcpGoClient) call(ctx context.Context, tool string, args map[string]any) (int, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return 0, err
	}
	t, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		return 0, fmt.Errorf("content is %T", res.Content[0])
	}
	return len(t.Text), nil
}

func (m *mcpGoClient) listTools(ctx context.Context) error {
	_, err := m.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	return err
}
func (m *mcpGoClient) close() { m.c.Close() }
