package mcp_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	testproc.Main()                  // serve as a child-process server when asked to
	os.Unsetenv("CLAUDE_CONFIG_DIR") // the tests' $HOME holds the user's files
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		// The parallel tests wait on clocks, not processors: more of them
		// than there are processors run at once.
		flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	// The goroutines of parallel tests are checked here, once every test
	// has ended (see parallel); each other test checks its own (noLeaks).
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// parallelTests are the top-level tests that run in parallel.
var parallelTests sync.Map

// parallel runs t in parallel with the package's other parallel tests: the
// tests that spend their time waiting on real clocks (retry floors, grace
// periods, probes). Call it first. The noLeaks of such a test and of its
// subtests checks nothing, as goleak cannot tell one running test's
// goroutines from another's: TestMain checks them all at the end.
func parallel(t *testing.T) {
	parallelTests.Store(t.Name(), true)
	t.Parallel()
}

var quiet = slog.New(slog.DiscardHandler)

// noLeaks fails the test if a goroutine started during it is still running
// when it ends. Call it first, so that it runs after every other cleanup.
func noLeaks(t *testing.T) {
	t.Helper()
	if top, _, _ := strings.Cut(t.Name(), "/"); isParallel(top) {
		return
	}
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}

func isParallel(test string) bool {
	_, ok := parallelTests.Load(test)
	return ok
}

// connect connects to tr and closes the connection when the test ends.
func connect(t *testing.T, tr mcp.Transport) *mcp.Connection {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, tr, &mcp.Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// child returns a CommandTransport running the named mcptest scenario as a
// child process, with short shutdown waits.
func child(scenario string, env ...string) *mcp.CommandTransport {
	return &mcp.CommandTransport{
		Command:         testproc.Command(scenario, env...),
		ShutdownTimeout: 300 * time.Millisecond,
		Logger:          quiet,
	}
}

func gone(pid int) bool { return testproc.Gone(pid) }

func pidOf(cmd *exec.Cmd) int { return cmd.Process.Pid }

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// recorder keeps the params of each request the fake server received.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]json.RawMessage
}

func (r *recorder) on(m *mcptest.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]json.RawMessage{}
	}
	r.seen[m.Method] = append(r.seen[m.Method], m.Params)
}

func (r *recorder) params(method string) []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[method]
}

// replying answers method with a fixed result.
func replying(result string) mcptest.Handler {
	return func(s *mcptest.Session, m *mcptest.Message) { s.Reply(m.ID, json.RawMessage(result)) }
}

// tasksFor is the tasks capability of a client that runs requests as
// tasks.
func tasksFor(requests string) string {
	return `"tasks":{"list":{},"cancel":{},"requests":{` + requests + `}}`
}

// ask makes the fake server send one request to the client during a tool
// call and answer the call with the client's raw response.
func ask(method string, params any) *mcptest.Server {
	responses := make(chan *mcptest.Message, 1)
	return &mcptest.Server{
		OnMessage: func(m *mcptest.Message) {
			if m.Method == "" && string(m.ID) == `"q"` {
				responses <- m
			}
		},
		Handlers: map[string]mcptest.Handler{"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Request("q", method, params)
			go func() {
				r := <-responses
				out := string(r.Result)
				if r.Error != nil {
					out = "error:" + string(r.Error)
				}
				s.Reply(m.ID, mcptest.TextResult(out))
			}()
		}},
	}
}

// askClient runs ask and returns the client's response.
func askClient(t *testing.T, opts mcp.Options, method string, params any) string {
	t.Helper()
	opts.Logger = quiet
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), ask(method, params).Transport(), &opts)
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxTimeout(t, 5*time.Second), "x", nil)
	require.NoError(t, err)
	return res.Text()
}
