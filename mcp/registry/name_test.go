package registry_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/registry"
)

// install plans the server.json text, names it among servers as an
// installer does, and adds its entry there under that name.
func install(t *testing.T, servers map[string]*config.Server, text string) (name string, passed []string) {
	t.Helper()
	p, err := registry.PlanFor(doc(t, text), nil)
	require.NoError(t, err)
	passed = p.ChooseName(servers)
	sc, err := p.Server()
	require.NoError(t, err)
	if _, ok := servers[p.Name]; !ok {
		servers[p.Name] = sc
	}
	return p.Name, passed
}

func remoteDoc(name, url string) string {
	return `{"name":"` + name + `","remotes":[{"type":"streamable-http","url":"` + url + `"}]}`
}

func TestServersThatMeetOnAConfigNameGetTwo(t *testing.T) {
	tests := []struct {
		name                  string
		first, second         string
		firstName, secondName string
	}{
		{"a vendor's servers under two subdomains", "com.x.docs/mcp", "com.x.api/mcp", "x-mcp", "x-api-mcp"},
		{"a GitHub account and a domain of the same name", "io.github.x/y", "com.x/y", "x-y", "com_x_y"},
		{"a dash that moves between owner and name", "io.github.a-b/c", "io.github.a/b-c", "a-b-c", "io_github_a_b-c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers := map[string]*config.Server{}
			name, passed := install(t, servers, remoteDoc(tt.first, "https://one.example/mcp"))
			require.Equal(t, tt.firstName, name, "a name no entry has is ConfigName's")
			assert.Empty(t, passed)
			name, passed = install(t, servers, remoteDoc(tt.second, "https://two.example/mcp"))
			assert.Equal(t, tt.secondName, name)
			assert.Equal(t, []string{tt.firstName}, passed, "the name passed over is said")
			assert.Len(t, servers, 2)
		})
	}
}

func TestTheSameServerMeetsItsOwnEntry(t *testing.T) {
	npm := func(version string) string {
		return `{"name":"com.x/mcp","packages":[{"registryType":"npm","identifier":"@x/mcp","version":"` + version + `","transport":{"type":"stdio"}}]}`
	}
	oci := func(tag string) string {
		return `{"name":"com.x/mcp","packages":[{"registryType":"oci","identifier":"docker.io/x/mcp:` + tag + `","transport":{"type":"stdio"}}]}`
	}
	tenant := `{"name":"com.x/mcp","remotes":[{"type":"streamable-http","url":"https://{tenant}.x.example/mcp","variables":{"tenant":{"default":"acme"}}}]}`
	tests := []struct{ name, installed, again string }{
		{"a remote installed twice", remoteDoc("com.x/mcp", "https://x.example/mcp"), remoteDoc("com.x/mcp", "https://x.example/mcp")},
		{"an npm package at another version", npm("1.0.0"), npm("1.1.0")},
		{"an image at another tag", oci("1.0.0"), oci("1.1.0")},
		{"a remote with another value in its URL's variable", strings.Replace(tenant, "acme", "other", 1), tenant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers := map[string]*config.Server{}
			first, _ := install(t, servers, tt.installed)
			require.Equal(t, "x-mcp", first)
			name, passed := install(t, servers, tt.again)
			assert.Equal(t, "x-mcp", name, "the name of its own entry, which the config refuses as existing")
			assert.Empty(t, passed)
			assert.Len(t, servers, 1)
		})
	}
	t.Run("another package under the name is another server", func(t *testing.T) {
		servers := map[string]*config.Server{}
		install(t, servers, npm("1.0.0"))
		name, _ := install(t, servers, strings.Replace(npm("1.0.0"), "@x/mcp", "@x/mcp-two", 1))
		assert.Equal(t, "com_x_mcp", name)
	})
}

func TestTheLongerNamesAreValidBoundedAndDistinct(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	long := "com.example." + strings.Repeat("sub.", 30) + "x/" + strings.Repeat("y", 100)
	seen := map[string]string{}
	for _, name := range []string{long, long + "z", "io.github.a-b/c", "io.github.a/b-c", "com.x.docs/mcp", "com.x/docs.mcp", "com.x/docs_mcp"} {
		names := registry.ConfigNames(name)
		require.NotEmpty(t, names)
		assert.Equal(t, registry.ConfigName(name), names[0], "the short name first")
		for _, n := range names[1:] {
			assert.Regexp(t, valid, n, name)
			assert.LessOrEqual(t, len(n), registry.MaxConfigName, name)
		}
		last := names[len(names)-1]
		assert.NotContains(t, seen, last, "%s and %s", name, seen[last])
		seen[last] = name
	}
}

func TestEveryNameOfAServerIsTakenBeforeItIsNumbered(t *testing.T) {
	text := remoteDoc("io.github.a/b-c", "https://two.example/mcp")
	servers := map[string]*config.Server{}
	for _, n := range registry.ConfigNames("io.github.a/b-c") {
		servers[n] = &config.Server{Type: config.TypeHTTP, URL: "https://other.example/mcp"}
	}
	name, passed := install(t, servers, text)
	assert.Len(t, passed, len(registry.ConfigNames("io.github.a/b-c")))
	assert.Equal(t, passed[len(passed)-1]+"-2", name)
}

// An entry of another server is not this one's because a server.json
// says what could describe it: a remote whose host or whole URL is a
// {variable}, or whose variable stands before a public suffix; a package
// named as another package's argument or as a runner option's value; a
// package that cannot be installed. The server takes a name of its own,
// and the other's stays the other's.
func TestAnotherServersEntryIsNotTakenForThisOnes(t *testing.T) {
	withVariable := func(url, variable string) string {
		return `{"type":"streamable-http","url":"` + url + `","variables":{"` + variable + `":{"isRequired":true}}}`
	}
	remotes := func(list ...string) string {
		return `{"name":"com.x/mcp","remotes":[` + strings.Join(list, ",") + `]}`
	}
	pkg := func(typ, id string) string {
		return `{"name":"com.x/mcp","packages":[{"registryType":"` + typ + `","identifier":"` + id + `","version":"1.0.0","transport":{"type":"stdio"}}]}`
	}
	remote := &config.Server{Type: config.TypeHTTP, URL: "https://mcp.other.com/mcp"}
	tests := []struct {
		name, server string
		theirs       *config.Server
	}{
		{"a remote whose host is a variable", remotes(withVariable("https://{host}/mcp", "host")), remote},
		{"a remote whose URL is a variable, beside one installed", remotes(withVariable("{url}", "url"), `{"type":"streamable-http","url":"https://x.example/mcp"}`), remote},
		{"a remote whose variable stands before a public suffix", remotes(withVariable("https://{name}.com/mcp", "name")), remote},
		{"an npm package named as another's argument", pkg("npm", "somedir"),
			&config.Server{Type: config.TypeStdio, Command: "npx", Args: []string{"-y", "@other/mcp@1.0.0", "somedir"}}},
		{"a PyPI package named as the value of an option of uvx", pkg("pypi", "3.12"),
			&config.Server{Type: config.TypeStdio, Command: "uvx", Args: []string{"--python", "3.12", "other-mcp"}}},
		{"an image named as the value of an option of docker", pkg("oci", "host:1.0.0"),
			&config.Server{Type: config.TypeStdio, Command: "docker", Args: []string{"run", "-i", "--rm", "--network", "host", "other/mcp:1.0.0"}}},
		{"a package that cannot be installed, beside a remote",
			`{"name":"com.x/mcp","packages":[{"registryType":"npm","identifier":"-y","version":"1.0.0","transport":{"type":"stdio"}}],"remotes":[{"type":"streamable-http","url":"https://x.example/mcp"}]}`,
			&config.Server{Type: config.TypeStdio, Command: "npx", Args: []string{"-y", "@other/mcp@1.0.0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := registry.PlanFor(doc(t, tt.server), nil)
			require.NoError(t, err)
			assert.False(t, p.Installs(tt.theirs))
			passed := p.ChooseName(map[string]*config.Server{"x-mcp": tt.theirs})
			assert.Equal(t, "com_x_mcp", p.Name)
			assert.Equal(t, []string{"x-mcp"}, passed, "the other server's name is said")
		})
	}
}

// Every name a server may take is one Claude Code takes, of at most
// MaxConfigName bytes, and none starts with '-' (a command line would
// read it as an option): ConfigName's of a long registry name, the
// longer names of one made of what a name cannot hold, and the numbered
// name of a long one whose every name is taken.
func TestEveryNameIsValidAndBounded(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9_-]*$`)
	long := "com.x/" + strings.Repeat("y", 150)
	for _, name := range []string{long, "io.github." + strings.Repeat("a", 100) + "/b", "", "/", "..../....", "com.x/ü"} {
		names := append(registry.ConfigNames(name), registry.ConfigName(name))
		for _, n := range names {
			assert.Regexp(t, valid, n, "%q", name)
			assert.LessOrEqual(t, len(n), registry.MaxConfigName, "%q", name)
		}
	}
	servers := map[string]*config.Server{}
	for _, n := range registry.ConfigNames(long) {
		servers[n] = &config.Server{Type: config.TypeHTTP, URL: "https://other.example/mcp"}
	}
	for range 2 {
		name, _ := install(t, servers, remoteDoc(long, "https://x.example/mcp"))
		assert.Regexp(t, valid, name)
		assert.LessOrEqual(t, len(name), registry.MaxConfigName)
		servers[name] = &config.Server{Type: config.TypeHTTP, URL: "https://other.example/mcp"}
	}
}
