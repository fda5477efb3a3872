package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
	"github.com/modelcontextprotocol/registry/pkg/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/registry"
)

// example is a server.json of the registry repository's documentation
// (docs/reference/server-json/generic-server-json.md, v1.8.9).
func example(t *testing.T, name string) *v0.ServerJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(t, err)
	var s v0.ServerJSON
	require.NoError(t, json.Unmarshal(b, &s))
	return &s
}

func TestAServerJSONBecomesAnEntry(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		remote  bool
		answers map[string]string
		want    config.Server
		local   string
		secret  []string
	}{
		{"npm", "npm", false, map[string]string{"BRAVE_API_KEY": "k"},
			config.Server{Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search@1.0.2"}, Env: map[string]string{"BRAVE_API_KEY": "k"}}, "brave-search", []string{"BRAVE_API_KEY"}},
		{"PyPI, with its runtime hint and a default", "pypi", false, map[string]string{"WEATHER_API_KEY": "w"},
			config.Server{Type: "stdio", Command: "uvx", Args: []string{"weather-mcp-server@0.5.0"}, Env: map[string]string{"WEATHER_API_KEY": "w", "WEATHER_UNITS": "celsius"}}, "weather-mcp", []string{"WEATHER_API_KEY"}},
		{"OCI, with runtime and package arguments and variables", "oci", false, map[string]string{"db_type": "postgres", "database_name": "shop", "DB_USERNAME": "u", "DB_PASSWORD": "p"},
			config.Server{Type: "stdio", Command: "docker", Args: []string{"run", "-i", "--rm", "--network", "host", "-e", "DB_TYPE=postgres", "-e", "DB_PASSWORD", "-e", "DB_USERNAME", "-e", "SSL_MODE", "docker.io/example/database-manager-mcp:3.1.0", "--host", "localhost", "shop"},
				Env: map[string]string{"DB_PASSWORD": "p", "DB_USERNAME": "u", "SSL_MODE": "prefer"}}, "database-manager", []string{"DB_PASSWORD"}},
		{"a remote", "remote", false, nil, config.Server{Type: "http", URL: "https://mcp-fs.anonymous.modelcontextprotocol.io/http"}, "mcp-fs", nil},
		{"remotes first when asked", "npm-and-remotes", true, map[string]string{"Authorization": "Bearer t"}, config.Server{Type: "http", URL: "https://mcp.anonymous.modelcontextprotocol.io/http", Headers: map[string]string{"X-API-Key": ""}}, "hybrid-mcp", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := registry.PlanFor(example(t, tt.doc), &registry.Options{Remote: tt.remote})
			require.NoError(t, err)
			assert.Equal(t, tt.local, p.Name)
			for _, in := range p.Inputs {
				in.Value = tt.answers[in.Name]
			}
			sc, err := p.Server()
			if tt.doc == "npm-and-remotes" {
				// Its header is required and was not given.
				require.Error(t, err)
				assert.Contains(t, err.Error(), "required")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.Type, sc.Type)
			assert.Equal(t, tt.want.Command, sc.Command)
			assert.Equal(t, tt.want.Args, sc.Args)
			assert.Equal(t, tt.want.Env, emptyNil(sc.Env))
			assert.Equal(t, tt.want.URL, sc.URL)
			for _, s := range tt.secret {
				assert.True(t, p.Secret(s), s)
			}
		})
	}
}

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func tooMany(t *testing.T) *v0.ServerJSON {
	s := example(t, "npm")
	for i := range registry.MaxInputs {
		s.Packages[0].EnvironmentVariables = append(s.Packages[0].EnvironmentVariables, model.KeyValueInput{Name: fmt.Sprint("V", i)})
	}
	return s
}

func TestWhatCannotBeInstalledIsRefusedWithAReason(t *testing.T) {
	noVersion := example(t, "npm")
	noVersion.Packages[0].Version = ""
	untagged := example(t, "oci")
	untagged.Packages[0].Identifier = "docker.io/example/database-manager-mcp"
	tests := []struct {
		name string
		s    *v0.ServerJSON
		why  string
	}{
		{"a Cargo package", example(t, "cargo"), `of type "cargo"`},
		{"an MCP bundle", example(t, "mcpb"), `of type "mcpb"`},
		{"an npm package without a version", noVersion, "has no version"},
		{"an image without a tag", untagged, "has no tag"},
		{"nothing to run", &v0.ServerJSON{Name: "io.x/empty"}, "no packages and no remotes"},
		{"too many questions", tooMany(t), "asks for 65 inputs, more than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.PlanFor(tt.s, nil)
			require.ErrorIs(t, err, registry.ErrUnsupported)
			assert.Contains(t, err.Error(), tt.why)
		})
	}
	t.Run("a required input not given", func(t *testing.T) {
		p, err := registry.PlanFor(example(t, "npm"), nil)
		require.NoError(t, err)
		_, err = p.Server()
		assert.ErrorContains(t, err, "BRAVE_API_KEY is required")
	})
	t.Run("an answer not among the choices", func(t *testing.T) {
		p, err := registry.PlanFor(example(t, "oci"), nil)
		require.NoError(t, err)
		for _, in := range p.Inputs {
			in.Value = "x"
		}
		_, err = p.Server()
		assert.ErrorContains(t, err, "must be one of postgres")
	})
}

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
