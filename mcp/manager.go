package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/internal/httpstream"
)

// ManagerOptions configure a Manager. A nil *ManagerOptions, and every zero
// field, means the default.
type ManagerOptions struct {
	// ConnectTimeout bounds each server's start and handshake; zero means
	// $MCP_TIMEOUT (milliseconds), else 15 seconds. ToolTimeout bounds each
	// tool call; zero means $MCP_TOOL_TIMEOUT, else only the caller's ctx.
	// ShutdownTimeout is each CommandTransport's; zero means 2 seconds.
	ConnectTimeout  time.Duration
	ToolTimeout     time.Duration
	ShutdownTimeout time.Duration

	// ConnectBatch bounds how many local (stdio) servers start at once,
	// and RemoteConnectBatch how many remote ones, as Claude Code does: a
	// server waits for a place, and its ConnectTimeout runs from when it
	// starts. Zero means $MCP_SERVER_CONNECTION_BATCH_SIZE, else 3, and
	// $MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE, else 20.
	ConnectBatch       int
	RemoteConnectBatch int

	// RestartBackoff is the wait before a lost server is reconnected,
	// doubling with each failed attempt up to MaxRestartBackoff; zero
	// means 250 ms and 30 seconds.
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration

	// ApproveServer decides, once, on a project server the user's settings
	// neither approve nor reject; true approves it for the Manager's life.
	// Nil leaves it in StateNeedsApproval until Manager.Approve.
	ApproveServer func(ctx context.Context, sc *config.Server) bool

	// TrustWorkspace decides, once, on a workspace the user's settings do
	// not trust (see config.Workspace), as Claude Code's trust dialog does,
	// before any of its servers starts, under the ctx of the first call
	// that needs a server. True trusts it for the Manager's life
	// (config.SaveTrust remembers it); nil leaves it untrusted.
	TrustWorkspace func(ctx context.Context, ws *config.Workspace) bool

	// ServerOptions, if set, gives each server's Options at each
	// connection (sc is nil for a server of Add), so that handlers know
	// the server that asks. ClientInfo and Logger are filled in where
	// empty, and the Manager's tool-list refresh runs beside
	// ToolListChanged.
	ServerOptions func(name string, sc *config.Server) *Options

	// Authorizer, if set, gives the Authorizer of each http and sse
	// server, once: its tokens outlive reconnections (package mcp/auth).
	Authorizer func(name string, sc *config.Server) Authorizer

	// HTTPClient, if set, gives the *http.Client of each http and sse
	// server of the config (a proxy, a dialer of the program's own); nil,
	// or a nil result, means the transports' shared client. The
	// Authorizer and the same-origin redirect rule apply on top of it.
	HTTPClient func(name string, sc *config.Server) *http.Client

	// InheritEnv, if not nil, names the variables of the program's
	// environment that the config's stdio servers inherit, besides their
	// entry's env and CLAUDE_PROJECT_DIR, so that keys in the host's
	// environment reach no server that was not given them. Nil inherits
	// the whole environment, as Claude Code does; DefaultInheritedEnv is
	// the TypeScript SDK's small list.
	InheritEnv []string

	// ClientInfo, Logger and Observer are every Connection's (see
	// Options); the Observer sees the server's name in each Operation, and
	// an Observer of ServerOptions takes its place for that server.
	ClientInfo *Implementation
	Logger     *slog.Logger
	Observer   Observer

	// Extensions are every Connection's (see Options) where ServerOptions
	// sets none: UIExtension, for a host that renders views (package
	// mcp/apps).
	Extensions map[string]json.RawMessage

	// Skills configure the loading of the servers' skills (LoadSkill):
	// who approves one, where approvals are kept. Nil loads no skill.
	Skills *SkillOptions
	// AskPermission decides on each call of a tool that a permission
	// rule asks about (permissions.ask; see Manager.Permissions), under
	// the call's ctx, before ToolTimeout starts: true lets the call
	// through. Nil refuses every such call with a *PermissionError.
	AskPermission func(ctx context.Context, req *PermissionRequest) bool

	// MaxInstructions bounds each server's instructions (see
	// Manager.Instructions), in characters; zero means
	// $CLAUDE_CODE_MAX_MCP_DESCRIPTION_LENGTH, else 4096, as in Claude Code.
	MaxInstructions int
}

// State is a server's state in a Manager.
type State string

const (
	StatePending            State = "pending"             // not connected yet (Manager connects lazily)
	StateConnected          State = "connected"           // connected, tools listed
	StateReconnecting       State = "reconnecting"        // lost after it was connected; being brought back
	StateFailed             State = "failed"              // config error, or its first start or handshake failed
	StateDisabled           State = "disabled"            // "disabled": true in config, or a project server the user rejected
	StateNeedsApproval      State = "needs approval"      // a project server the user has not approved
	StateNeedsAuthorization State = "needs authorization" // a sign-in its Authorizer cannot do alone (see Err; Manager.SignIn cures it)
)

// ServerStatus describes one server of a Manager. Err and Warnings never
// hold secrets from the config: URL credentials and query values, header
// and env values are redacted.
type ServerStatus struct {
	Name            string
	State           State
	Transport       string       // "stdio", "http", "sse", or "custom" for Manager.Add
	Scope           config.Scope // where the config entry came from; "" for Manager.Add and a program's own config
	Source          string       // the config file, if any
	Err             error        // why the server failed or is reconnecting: a *config.Error, an *ExitError, a timeout, …
	Tools           int          // tools exposed
	Restarts        int          // reconnections after the server was lost
	ProtocolVersion string       // the version agreed with the server
	ServerInfo      Implementation
	Auth            string   // how the server is authorized, when its Authorizer says (a MethodAuthorizer); never a secret
	Warnings        []string // e.g. tool names that collided, a project entry that replaces a user's
}

// Manager owns many named servers and exposes their tools as one list,
// each named mcp__<server>__<tool>. It connects servers lazily and in
// parallel, each on the Manager's own context (never a caller's); one
// failing never affects the others. A server lost after it was connected
// is reconnected with backoff until it is back or the Manager is closed:
// meanwhile it stays listed (StateReconnecting, its tools kept) and a
// call to one of its tools waits for it within the call's ctx; the call
// that saw the loss fails with its error. A server whose first connection
// fails stays failed until Reconnect. A Manager is safe for concurrent
// use.
type Manager struct {
	opts   ManagerOptions
	logger *slog.Logger
	ctx    context.Context // ends at Close; bounds connections and refreshes
	cancel context.CancelFunc
	wg     sync.WaitGroup // supervisors and refreshes
	starts startLimits    // how many servers start at once

	mu           sync.Mutex
	servers      map[string]*server
	closed       bool
	routes       map[string]route
	cfg          *Config       // the config the servers came from; its trusted form once TrustWorkspace said so
	trustDecided bool          // TrustWorkspace was asked and answered
	trustAsking  chan struct{} // closed when the question under way is answered
	skillsOnce   sync.Once
	memApprovals SkillApprovals // skill approvals, when SkillOptions keeps none

	denied map[string]deniedTool // by exposed name: the tools a deny rule keeps out of routes
}

type route struct {
	server *server
	tool   string
}

// server is one named server of a Manager.
type server struct {
	name       string
	kind       string
	cfg        *config.Server                               // nil for Manager.Add
	transport  func(ctx context.Context) (Transport, error) // ctx bounds what building it runs (a headersHelper)
	authorizer func() Authorizer                            // nil for Manager.Add and stdio servers

	mu         sync.Mutex
	state      State
	conn       *Connection
	err        error
	tools      []Tool // last listed; nil before the first listing
	restarts   int
	running    bool          // a supervisor goroutine owns the server
	changed    chan struct{} // closed and replaced at every change of state
	firstDone  chan struct{} // closed when the first attempt of a supervisor ended
	kick       chan struct{} // asks the supervisor to reconnect now
	approved   bool          // a project server approved during this Manager's life
	asked      bool          // ApproveServer was asked
	refreshing bool
	dirty      bool
	warnings   []string
	exposed    int
	closeErr   error  // from closing the connection at Manager.Close
	version    string // agreed with the server last time: its era, kept across restarts
	views      views  // MCP Apps views read, for the current connection
}

// managedTransport is a transport of this package that a Manager fits to
// one of its servers; each kind takes of the fitting what it uses.
type managedTransport interface{ fit(f *fitting) }

// fitting is what a Manager gives the transport of one of its servers.
type fitting struct {
	logger   *slog.Logger
	shutdown time.Duration
	cmd      func() *exec.Cmd // the command in the Manager's environment; nil keeps the transport's
	auth     func() Authorizer
	client   func() *http.Client
	memory   *httpstream.Memory // what the server's transports learn, kept across restarts
}

func (t *CommandTransport) fit(f *fitting) {
	if f.cmd != nil {
		t.Command = f.cmd()
	}
	t.ShutdownTimeout, t.Logger = f.shutdown, f.logger
}

func (t *StreamableHTTPTransport) fit(f *fitting) {
	t.Logger, t.Auth, t.memory, t.Client = f.logger, f.auth(), f.memory, f.client()
}

func (t *SSETransport) fit(f *fitting) {
	t.Logger, t.Auth, t.Client = f.logger, f.auth(), f.client()
}

var (
	_ managedTransport = (*CommandTransport)(nil)
	_ managedTransport = (*StreamableHTTPTransport)(nil)
	_ managedTransport = (*SSETransport)(nil)
)

func errRejected(name string) error {
	return fmt.Errorf("mcp: project server %q is rejected in the user's settings (disabledMcpjsonServers)", name)
}

// mayContact says why s may not be contacted yet (a project server the
// user has not approved, or rejected; a disabled or broken entry), or nil.
// Nothing reaches such a server: no connection, no sign-in, no Authorizer.
func (s *server) mayContact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.cfg
	switch {
	case sc == nil:
		return nil
	case sc.Err != nil:
		return sc.Err
	case sc.Disabled:
		return fmt.Errorf("mcp: server %q is disabled", s.name)
	case sc.Scope == config.ScopeProject && sc.Approval == config.Rejected:
		return errRejected(s.name)
	case sc.Scope == config.ScopeProject && sc.Approval != config.Approved && !s.approved:
		return fmt.Errorf("mcp: project server %q from %s needs the user's approval first (enabledMcpjsonServers, or Manager.Approve)", s.name, sc.Source)
	}
	return nil
}

// setState changes s's state and wakes whoever waits for a change. s.mu
// must be held.
func (s *server) setState(st State, err error) {
	s.state, s.err = st, err
	close(s.changed)
	s.changed = make(chan struct{})
}

// NewManager returns a Manager for the servers of cfg (nil means none).
// Nothing is started until Connect, Tools or CallTool.
func NewManager(cfg *Config, opts *ManagerOptions) *Manager {
	m := &Manager{servers: map[string]*server{}}
	if opts != nil {
		m.opts = *opts
	}
	m.opts.ConnectTimeout = durationDefault(m.opts.ConnectTimeout, "MCP_TIMEOUT", 15*time.Second)
	m.opts.ToolTimeout = durationDefault(m.opts.ToolTimeout, "MCP_TOOL_TIMEOUT", 0)
	if m.opts.ShutdownTimeout <= 0 {
		m.opts.ShutdownTimeout = 2 * time.Second
	}
	if m.opts.RestartBackoff <= 0 {
		m.opts.RestartBackoff = 250 * time.Millisecond
	}
	if m.opts.MaxRestartBackoff <= 0 {
		m.opts.MaxRestartBackoff = 30 * time.Second
	}
	m.logger = m.opts.Logger
	if m.logger == nil {
		m.logger = slog.Default()
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.cfg = cfg
	m.addConfigServers(cfg)
	return m
}

// addConfigServers adds (or replaces) the servers of cfg.
func (m *Manager) addConfigServers(cfg *Config) {
	if cfg == nil {
		return
	}
	for _, name := range cfg.Names() {
		sc := cfg.Servers[name]
		if len(sc.Extra) > 0 { // kept, never fatal
			m.logger.Debug("mcp: config entry has fields this package does not use", "server", name, "fields", slices.Sorted(maps.Keys(sc.Extra)))
		}
		s := &server{name: name, kind: sc.Type, cfg: sc, state: StatePending, changed: make(chan struct{})}
		switch {
		case sc.Err != nil:
			s.state, s.err = StateFailed, sc.Err
		case sc.Disabled:
			s.state = StateDisabled
		case sc.Scope == config.ScopeProject && sc.Approval == config.Rejected:
			s.state, s.err = StateDisabled, errRejected(name)
		}
		authorizer := sync.OnceValue(func() Authorizer {
			if m.opts.Authorizer == nil || (sc.Type != config.TypeHTTP && sc.Type != config.TypeSSE) {
				return nil
			}
			return m.opts.Authorizer(name, sc)
		})
		s.authorizer = authorizer
		memory := &httpstream.Memory{} // what the server's transports learn, kept across restarts
		s.transport = func(ctx context.Context) (Transport, error) {
			t, err := transportFor(ctx, sc)
			if mt, ok := t.(managedTransport); ok {
				f := &fitting{logger: m.logger.With("server", name), shutdown: m.opts.ShutdownTimeout, memory: memory,
					auth: authorizer, client: func() *http.Client { return m.httpClient(name, sc) }}
				if m.opts.InheritEnv != nil {
					f.cmd = func() *exec.Cmd { return sc.CmdInheriting(m.opts.InheritEnv) }
				}
				mt.fit(f)
			}
			return t, err
		}
		m.servers[name] = s
	}
}

// httpClient is the program's client for the config entry sc, or nil.
func (m *Manager) httpClient(name string, sc *config.Server) *http.Client {
	if m.opts.HTTPClient == nil {
		return nil
	}
	return m.opts.HTTPClient(name, sc)
}

// DefaultInheritedEnv is the environment a stdio server inherits in the
// MCP TypeScript SDK (see ManagerOptions.InheritEnv).
var DefaultInheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

func durationDefault(d time.Duration, env string, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	if v := os.Getenv(env); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return def
}

// Add adds a server reached through t. A reconnection calls t.Connect
// again, so t must be able to connect more than once: a TransportFunc
// that builds a new CommandTransport each time (see the example),
// mcptest.Server.Transport, an HTTP transport. A *CommandTransport and an
// end of NewInMemoryTransports are refused with an error matching
// ErrSingleUseTransport: the exec.Cmd runs once, and the Manager, which
// starts a lost server again, does not copy it (what
// exec.CommandContext, Cancel and the caller's pipes hold cannot be
// copied); the pipe carries one session. Add fails too for a name already
// in use and after Close.
func (m *Manager) Add(name string, t Transport) error {
	if err := reusable(name, t); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if name == "" {
		return errors.New("mcp: server name is empty")
	}
	if _, ok := m.servers[name]; ok {
		return fmt.Errorf("mcp: server %q already exists", name)
	}
	m.servers[name] = &server{name: name, kind: "custom", state: StatePending, changed: make(chan struct{}),
		transport: func(context.Context) (Transport, error) { return t, nil }}
	m.routes = nil
	return nil
}

// lookup returns the server name.
func (m *Manager) lookup(name string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.servers[name]
	switch {
	case m.closed:
		return nil, ErrClosed
	case !ok:
		return nil, fmt.Errorf("mcp: no server %q", name)
	}
	return s, nil
}

func (m *Manager) pendingReason(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfg.WaitsForTrust(name) {
		return "; it is approved in the workspace's settings, which count once the workspace is trusted (config.SaveTrust, mcpls -trust)"
	}
	return ""
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Close stops every server's supervisor, which closes its connection (all
// in parallel; each close is bounded, see CommandTransport), and waits for
// them and for background refreshes. It returns the close errors, joined.
// Later calls to the Manager fail with ErrClosed; Close itself is
// idempotent. An ApproveServer function still asking is handed a ctx that
// has ended, and Close waits for it to return.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := m.sorted()
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	var errs []error
	for _, s := range servers {
		s.mu.Lock()
		errs = append(errs, s.closeErr)
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (m *Manager) sorted() []*server {
	names := make([]string, 0, len(m.servers))
	for n := range m.servers {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*server, len(names))
	for i, n := range names {
		out[i] = m.servers[n]
	}
	return out
}
