package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
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

	// ApproveServer decides on a project server (Scope ScopeProject) that
	// the user's settings neither approve nor reject, for programs that ask
	// the user. It is called once per server, when the server is first
	// connected, on its own goroutine; true approves it for the Manager's
	// life. Nil leaves such servers in StateNeedsApproval until
	// Manager.Approve.
	ApproveServer func(ctx context.Context, sc *ServerConfig) bool

	// TrustWorkspace decides on the workspace of a config from LoadConfig
	// that the user's settings do not trust (see Workspace), for programs
	// that ask the user, as Claude Code's trust dialog does. It is called
	// once, with the ctx of the first Connect, Tools, CallTool, Connection,
	// Reconnect or SignIn, before any of the config's servers starts; true
	// trusts the workspace for the Manager's life (see SaveTrust to
	// remember it): the workspace's approvals then count, its project
	// servers' headersHelpers run, and the user's own servers run in the
	// project. Nil leaves the workspace untrusted.
	TrustWorkspace func(ctx context.Context, ws *Workspace) bool

	// ServerOptions, if set, gives the Options of each server's
	// Connection, as a function of the server's name and config entry (nil
	// for a server added with Add): the handlers for sampling, elicitation,
	// roots, logging and list changes, which so know the server that asks.
	// It is called at each connection. The Manager fills in ClientInfo and
	// Logger where they are empty, and calls its own tool-list refresh
	// beside the ToolListChanged given. Nil means no handlers.
	ServerOptions func(name string, sc *ServerConfig) *Options

	// Authorizer, if set, gives the Authorizer of each http and sse server
	// from config (a *auth.Client of package mcp/auth, which can take the
	// entry's OAuth client), as a function of its name and entry; nil
	// leaves a server without one. It is called once per server, when the
	// server is first connected: its tokens outlive reconnections.
	Authorizer func(name string, sc *ServerConfig) Authorizer

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
	Transport string // "stdio", "http", "sse", or "custom" for Manager.Add
	Scope     Scope  // where the config entry came from; "" for Manager.Add and a program's own config
	Source    string // the config file, if any
	Err       error  // why the server failed or is reconnecting: a *ConfigError, an *ExitError, a timeout, …
	Tools     int    // tools exposed
	Restarts  int    // reconnections after the server was lost
	// ProtocolVersion is the version agreed with the server; IsModern
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
	cfg        *ServerConfig                                // nil for Manager.Add
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
	case sc.Scope == ScopeProject && sc.Approval == Rejected:
		return errRejected(s.name)
	case sc.Scope == ScopeProject && sc.Approval != Approved && !s.approved:
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
		case sc.Scope == ScopeProject && sc.Approval == Rejected:
			s.state, s.err = StateDisabled, errRejected(name)
		}
		authorizer := sync.OnceValue(func() Authorizer {
			if m.opts.Authorizer == nil || (sc.Type != TypeHTTP && sc.Type != TypeSSE) {
				return nil
			}
			return m.opts.Authorizer(name, sc)
		})
		s.authorizer = authorizer
		s.transport = func(ctx context.Context) (Transport, error) {
			t, err := sc.transport(ctx)
			switch tt := t.(type) {
			case *CommandTransport:
				tt.ShutdownTimeout = m.opts.ShutdownTimeout
				tt.Logger = m.logger.With("server", name)
			case *StreamableHTTPTransport:
				tt.Logger = m.logger.With("server", name)
				tt.Auth = authorizer()
			case *SSETransport:
				tt.Logger = m.logger.With("server", name)
				tt.Auth = authorizer()
			}
			return t, err
		}
		m.servers[name] = s
	}
}

// decideTrust asks TrustWorkspace about the workspace of a LoadConfig
// config that the user's settings do not trust, once, before any server of
// it starts; when it trusts, the config's servers are made anew as the
// trusted workspace has them. Concurrent callers wait for the one
// decision, as long as their ctx allows; a decision cut short by its ctx
// is asked again next time.
func (m *Manager) decideTrust(ctx context.Context) error {
	for {
		m.mu.Lock()
		if m.trustDecided || m.opts.TrustWorkspace == nil || m.cfg == nil || m.cfg.Workspace == nil || m.cfg.Workspace.Trusted || m.cfg.layers == nil {
			m.mu.Unlock()
			return nil
		}
		if asking := m.trustAsking; asking != nil {
			m.mu.Unlock()
			select {
			case <-asking:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		asking := make(chan struct{})
		m.trustAsking = asking
		ws := *m.cfg.Workspace
		m.mu.Unlock()

		ok := m.opts.TrustWorkspace(ctx, &ws)
		approved := m.approvedNames() // by Manager.Approve meanwhile: that stands

		m.mu.Lock()
		m.trustAsking = nil
		close(asking)
		if ctx.Err() != nil {
			m.mu.Unlock()
			return ctx.Err()
		}
		m.trustDecided = true
		if ok && !m.closed {
			m.cfg = m.cfg.withTrust()
			for name, s := range m.servers {
				if s.cfg != nil {
					delete(m.servers, name)
				}
			}
			m.addConfigServers(m.cfg)
			for _, name := range approved {
				if s := m.servers[name]; s != nil {
					s.approved = true // not yet shared: no lock needed
				}
			}
			m.routes = nil
		}
		m.mu.Unlock()
		if ok {
			m.logger.Info("mcp: workspace trusted for this Manager", "root", ws.Root)
		}
		return nil
	}
}

// approvedNames are the servers approved with Manager.Approve.
func (m *Manager) approvedNames() []string {
	m.mu.Lock()
	servers := m.sorted()
	m.mu.Unlock()
	var names []string
	for _, s := range servers {
		s.mu.Lock()
		if s.approved {
			names = append(names, s.name)
		}
		s.mu.Unlock()
	}
	return names
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

// Connect connects every server not yet tried, in parallel, each bounded by
// ConnectTimeout, and waits for them (or for ctx: the connections go on
// in the background and are waited for by later calls). It returns the
// errors of the servers that failed, joined; the others are usable
// whatever it returns. Calling it again does not retry failed servers
// (see Reconnect).
func (m *Manager) Connect(ctx context.Context) error {
	if err := m.decideTrust(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	servers := m.sorted()
	m.mu.Unlock()

	var waits []chan struct{}
	for _, s := range servers {
		if w := m.start(s); w != nil {
			waits = append(waits, w)
		}
	}
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var errs []error
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StateFailed {
			errs = append(errs, fmt.Errorf("server %q: %w", s.name, s.err))
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// start starts s's supervisor unless it runs or s is not to be started, and
// returns what to wait on for its first attempt (nil for nothing).
func (m *Manager) start(s *server) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return s.firstDone
	}
	if s.state != StatePending {
		return nil
	}
	if s.cfg != nil && s.cfg.Scope == ScopeProject && s.cfg.Approval != Approved && !s.approved {
		if m.opts.ApproveServer == nil || s.asked {
			s.setState(StateNeedsApproval, fmt.Errorf("mcp: project server %q from %s needs the user's approval (enabledMcpjsonServers, or Manager.Approve)%s", s.name, s.cfg.Source, m.pendingReason(s.name)))
			return nil
		}
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.wg.Add(1)
	m.mu.Unlock()
	s.running = true
	s.firstDone = make(chan struct{})
	s.kick = make(chan struct{}, 1)
	go m.supervise(s, s.firstDone, s.kick)
	return s.firstDone
}

// supervise owns s's connection: it connects s, watches the connection,
// and after a loss reconnects with backoff, until the Manager is closed or
// a first connection fails.
func (m *Manager) supervise(s *server, firstDone chan struct{}, kick chan struct{}) {
	defer m.wg.Done()
	first := true
	signal := func() {
		if first {
			first = false
			close(firstDone)
		}
	}
	defer signal()
	if !m.approve(s) {
		return
	}
	failures := 0
	for {
		conn, tools, err := m.dial(s)
		if err == nil && m.ctx.Err() != nil {
			conn.Close()
			err = ErrClosed
		}
		s.mu.Lock()
		if err != nil {
			if m.ctx.Err() != nil {
				s.running = false
				s.setState(StateFailed, &closedError{cause: ErrClosed})
				s.mu.Unlock()
				return
			}
			if needsAuthorization(err) { // retrying cannot help: the user must sign in
				s.running = false
				s.setState(StateNeedsAuthorization, err)
				s.mu.Unlock()
				m.logger.Warn("mcp: server needs authorization", "server", s.name, "err", err)
				return
			}
			if first { // a server that never worked is not retried on its own
				s.running = false
				s.setState(StateFailed, err)
				s.mu.Unlock()
				m.logger.Warn("mcp: server failed", "server", s.name, "err", err)
				return
			}
			failures++
			s.version = "" // perhaps it is another server now: probe again
			s.setState(StateReconnecting, err)
			s.mu.Unlock()
			m.logger.Warn("mcp: could not reconnect server", "server", s.name, "attempt", failures, "err", err)
		} else {
			if !first {
				s.restarts++
			}
			failures = 0
			s.conn, s.tools = conn, tools
			s.version = conn.InitializeResult().ProtocolVersion
			s.setState(StateConnected, nil)
			s.mu.Unlock()
			m.invalidate()
			signal()
			lived := time.Now()
			select {
			case <-conn.Done():
			case <-kick:
			case <-m.ctx.Done():
			}
			s.mu.Lock()
			s.conn = nil
			if m.ctx.Err() != nil {
				s.running = false
				s.setState(StateFailed, &closedError{cause: ErrClosed})
				s.mu.Unlock()
				if err := conn.Close(); err != nil {
					s.mu.Lock()
					s.closeErr = fmt.Errorf("server %q: %w", s.name, err)
					s.mu.Unlock()
				}
				return
			}
			cause := conn.Err()
			if cause == nil {
				cause = errors.New("mcp: reconnecting on request")
			}
			s.setState(StateReconnecting, cause)
			s.mu.Unlock()
			m.logger.Warn("mcp: server lost; reconnecting", "server", s.name, "err", cause)
			conn.Close() // the process has exited: this reaps it
			if time.Since(lived) > m.opts.MaxRestartBackoff {
				failures = 0
			}
			failures++
		}
		signal()
		if !m.pause(backoff(m.opts.RestartBackoff, m.opts.MaxRestartBackoff, failures), kick) {
			s.mu.Lock()
			s.running = false
			s.setState(StateFailed, &closedError{cause: ErrClosed})
			s.mu.Unlock()
			return
		}
	}
}

// approve decides on a project server the settings left open, by asking
// ApproveServer.
func (m *Manager) approve(s *server) bool {
	s.mu.Lock()
	ask := s.cfg != nil && s.cfg.Scope == ScopeProject && s.cfg.Approval != Approved && !s.approved
	s.asked = s.asked || ask
	s.mu.Unlock()
	if !ask {
		return true
	}
	ok := m.opts.ApproveServer(m.ctx, s.cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || m.ctx.Err() != nil {
		s.running = false
		s.setState(StateNeedsApproval, fmt.Errorf("mcp: project server %q from %s was not approved", s.name, s.cfg.Source))
		return false
	}
	s.approved = true
	return true
}

// pause waits d, or less when kicked; false means the Manager closed.
func (m *Manager) pause(d time.Duration, kick chan struct{}) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-kick:
	case <-m.ctx.Done():
		return false
	}
	return m.ctx.Err() == nil
}

// dial connects s and lists its tools, bounded by ConnectTimeout and by
// the Manager's life.
func (m *Manager) dial(s *server) (*Connection, []Tool, error) {
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.ConnectTimeout)
	defer cancel()
	conn, tools, err := m.dialCtx(ctx, s)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && m.ctx.Err() == nil {
		err = fmt.Errorf("mcp: server %q did not start within %v (raise MCP_TIMEOUT): %w", s.name, m.opts.ConnectTimeout, err)
	}
	return conn, tools, err
}

func (m *Manager) dialCtx(ctx context.Context, s *server) (*Connection, []Tool, error) {
	t, err := s.transport(ctx)
	if err != nil {
		return nil, nil, err
	}
	conn, err := Connect(ctx, t, m.connOptions(s))
	if err != nil {
		return nil, nil, err
	}
	tools := []Tool{}
	if conn.InitializeResult().Capabilities.Tools != nil {
		if tools, err = conn.Tools(ctx); err != nil {
			conn.Close()
			return nil, nil, wrap("tools/list", err)
		}
	}
	return conn, tools, nil
}

// connOptions are the Options of s's next Connection.
func (m *Manager) connOptions(s *server) *Options {
	var opts Options
	if m.opts.ServerOptions != nil {
		if o := m.opts.ServerOptions(s.name, s.cfg); o != nil {
			opts = *o
		}
	}
	if opts.ProtocolVersion == "" {
		// The era is the server's: a restart speaks what was agreed
		// before, without probing again (a failed attempt forgets it).
		s.mu.Lock()
		opts.ProtocolVersion = s.version
		s.mu.Unlock()
	}
	if opts.ClientInfo == nil {
		opts.ClientInfo = m.opts.ClientInfo
	}
	if opts.Logger == nil {
		opts.Logger = m.logger.With("server", s.name)
	}
	if opts.Observer == nil {
		opts.Observer = m.opts.Observer
	}
	if opts.Observer != nil {
		opts.Observer = namedObserver{opts.Observer, s.name}
	}
	theirs := opts.ToolListChanged
	opts.ToolListChanged = func(c *Connection) {
		m.toolsChanged(s)
		if theirs != nil {
			theirs(c)
		}
	}
	return &opts
}

// Connection returns the live Connection of the server name, connecting
// it first if it was not yet (as Connect does) and waiting while it is
// being connected or reconnected, as long as ctx allows. The Connection
// stays the Manager's: closing it makes the Manager reconnect the server.
func (m *Manager) Connection(ctx context.Context, name string) (*Connection, error) {
	if err := m.decideTrust(ctx); err != nil {
		return nil, err
	}
	s, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	m.start(s)
	return m.wait(ctx, s)
}

// Approve approves the project server name for this Manager's life (see
// SaveApproval to remember it) and, when it waited for approval, lets the
// next Connect, Tools or CallTool start it.
func (m *Manager) Approve(name string) error {
	s, err := m.lookup(name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approved = true
	if s.state == StateNeedsApproval {
		s.setState(StatePending, nil)
	}
	return nil
}

// SignIn signs the server name in through browser (which takes the user
// to the authorization URL and returns the redirect it got; see package
// mcp/auth for ready ones), then reconnects it: for a server in
// StateNeedsAuthorization, or to sign in again as another user. The
// server's Authorizer must offer SignIn, as *auth.Client does.
func (m *Manager) SignIn(ctx context.Context, name string, browser func(ctx context.Context, authURL string) (*url.URL, error)) error {
	if err := m.decideTrust(ctx); err != nil {
		return err
	}
	s, err := m.lookup(name)
	if err != nil {
		return err
	}
	if err := s.mayContact(); err != nil {
		return err
	}
	var a Authorizer
	if s.authorizer != nil {
		a = s.authorizer()
	}
	signer, ok := a.(interface {
		SignIn(ctx context.Context, browser func(context.Context, string) (*url.URL, error)) error
	})
	if !ok {
		return fmt.Errorf("mcp: server %q has no Authorizer that signs in (ManagerOptions.Authorizer)", name)
	}
	if err := signer.SignIn(ctx, browser); err != nil {
		return fmt.Errorf("mcp: sign in to server %q: %w", name, err)
	}
	return m.Reconnect(ctx, name)
}

// needsAuthorization reports whether err is one a sign-in would cure: an
// Authorizer's error that says so (AuthorizationRequired), or a 401 or 403
// that reached the caller.
func needsAuthorization(err error) bool {
	var required interface{ AuthorizationRequired() bool }
	if errors.As(err, &required) && required.AuthorizationRequired() {
		return true
	}
	var ae *AuthorizerError
	return !errors.As(err, &ae) && authorizationFailed(err)
}

// Reconnect brings the server name back now: a connected server is
// disconnected and connected again, a reconnecting one skips the rest of
// its backoff, and a failed or pending one is started. It waits for the
// attempt as long as ctx allows and returns its error.
func (m *Manager) Reconnect(ctx context.Context, name string) error {
	if err := m.decideTrust(ctx); err != nil {
		return err
	}
	s, err := m.lookup(name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.running {
		changed := s.changed
		select {
		case s.kick <- struct{}{}:
		default:
		}
		s.mu.Unlock()
		// Wait for the kick to be seen, then for the attempt.
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		_, err := m.wait(ctx, s)
		return err
	}
	if (s.state == StateFailed || s.state == StateNeedsAuthorization) && (s.cfg == nil || s.cfg.Err == nil) {
		s.setState(StatePending, nil)
	}
	s.mu.Unlock()
	w := m.start(s)
	if w == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Errorf("mcp: server %q is %s: %w", name, s.state, s.err)
	}
	select {
	case <-w:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnected {
		return s.err
	}
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
	return m.cfg.pendingReason(name)
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *Manager) invalidate() {
	m.mu.Lock()
	m.routes = nil
	m.mu.Unlock()
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

// Tools connects servers not yet tried (see Connect) and returns the tools
// of every server, named mcp__<server>__<tool>; see ExposedName for the
// rules. A tool without a description is described as "MCP tool <tool>
// from <server>". A server being reconnected keeps its tools listed;
// servers that failed contribute none. The error is non-nil only when ctx
// ends or the Manager is closed.
func (m *Manager) Tools(ctx context.Context) ([]Tool, error) {
	if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
		return nil, err
	}
	tools, _ := m.table()
	return tools, nil
}

// table builds the merged tool list and the routing table. Exposed names
// are unique whatever the servers send: a tool a server lists twice is
// exposed once, names that would collide are all disambiguated with a hash
// of server and tool (see ExposedName), and every collision is reported in
// the Status of the servers involved.
func (m *Manager) table() ([]Tool, map[string]route) {
	m.mu.Lock()
	servers := m.sorted()
	m.mu.Unlock()
	type entry struct {
		s    *server
		tool Tool
		name string
	}
	var entries []entry
	count := map[string]int{}
	warn := map[*server][]string{}
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StateConnected || s.state == StateReconnecting {
			seen := map[string]bool{}
			for _, t := range s.tools {
				if seen[t.Name] {
					warn[s] = append(warn[s], fmt.Sprintf("the server lists tool %q more than once; the first is exposed", t.Name))
					continue
				}
				seen[t.Name] = true
				name := ExposedName(s.name, t.Name)
				entries = append(entries, entry{s, t, name})
				count[name]++
			}
		}
		s.mu.Unlock()
	}
	routes := make(map[string]route, len(entries))
	tools := make([]Tool, 0, len(entries))
	exposed := map[*server]int{}
	for _, e := range entries {
		name := e.name
		if count[name] > 1 || routes[name].server != nil {
			name = disambiguate(e.s.name, e.tool.Name, func(n string) bool { return routes[n].server != nil })
			warn[e.s] = append(warn[e.s], fmt.Sprintf("tool %q would be exposed as %q like another tool; exposed as %q", e.tool.Name, e.name, name))
			m.logger.Warn("mcp: tool names collide", "server", e.s.name, "tool", e.tool.Name, "exposed", name)
		}
		t := e.tool
		t.Name = name
		if t.Description == "" {
			t.Description = fmt.Sprintf("MCP tool %s from %s", e.tool.Name, e.s.name)
		}
		routes[name] = route{server: e.s, tool: e.tool.Name}
		tools = append(tools, t)
		exposed[e.s]++
	}
	for _, s := range servers {
		s.mu.Lock()
		s.warnings, s.exposed = warn[s], exposed[s]
		s.mu.Unlock()
	}
	m.mu.Lock()
	m.routes = routes
	m.mu.Unlock()
	return tools, routes
}

// CallTool calls a tool by its exposed name (as returned by Tools). The
// call is bounded by ctx and by ToolTimeout; a server being reconnected is
// waited for within the same bounds. A name no server exposes is an error
// matching ErrUnknownTool. A tool that ran and failed is a result with
// IsError set, as with Connection.CallTool.
func (m *Manager) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	var res *CallToolResult
	err := m.routeTool(ctx, name, func(ctx context.Context, conn *Connection, tool string) (err error) {
		res, err = conn.CallTool(ctx, tool, args)
		return err
	})
	return res, err
}

// StartToolTask starts the tool name (mcp__<server>__<tool>) as a task on
// its server, as Connection.StartToolTask does; the Task's methods go to
// that server. ToolTimeout bounds the start only: the task is followed
// with Task.Wait, under the caller's ctx.
func (m *Manager) StartToolTask(ctx context.Context, name string, args any) (*Task, error) {
	var t *Task
	err := m.routeTool(ctx, name, func(ctx context.Context, conn *Connection, tool string) (err error) {
		t, err = conn.StartToolTask(ctx, tool, args)
		return err
	})
	return t, err
}

// routeTool runs do with the connection and tool name of the exposed tool
// name, connecting its server if needed; ToolTimeout bounds it.
func (m *Manager) routeTool(ctx context.Context, name string, do func(ctx context.Context, conn *Connection, tool string) error) error {
	m.mu.Lock()
	closed, routes := m.closed, m.routes
	m.mu.Unlock()
	if closed {
		return ErrClosed
	}
	r, ok := routes[name]
	if !ok { // not connected yet, or the table is stale
		if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
			return err
		}
		_, routes = m.table()
		r, ok = routes[name]
	}
	if !ok {
		return fmt.Errorf("%w %q (list the tools with Tools)", ErrUnknownTool, name)
	}
	if m.opts.ToolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.ToolTimeout)
		defer cancel()
	}
	conn, err := m.wait(ctx, r.server)
	if err != nil {
		return err
	}
	if err := do(ctx, conn, r.tool); err != nil {
		return wrap(fmt.Sprintf("server %q", r.server.name), err)
	}
	return nil
}

// wait returns s's live connection, waiting while s is being connected or
// reconnected, as long as ctx allows.
func (m *Manager) wait(ctx context.Context, s *server) (*Connection, error) {
	for {
		s.mu.Lock()
		state, conn, err, changed := s.state, s.conn, s.err, s.changed
		s.mu.Unlock()
		switch {
		case state == StateConnected && conn != nil && conn.Err() == nil:
			return conn, nil
		case state == StateConnected && conn != nil:
			// Lost a moment ago: the supervisor is about to notice.
			select {
			case <-changed:
			case <-conn.Done():
				select {
				case <-changed:
				case <-ctx.Done():
					return nil, wrap(fmt.Sprintf("server %q", s.name), &closedError{cause: conn.Err()})
				}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case state == StateReconnecting || state == StatePending:
			select {
			case <-changed:
			case <-ctx.Done():
				return nil, fmt.Errorf("mcp: server %q is %s (last error: %v): %w", s.name, state, err, ctx.Err())
			case <-m.ctx.Done():
				return nil, ErrClosed
			}
		default:
			if err == nil {
				err = fmt.Errorf("server is %s", state)
			}
			return nil, wrap(fmt.Sprintf("server %q is not connected", s.name), err)
		}
	}
}

func backoff(base, ceiling time.Duration, failures int) time.Duration {
	d := base
	for i := 1; i < failures && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// toolsChanged refreshes s's tools after notifications/tools/list_changed.
// The listing waits refreshDelay for the rest of a burst, so a burst causes
// one listing, or two when notifications still come while the first runs.
func (m *Manager) toolsChanged(s *server) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	s.mu.Lock()
	if s.refreshing {
		s.dirty = true
		s.mu.Unlock()
		m.mu.Unlock()
		return
	}
	s.refreshing = true
	s.mu.Unlock()
	m.wg.Add(1)
	m.mu.Unlock()
	go m.refresh(s)
}

func (m *Manager) refresh(s *server) {
	defer m.wg.Done()
	delay := time.NewTimer(refreshDelay)
	defer delay.Stop()
	for {
		select {
		case <-delay.C:
		case <-m.ctx.Done(): // closing
			s.mu.Lock()
			s.refreshing = false
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		conn := s.conn
		s.dirty = false
		s.mu.Unlock()
		if conn != nil {
			ctx, cancel := context.WithTimeout(m.ctx, m.opts.ConnectTimeout)
			tools, err := conn.Tools(ctx)
			cancel()
			s.mu.Lock()
			if err == nil && s.conn == conn {
				s.tools = tools
			} else if err != nil {
				m.logger.Warn("mcp: could not refresh tools", "server", s.name, "err", err)
			}
			s.mu.Unlock()
			m.invalidate()
		}
		s.mu.Lock()
		if !s.dirty || m.ctx.Err() != nil {
			s.refreshing = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		delay.Reset(refreshDelay)
	}
}

// refreshDelay is how long a tools refresh waits for more of a burst of
// notifications/tools/list_changed.
const refreshDelay = 20 * time.Millisecond

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
			if a, ok := s.authorizer().(interface{ Method() string }); ok {
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
