package mcp

// A Manager's supervisor: each server is started on first use, kept
// connected, and reconnected with backoff when it goes away.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcplug/mcplug/mcp/config"
)

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
	if s.cfg != nil && s.cfg.Scope == config.ScopeProject && s.cfg.Approval != config.Approved && !s.approved {
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
				m.logger.Debug("mcp: server needs authorization", "server", s.name, "err", err) // Connect returns it, Status shows it
				return
			}
			if first { // a server that never worked is not retried on its own
				s.running = false
				s.setState(StateFailed, err)
				s.mu.Unlock()
				m.logger.Debug("mcp: server failed", "server", s.name, "err", err) // Connect returns it, Status shows it
				return
			}
			failures++
			s.version = "" // perhaps it is another server now: probe again
			s.setState(StateReconnecting, err)
			s.mu.Unlock()
			m.logger.Debug("mcp: could not reconnect server", "server", s.name, "attempt", failures, "err", err) // the loss was logged; Status shows the last error
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
			asked := false
			select {
			case <-conn.Done():
			case <-kick:
				asked = true
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
			switch {
			case asked && conn.Err() == nil:
				m.logger.Debug("mcp: reconnecting on request", "server", s.name) // the program asked: Reconnect returns how it went
			case conn.endTold.Load():
				// A call in flight failed with the cause: the program has it.
				m.logger.Debug("mcp: server lost; reconnecting", "server", s.name, "err", cause)
			default:
				m.logger.Warn("mcp: server lost; reconnecting", "server", s.name, "err", cause)
			}
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
	release, err := m.startSlot(s)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.ConnectTimeout) // from the server's own start
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
	if opts.Extensions == nil {
		opts.Extensions = m.opts.Extensions
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
		s.views.drop("")
		m.toolsChanged(s)
		if theirs != nil {
			theirs(c)
		}
	}
	theirResources := opts.ResourceListChanged
	opts.ResourceListChanged = func(c *Connection) {
		s.views.drop("")
		if theirResources != nil {
			theirResources(c)
		}
	}
	theirUpdate := opts.ResourceUpdated
	opts.ResourceUpdated = func(c *Connection, uri string) {
		s.views.drop(uri)
		if theirUpdate != nil {
			theirUpdate(c, uri)
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

func (m *Manager) invalidate() {
	m.mu.Lock()
	m.routes = nil
	m.mu.Unlock()
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
