package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

	// RestartBackoff is the least time between a server's crash and its
	// restart; it doubles with each crash, up to 30 s. Zero means 250 ms.
	RestartBackoff time.Duration

	// ClientInfo and Logger are passed to every Connection (see Options).
	ClientInfo *Implementation
	Logger     *slog.Logger
}

// State is a server's state in a Manager.
type State string

const (
	StatePending   State = "pending"   // not connected yet (Manager connects lazily)
	StateConnected State = "connected" // connected, tools listed
	StateFailed    State = "failed"    // config error, start or handshake failure, or a crash
	StateDisabled  State = "disabled"  // "disabled": true in config
)

// ServerStatus describes one server of a Manager.
type ServerStatus struct {
	Name       string
	State      State
	Transport  string // "stdio", "http", "sse", or "custom" for Manager.Add
	Source     string // the config file, if any
	Err        error  // why the server failed: a *ConfigError, an *ExitError, a timeout, …
	Tools      int    // tools exposed
	ServerInfo Implementation
	Warnings   []string // e.g. tool names that collided and were disambiguated
}

// Manager owns many named servers and exposes their tools as one list, each
// tool named mcp__<server>__<tool>. It connects servers lazily (on the first
// Connect, Tools or CallTool) and in parallel; one server failing never
// affects the others. A Manager is safe for concurrent use.
//
// A stdio server that crashes is restarted on the next call to one of its
// tools, once per crash and no sooner than RestartBackoff after it; the
// call that saw the crash fails with the crash's error. A server's
// notifications/tools/list_changed refreshes its tools in the background.
type Manager struct {
	opts   ManagerOptions
	logger *slog.Logger
	ctx    context.Context // ends at Close; bounds background refreshes
	cancel context.CancelFunc
	wg     sync.WaitGroup // background refreshes

	mu      sync.Mutex
	servers map[string]*server
	closed  bool
	routes  map[string]route
}

type route struct {
	server *server
	tool   string
}

// server is one named server of a Manager.
type server struct {
	name      string
	kind      string
	source    string
	transport func() (Transport, error)

	connecting sync.Mutex // serialises connects and restarts

	mu          sync.Mutex
	state       State
	conn        *Connection
	err         error
	tools       []Tool // last listed; nil before the first listing
	crashes     int
	crashedAt   time.Time
	mayRestart  bool
	refreshing  bool
	dirty       bool
	warnings    []string
	exposed     int
	attemptDone chan struct{}
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
	m.logger = m.opts.Logger
	if m.logger == nil {
		m.logger = slog.Default()
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if cfg != nil {
		for _, name := range cfg.Names() {
			sc := cfg.Servers[name]
			s := &server{name: name, kind: sc.Type, source: sc.Source, state: StatePending}
			switch {
			case sc.Err != nil:
				s.state, s.err = StateFailed, sc.Err
			case sc.Disabled:
				s.state = StateDisabled
			}
			s.transport = func() (Transport, error) {
				t, err := sc.Transport()
				switch tt := t.(type) {
				case *CommandTransport:
					tt.ShutdownTimeout = m.opts.ShutdownTimeout
					tt.Logger = m.logger.With("server", name)
				case *StreamableHTTPTransport:
					tt.Logger = m.logger.With("server", name)
				case *SSETransport:
					tt.Logger = m.logger.With("server", name)
				}
				return t, err
			}
			m.servers[name] = s
		}
	}
	return m
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

// Add adds a server reached through t. A restart after a crash calls
// t.Connect again, so t should be able to connect more than once (a
// TransportFunc that builds a new CommandTransport each time, say). Add
// fails for a name already in use and after Close.
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
	m.servers[name] = &server{name: name, kind: "custom", state: StatePending,
		transport: func() (Transport, error) { return t, nil }}
	m.routes = nil
	return nil
}

// Connect connects every server not yet tried, in parallel, each bounded by
// ConnectTimeout, and waits for them (or for ctx). It returns the errors of
// the servers that failed, joined; the others are usable whatever it
// returns. Calling it again does not retry failed servers.
func (m *Manager) Connect(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	servers := m.sorted()
	m.mu.Unlock()

	var waits []chan struct{}
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StatePending && s.attemptDone == nil { // not tried yet
			s.attemptDone = make(chan struct{})
			go func(done chan struct{}) {
				defer close(done)
				m.connectServer(ctx, s)
			}(s.attemptDone)
		}
		if s.attemptDone != nil {
			waits = append(waits, s.attemptDone)
		}
		s.mu.Unlock()
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

// connectServer starts s and lists its tools, bounded by ConnectTimeout.
func (m *Manager) connectServer(ctx context.Context, s *server) error {
	s.connecting.Lock()
	defer s.connecting.Unlock()
	ctx, cancel := context.WithTimeout(ctx, m.opts.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // Close cancels connects in flight
	defer stop()
	conn, tools, err := m.dial(ctx, s)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && m.isClosed() {
		conn.Close()
		err = ErrClosed
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("mcp: server %q did not start within %v (raise MCP_TIMEOUT): %w", s.name, m.opts.ConnectTimeout, err)
		}
		s.state, s.err, s.conn = StateFailed, err, nil
		m.logger.Warn("mcp: server failed", "server", s.name, "err", err)
		return err
	}
	s.state, s.err, s.conn, s.tools = StateConnected, nil, conn, tools
	m.invalidate()
	return nil
}

func (m *Manager) dial(ctx context.Context, s *server) (*Connection, []Tool, error) {
	t, err := s.transport()
	if err != nil {
		return nil, nil, err
	}
	conn, err := Connect(ctx, t, &Options{
		ClientInfo:      m.opts.ClientInfo,
		Logger:          m.logger.With("server", s.name),
		ToolListChanged: func(*Connection) { m.toolsChanged(s) },
	})
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
// from <server>". Servers that failed contribute no tools; the error is
// non-nil only when ctx ends or the Manager is closed.
func (m *Manager) Tools(ctx context.Context) ([]Tool, error) {
	if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
		return nil, err
	}
	tools, _ := m.table()
	return tools, nil
}

// table builds the merged tool list and the routing table.
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
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StateConnected || (s.state == StateFailed && s.mayRestart) {
			for _, t := range s.tools {
				name := ExposedName(s.name, t.Name)
				entries = append(entries, entry{s, t, name})
				count[name]++
			}
		}
		s.warnings, s.exposed = nil, 0
		s.mu.Unlock()
	}
	routes := make(map[string]route, len(entries))
	tools := make([]Tool, 0, len(entries))
	for _, e := range entries {
		name := e.name
		if count[name] > 1 {
			name = disambiguate(e.s.name, e.tool.Name)
			warning := fmt.Sprintf("tool %q would be exposed as %q like another tool; exposed as %q", e.tool.Name, e.name, name)
			m.logger.Warn("mcp: tool names collide", "server", e.s.name, "tool", e.tool.Name, "exposed", name)
			e.s.mu.Lock()
			e.s.warnings = append(e.s.warnings, warning)
			e.s.mu.Unlock()
		}
		t := e.tool
		t.Name = name
		if t.Description == "" {
			t.Description = fmt.Sprintf("MCP tool %s from %s", e.tool.Name, e.s.name)
		}
		routes[name] = route{server: e.s, tool: e.tool.Name}
		tools = append(tools, t)
		e.s.mu.Lock()
		e.s.exposed++
		e.s.mu.Unlock()
	}
	m.mu.Lock()
	m.routes = routes
	m.mu.Unlock()
	return tools, routes
}

// CallTool calls a tool by its exposed name (as returned by Tools). The
// call is bounded by ctx and by ToolTimeout. A name no server exposes is an
// error matching ErrUnknownTool. A tool that ran and failed is a result with
// IsError set, as with Connection.CallTool.
func (m *Manager) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	m.mu.Lock()
	closed, routes := m.closed, m.routes
	m.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	r, ok := routes[name]
	if !ok { // not connected yet, or the table is stale
		if err := m.Connect(ctx); err != nil && (ctx.Err() != nil || m.isClosed()) {
			return nil, err
		}
		_, routes = m.table()
		r, ok = routes[name]
	}
	if !ok {
		return nil, fmt.Errorf("%w %q (list the tools with Tools)", ErrUnknownTool, name)
	}
	conn, err := m.live(ctx, r.server)
	if err != nil {
		return nil, err
	}
	if m.opts.ToolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.opts.ToolTimeout)
		defer cancel()
	}
	res, err := conn.CallTool(ctx, r.tool, args)
	if err != nil {
		if conn.Err() != nil {
			m.crashed(r.server, conn)
		}
		return nil, wrap(fmt.Sprintf("server %q", r.server.name), err)
	}
	return res, nil
}

// live returns s's connection, restarting s first if it crashed and may
// restart.
func (m *Manager) live(ctx context.Context, s *server) (*Connection, error) {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil && conn.Err() == nil {
		return conn, nil
	}
	if conn != nil {
		m.crashed(s, conn)
	}
	s.connecting.Lock()
	s.mu.Lock()
	if s.conn != nil && s.conn.Err() == nil { // restarted by another call meanwhile
		conn := s.conn
		s.mu.Unlock()
		s.connecting.Unlock()
		return conn, nil
	}
	if s.state != StateFailed || !s.mayRestart || s.kind == TypeHTTP || s.kind == TypeSSE {
		err := s.err
		state := s.state
		s.mu.Unlock()
		s.connecting.Unlock()
		if err == nil {
			err = fmt.Errorf("server is %s", state)
		}
		return nil, wrap(fmt.Sprintf("server %q is not connected", s.name), err)
	}
	s.mayRestart = false // one restart per crash
	wait := time.Until(s.crashedAt.Add(backoff(m.opts.RestartBackoff, s.crashes)))
	s.mu.Unlock()
	s.connecting.Unlock()

	if wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			s.mu.Lock()
			s.mayRestart = true // the restart did not happen; the next call may try
			s.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	m.logger.Info("mcp: restarting server after a crash", "server", s.name, "crashes", s.crashes)
	if err := m.connectServer(ctx, s); err != nil {
		return nil, wrap(fmt.Sprintf("server %q: restart failed", s.name), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn, nil
}

func backoff(base time.Duration, crashes int) time.Duration {
	d := base
	for i := 1; i < crashes && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

// crashed records that conn, s's connection, ended without Close.
func (m *Manager) crashed(s *server, conn *Connection) {
	s.mu.Lock()
	if s.conn != conn {
		s.mu.Unlock()
		return // already recorded
	}
	s.state, s.err, s.conn = StateFailed, conn.Err(), nil
	s.crashes++
	s.crashedAt = time.Now()
	s.mayRestart = true
	s.mu.Unlock()
	m.logger.Warn("mcp: server crashed", "server", s.name, "err", conn.Err())
	conn.Close() // the process has exited: this only reaps it
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
		st := ServerStatus{Name: s.name, State: s.state, Transport: s.kind, Source: s.source,
			Err: s.err, Tools: s.exposed, Warnings: slices.Clone(s.warnings)}
		if s.conn != nil {
			if err := s.conn.Err(); err != nil && s.state == StateConnected {
				st.State, st.Err = StateFailed, err
			}
			st.ServerInfo = s.conn.InitializeResult().ServerInfo
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Close closes every connection in parallel and waits for them and for
// background refreshes; each close is bounded (see CommandTransport). It
// returns the close errors, joined. Later calls to the Manager fail with
// ErrClosed; Close itself is idempotent.
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
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.connecting.Lock() // wait out a connect in flight
			defer s.connecting.Unlock()
			s.mu.Lock()
			conn := s.conn
			s.conn = nil
			if s.state == StateConnected {
				s.state, s.err = StateFailed, ErrClosed
			}
			s.mu.Unlock()
			if conn != nil {
				if err := conn.Close(); err != nil {
					errs[i] = fmt.Errorf("server %q: %w", s.name, err)
				}
			}
		}()
	}
	wg.Wait()
	m.wg.Wait()
	return errors.Join(errs...)
}
