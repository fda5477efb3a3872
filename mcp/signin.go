package mcp

// Signing in to a Manager's remote servers that ask for authorization.

import (
	"context"
	"fmt"
	"net/url"
)

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
	signer, ok := a.(SignInAuthorizer)
	if !ok {
		return fmt.Errorf("mcp: server %q has no Authorizer that signs in (ManagerOptions.Authorizer)", name)
	}
	if err := signer.SignIn(ctx, browser); err != nil {
		return fmt.Errorf("mcp: sign in to server %q: %w", name, err)
	}
	return m.Reconnect(ctx, name)
}
