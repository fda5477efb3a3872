package mcp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// countingAuthorizer grants "token-N" at the Nth challenge, or fails with
// err.
type countingAuthorizer struct {
	mu         sync.Mutex
	challenges int
	err        error
}

func (a *countingAuthorizer) Authorize(ctx context.Context, req *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.challenges > 0 {
		req.Header.Set("Authorization", "Bearer token-"+string(rune('0'+a.challenges)))
	}
	return nil
}

func (a *countingAuthorizer) Challenged(ctx context.Context, req *http.Request, resp *http.Response) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.challenges++
	return a.err == nil, a.err
}

func TestAuthorizer(t *testing.T) {
	// guarded answers 401 until it sees the token it wants, and records
	// the bodies of the requests it refused.
	guarded := func(want string) (*httptest.Server, *[]string) {
		var mu sync.Mutex
		var bodies []string
		srv := &mcptest.Server{}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+want {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				w.Header().Set("WWW-Authenticate", `Bearer scope="x"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		return ts, &bodies
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("a request refused is sent again, body and all, with the new credentials", func(t *testing.T) {
		ts, bodies := guarded("token-1")
		a := &countingAuthorizer{}
		c, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: ts.URL, Auth: a}, nil)
		require.NoError(t, err)
		defer c.Close()
		res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
		require.NoError(t, err)
		assert.Equal(t, "hi", res.Text())
		assert.Equal(t, 1, a.challenges)
		require.NotEmpty(t, *bodies)
		assert.Contains(t, (*bodies)[0], `"method"`, "the refused request had its body")
	})
	t.Run("at most two new credentials for one request", func(t *testing.T) {
		ts, bodies := guarded("never")
		a := &countingAuthorizer{}
		_, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: ts.URL, Auth: a}, nil)
		var status *mcp.HTTPStatusError
		require.ErrorAs(t, err, &status)
		assert.Equal(t, http.StatusUnauthorized, status.StatusCode)
		assert.Contains(t, status.Header.Get("WWW-Authenticate"), "Bearer")
		require.Positive(t, a.challenges)
		assert.Zero(t, a.challenges%2, "two challenges per request")
		assert.Len(t, *bodies, a.challenges/2*3, "each request sent three times, no more")
	})
	t.Run("the Authorizer's error fails the request, matchable", func(t *testing.T) {
		ts, _ := guarded("never")
		sentinel := errors.New("no user at the keyboard")
		_, err := mcp.Connect(ctx, &mcp.StreamableHTTPTransport{URL: ts.URL, Auth: &countingAuthorizer{err: sentinel}}, nil)
		assert.ErrorIs(t, err, sentinel)
	})
}
