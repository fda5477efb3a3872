package mcp

// A Manager's trust in the workspace and approval of project servers:
// decided once, before any server starts.

import (
	"context"
	"fmt"

	"github.com/mcplug/mcplug/mcp/config"
)

// decideTrust asks TrustWorkspace about the workspace of a LoadConfig
// config that the user's settings do not trust, once, before any server of
// it starts; when it trusts, the config's servers are made anew as the
// trusted workspace has them. Concurrent callers wait for the one
// decision, as long as their ctx allows; a decision cut short by its ctx
// is asked again next time.
func (m *Manager) decideTrust(ctx context.Context) error {
	for {
		m.mu.Lock()
		if m.trustDecided || m.opts.TrustWorkspace == nil || m.cfg == nil || m.cfg.Workspace == nil || m.cfg.Workspace.Trusted {
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
		trusted := m.cfg.Trusted()
		if trusted == m.cfg { // not Load's: trust would change nothing, so nothing is asked
			m.trustDecided = true
			m.mu.Unlock()
			return nil
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
			m.cfg = trusted
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
	var approvedServers []string
	for _, s := range servers {
		s.mu.Lock()
		if s.approved {
			approvedServers = append(approvedServers, s.name)
		}
		s.mu.Unlock()
	}
	return approvedServers
}

// approve decides on a project server the settings left open, by asking
// ApproveServer.
func (m *Manager) approve(s *server) bool {
	s.mu.Lock()
	ask := s.cfg != nil && s.cfg.Scope == config.ScopeProject && s.cfg.Approval != config.Approved && !s.approved
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

// Approve approves the project server name for this Manager's life (see
// config.SaveApproval to remember it) and, when it waited for approval, lets the
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
