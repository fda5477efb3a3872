package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testdir"
	"github.com/mcplug/mcplug/mcp/config"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNothingReachesAnUnapprovedServer(t *testing.T) {
	noLeaks(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	home, project := testdir.Scratch(t)
	testdir.Write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"pending": {"type": "http", "url": "`+srv.URL+`/mcp"}, "rejected": {"type": "http", "url": "`+srv.URL+`/mcp"}}}`)
	testdir.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["rejected"]}`)
	cfg, err := mcp.LoadConfig(project)
	require.NoError(t, err)
	var built atomic.Int32
	m := newManager(t, cfg, &mcp.ManagerOptions{Authorizer: func(string, *config.Server) mcp.Authorizer {
		built.Add(1)
		return signer{}
	}})
	require.NoError(t, m.Connect(ctxTimeout(t, 5*time.Second)))
	m.Status()
	for _, name := range []string{"pending", "rejected"} {
		err := m.SignIn(ctxTimeout(t, 5*time.Second), name, func(context.Context, string) (*url.URL, error) {
			return nil, errors.New("the browser must not be opened")
		})
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), "browser must not", name)
	}
	assert.Zero(t, hits.Load(), "no request reached the server")
	assert.Zero(t, built.Load(), "no Authorizer was made for it")
}
