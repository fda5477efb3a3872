package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/registry"
)

// fakeRegistry serves the examples as a registry's v0.1 API does.
func fakeRegistry(t *testing.T, docs ...string) *httptest.Server {
	t.Helper()
	byName := map[string]*v0.ServerJSON{}
	for _, d := range docs {
		s := example(t, d)
		byName[s.Name] = s
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.EscapedPath()
		if path == "/v0.1/servers" {
			var list v0.ServerListResponse
			for _, s := range byName {
				if strings.Contains(s.Name, r.URL.Query().Get("search")) {
					list.Servers = append(list.Servers, v0.ServerResponse{Server: *s})
				}
			}
			list.Metadata.Count = len(list.Servers)
			json.NewEncoder(w).Encode(list)
			return
		}
		rest, ok := strings.CutPrefix(path, "/v0.1/servers/")
		name, version, ok2 := strings.Cut(rest, "/versions/")
		name, _ = url.PathUnescape(name)
		s := byName[name]
		if !ok || !ok2 || s == nil || (version != "latest" && version != s.Version) {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(v0.ServerResponse{Server: *s})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTheClientReadsARegistry(t *testing.T) {
	srv := fakeRegistry(t, "npm", "pypi")
	c := &registry.Client{BaseURL: srv.URL}
	ctx := context.Background()
	s, err := c.Get(ctx, "io.github.example/weather-mcp", "")
	require.NoError(t, err)
	assert.Equal(t, "0.5.0", s.Version)
	_, err = c.Get(ctx, "io.github.example/weather-mcp", "9.9.9")
	assert.ErrorIs(t, err, registry.ErrNotFound)
	found, err := c.Search(ctx, "weather", 10)
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, "io.github.example/weather-mcp", found[0].Server.Name)

	t.Run("an answer too large is refused", func(t *testing.T) {
		big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"server":{"name":"` + strings.Repeat("x", registry.MaxResponseSize) + `"}}`))
		}))
		defer big.Close()
		_, err := (&registry.Client{BaseURL: big.URL}).Get(ctx, "a/b", "")
		assert.ErrorContains(t, err, "larger than")
	})
	t.Run("an error quotes no query of the registry's URL", func(t *testing.T) {
		_, err := (&registry.Client{BaseURL: srv.URL + "/nowhere?key=s3cret"}).Get(ctx, "a/b", "1")
		require.Error(t, err)
		_, err = (&registry.Client{BaseURL: "http://127.0.0.1:1/x?key=s3cret"}).Get(ctx, "a/b", "1")
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "s3cret")
	})
	t.Run("an answer for another server is refused", func(t *testing.T) {
		_, err := (&registry.Client{BaseURL: srv.URL + "/v0.1/servers/io.github.example%2Fweather-mcp/versions/latest#"}).Get(ctx, "a/b", "")
		assert.Error(t, err)
	})
}

// stalling is an HTTP client whose registry answers 200 and then sends
// nothing more, until the request is given up.
func stalling() *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Request: r,
			Body: io.NopCloser(&trickle{ctx: r.Context(), first: []byte(`{"server":{"name":`)})}, nil
	})}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trickle gives its first bytes, then blocks until ctx is done.
type trickle struct {
	ctx   context.Context
	first []byte
}

func (b *trickle) Read(p []byte) (int, error) {
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func TestEveryRequestHasATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &registry.Client{BaseURL: "http://registry.invalid", HTTPClient: stalling()}
		start := time.Now()
		_, err := c.Get(context.Background(), "io.x/a", "")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, registry.DefaultTimeout, time.Since(start), "the default bounds a registry that trickles its answer")
		_, err = c.Search(context.Background(), "a", 10)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	synctest.Test(t, func(t *testing.T) {
		c := &registry.Client{BaseURL: "http://registry.invalid", HTTPClient: stalling(), Timeout: time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Get(ctx, "io.x/a", "")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 300*time.Millisecond, time.Since(start), "the caller's deadline when it is sooner")
		start = time.Now()
		_, err = c.Get(context.Background(), "io.x/a", "")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start), "the client's own timeout")
	})
}

func TestARegistryThatStallsIsGivenUpWhenTheCallerIs(t *testing.T) {
	sent := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"server":{"name":`))
		w.(http.Flusher).Flush()
		close(sent)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := (&registry.Client{BaseURL: srv.URL}).Get(ctx, "io.x/a", "")
		done <- err
	}()
	<-sent
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "registry: ")
}

func TestARedirectFromHTTPSToPlainHTTPIsNotFollowed(t *testing.T) {
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		w.Write([]byte(`{"server":{"name":"io.x/a","version":"1.0.0"}}`))
	}))
	defer plain.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	defer tls.Close()
	_, err := (&registry.Client{BaseURL: tls.URL, HTTPClient: tls.Client()}).Get(context.Background(), "io.x/a", "")
	require.ErrorIs(t, err, registry.ErrDowngrade)
	assert.Zero(t, plainHits.Load(), "the plain http server is never asked")

	t.Run("a redirect that stays on https is followed", func(t *testing.T) {
		target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"server":{"name":"io.x/a","version":"1.0.0"}}`))
		}))
		defer target.Close()
		hop := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
		}))
		defer hop.Close()
		hc := hop.Client()
		hc.Transport.(*http.Transport).TLSClientConfig.RootCAs.AddCert(target.Certificate())
		got, err := (&registry.Client{BaseURL: hop.URL, HTTPClient: hc}).Get(context.Background(), "io.x/a", "")
		require.NoError(t, err)
		assert.Equal(t, "io.x/a", got.Name)
	})
}
