package mcp

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcplug/mcplug/mcp/config"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/httpstream"
)

// ErrUnknownTool is matched by the error of Manager.CallTool for a name
// that no server exposes.
var ErrUnknownTool = errors.New("mcp: unknown tool")

// ManagerOptions configure a Manager. A nil *ManagerOptions, and every zero
// field, means the default.
type ManagerOptions struct {
	// ConnectTimeout bounds each server's start and handshake. Zero means
	// $MCP_TIMEOUT (milliseconds) if set, else 15 seconds.
	ConnectTimeout time.Duration

	// ToolTimeout bounds each tool call that has no earlier deadline. Zero
	// means $MCP_TOOL_TIMEOUT (milliseconds) if set, else no bound beyond
	// the caller's ctx.
	ToolTimeout time.Duration

	// ShutdownTimeout is CommandTransport.ShutdownTimeout for servers from
	// config. Zero means 2 seconds.
	ShutdownTimeout time.Duration

	// RestartBackoff is the wait before a lost server is reconnected; it
	// doubles with each failed attempt in a row, up to MaxRestartBackoff.
	// Zero means 250 ms.
	RestartBackoff time.Duration
	// MaxRestartBackoff bounds the wait between reconnection attempts.
	// Zero means 30 seconds.
	MaxRestartBackoff time.Duration

	// ApproveServer decides on a project server (config.ScopeProject) that
	// the user's settings neither approve nor reject, for programs that ask
	// the user. It is called once per server, when the server is first
	// connected, on its own goroutine; true approves it for the Manager's
	// life. Nil leaves such servers in StateNeedsApproval until
	// Manager.Approve.
	ApproveServer func(ctx context.Context, sc *config.Server) bool

	// TrustWorkspace decides on the workspace of a config from LoadConfig
	// that the user's settings do not trust (see config.Workspace), for programs
	// that ask the user, as Claude Code's trust dialog does. It is called
	// once, with the ctx of the first Connect, Tools, CallTool, Connection,
	// Reconnect or SignIn, before any of the config's servers starts; true
	// trusts the workspace for the Manager's life (see config.SaveTrust to
	// remember it): the workspace's approvals then count, its project
	// servers' headersHelpers run, and the user's own servers run in the
	// project. Nil leaves the workspace untrusted.
	TrustWorkspace func(ctx context.Context, ws *config.Workspace) bool

	// ServerOptions, if set, gives the Options of each server's
	// Connection, as a function of the server's name and config entry (nil
	// for a server added with Add): the handlers for sampling, elicitation,
	// roots, logging and list changes, which so know the server that asks.
	// It is called at each connection. The Manager fills in ClientInfo and
	// Logger where they are empty, and calls its own tool-list refresh
	// beside the ToolListChanged given. Nil means no handlers.
	ServerOptions func(name string, sc *config.Server) *Options

	// Authorizer, if set, gives the Authorizer of each http and sse server
	// from config (a *auth.Client of package mcp/auth, which can take the
	// entry's OAuth client), as a function of its name and entry; nil
	// leaves a server without one. It is called once per server, when the
	// server is first connected: its tokens outlive reconnections.
	Authorizer func(name string, sc *config.Server) Authorizer

	// ClientInfo and Logger are passed to every Connection (see Options).
	ClientInfo *Implementation
	Logger     *slog.Logger

	// Observer sees every server's Connection (see Options.Observer), with
	// the server's name in each Operation; an Observer of ServerOptions'
	// takes its place for that server, named too.
	Observer Observer
}

// State is a server's state in a Manager.
type State string

const (
	StatePending       State = "pending"        // not connected yet (Manager connects lazily)
	StateConnected     State = "connected"      // connected, tools listed
	StateReconnecting  State = "reconnecting"   // lost after it was connected; being brought back
	StateFailed        State = "failed"         // config error, or its first start or handshake failed
	StateDisabled      State = "disabled"       // "disabled": true in config, or a project server the user rejected
	StateNeedsApproval State = "needs approval" // a project server the user has not approved
	// StateNeedsAuthorization: the server asks for a sign-in that its
	// Authorizer could not do on its own (it has no browser, or the server
	// answered 401 or 403 to it). Err says why; Manager.SignIn cures it.
	StateNeedsAuthorization State = "needs authorization"
)

// ServerStatus describes one server of a Manager. Err and Warnings never
// hold secrets from the config: URL credentials and query values, header
// and env values are redacted.
type ServerStatus struct {
	Name      string
	State     State
	Transport string       // "stdio", "http", "sse", or "custom" for Manager.Add
	Scope     config.Scope // where the config entry came from; "" for Manager.Add and a program's own config
	Source    string       // the config file, if any
	Err       error        // why the server failed or is reconnecting: a *config.Error, an *ExitError, a timeout, …
	Tools     int          // tools exposed
	Restarts  int          // reconnections after the server was lost
	// ProtocolVersion is the version agreed with the server; isModern
	// tells its era (2026-07-28 and later: per-request metadata; earlier:
	// the initialize handshake).
	ProtocolVersion string
	ServerInfo      Implementation
	// Auth says how the server is authorized, when its Authorizer tells
	// (a Method method, as *auth.Client has: "oauth: client credentials
	// (private_key_jwt) + DPoP"); "" otherwise. It never holds a secret.
	Auth     string
	Warnings []string // e.g. tool names that collided, a project entry that replaces a user's
}

// Manager owns many named servers and exposes their tools as one list, each
// tool named mcp__<server>__<tool>. It connects servers lazily (on the first
// Connect, Tools or CallTool) and in parallel; one server failing never
// affects the others. A Manager is safe for concurrent use.
//
// Connections belong to the Manager, not to a caller: each server has one
// goroutine of the Manager's that connects it (bounded by ConnectTimeout,
// on the Manager's own context, never a caller's) and watches it. A server
// lost after it was connected (a crash, a dropped remote connection) is
// reconnected after RestartBackoff, doubling with each failed attempt up to
// MaxRestartBackoff, until it is back or the Manager is closed. Meanwhile it
// stays listed (StateReconnecting, its tools kept), and a call to one of its
// tools waits for it as long as the call's ctx allows. The call that saw the
// crash fails with the crash's error. A server whose first connection
// fails stays failed until Reconnect. A server's
// notifications/tools/list_changed refreshes its tools in the background.
type Manager struct {
	opts   ManagerOptions
	logger *slog.Logger
	ctx    context.Context // ends at Close; bounds connections and refreshes
	cancel context.CancelFunc
	wg     sync.WaitGroup // supervisors and refreshes

	mu           sync.Mutex
	servers      map[string]*server
	closed       bool
	routes       map[string]route
	cfg          *Config       // the config the servers came from; its trusted form once TrustWorkspace said so
	trustDecided bool          // TrustWorkspace was asked and answered
	trustAsking  chan struct{} // closed when the question under way is answered
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
}

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
			switch tt := t.(type) {
			case *CommandTransport:
				tt.ShutdownTimeout = m.opts.ShutdownTimeout
				tt.Logger = m.logger.With("server", name)
			case *StreamableHTTPTransport:
				tt.Logger = m.logger.With("server", name)
				tt.Auth = authorizer()
				tt.memory = memory
			case *SSETransport:
				tt.Logger = m.logger.With("server", name)
				tt.Auth = authorizer()
			}
			return t, err
		}
		m.servers[name] = s
	}
}

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
// again, so t should be able to connect more than once (a TransportFunc
// that builds a new CommandTransport each time, say). Add fails for a name
// already in use and after Close.
func (m *Manager) Add(name string, t Transport) error {
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
		return "; it is approved in the workspace's settings, which count once the workspace is trusted (SaveTrust, mcpls -trust)"
	}
	return ""
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Status reports every server, sorted by name. It starts nothing.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	servers := m.sorted()
	built := m.routes != nil
	m.mu.Unlock()
	if !built {
		m.table()
	}
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.name, State: s.state, Transport: s.kind, Err: s.err, Tools: s.exposed,
			Restarts: s.restarts, Warnings: slices.Clone(s.warnings)}
		if s.cfg != nil {
			st.Scope, st.Source = s.cfg.Scope, s.cfg.Source
			st.Warnings = append(slices.Clone(s.cfg.Warnings), st.Warnings...)
		}
		if s.conn != nil {
			if err := s.conn.Err(); err != nil && s.state == StateConnected {
				st.State, st.Err = StateReconnecting, err
			}
			st.ServerInfo = s.conn.InitializeResult().ServerInfo
			st.ProtocolVersion = s.conn.InitializeResult().ProtocolVersion
		}
		s.mu.Unlock()
		if s.authorizer != nil && s.mayContact() == nil {
			if a, ok := s.authorizer().(MethodAuthorizer); ok {
				st.Auth = a.Method()
			}
		}
		out = append(out, st)
	}
	return out
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
