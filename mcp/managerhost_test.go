package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A host can keep the keys of its environment from servers that were not
// given them.
func TestInheritEnvKeepsTheHostsKeysFromServers(t *testing.T) {
	t.Setenv("MCPLUG_HOST_SECRET", "s3cret")
	entry := map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"},
		"env": map[string]string{"MCPTEST_SCENARIO": "where", "GIVEN": "yes"}}
	tests := []struct {
		name     string
		inherit  []string
		want     []string
		wantNone []string
	}{
		{"nil inherits everything, as Claude Code", nil, []string{"MCPLUG_HOST_SECRET", "GIVEN", "PATH"}, nil},
		{"the TypeScript SDK's list", mcp.DefaultInheritedEnv, []string{"GIVEN", "PATH", "MCPTEST_SCENARIO"}, []string{"MCPLUG_HOST_SECRET"}},
		{"an empty list inherits nothing", []string{}, []string{"GIVEN", "MCPTEST_SCENARIO"}, []string{"MCPLUG_HOST_SECRET", "PATH"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			m := newManager(t, configOf(t, map[string]any{"e": entry}), &mcp.ManagerOptions{InheritEnv: tt.inherit})
			res, err := m.CallTool(ctxTimeout(t, 30*time.Second), "mcp__e__environ", nil)
			require.NoError(t, err)
			names := strings.Split(res.Text(), "\n")
			for _, n := range tt.want {
				assert.Contains(t, names, n)
			}
			for _, n := range tt.wantNone {
				assert.NotContains(t, names, n)
			}
		})
	}
}

type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

type bearer string

func (b bearer) Authorize(_ context.Context, r *http.Request) error {
	r.Header.Set("Authorization", "Bearer "+string(b))
	return nil
}
func (bearer) Challenged(context.Context, *http.Request, *http.Response) (bool, error) {
	return false, nil
}

// A config entry of type http can go through the program's own client
// (a proxy, a dialer), with an Authorizer on top.
func TestAnHTTPEntryTakesTheProgramsClientAndAnAuthorizer(t *testing.T) {
	noLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		(&mcptest.Server{}).ServeHTTP(w, r)
	}))
	defer srv.Close()
	rt := &countingTransport{}
	client := &http.Client{Transport: rt}
	var asked []string
	m := newManager(t, configOf(t, map[string]any{"h": map[string]any{"type": "http", "url": srv.URL + "/mcp"}}), &mcp.ManagerOptions{
		HTTPClient: func(name string, sc *config.Server) *http.Client {
			asked = append(asked, name)
			return client
		},
		Authorizer: func(string, *config.Server) mcp.Authorizer { return bearer("ok") },
	})
	_, err := m.CallTool(ctxTimeout(t, 30*time.Second), "mcp__h__echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	assert.Positive(t, rt.n.Load(), "the requests went through the program's client")
	assert.Contains(t, asked, "h")
}
