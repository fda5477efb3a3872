package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policyOf loads the policy of a managed-settings.json holding settings.
func policyOf(t *testing.T, settings string) *config.Policy {
	t.Helper()
	dir := t.TempDir()
	config.SetManagedDir(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "managed-settings.json"), []byte(settings), 0o644))
	p, err := config.LoadPolicy()
	require.NoError(t, err)
	return p
}

func remote(url string) *config.Server {
	return &config.Server{Name: "r", Type: config.TypeHTTP, URL: url}
}

// Each URL a policy decides on, the decision, and why it must be so.
type urlCase struct {
	url   string
	allow bool
	why   string
}

func checkURLs(t *testing.T, settings string, cases []urlCase) {
	t.Helper()
	p := policyOf(t, settings)
	for _, c := range cases {
		ok, why := p.Allows(remote(c.url))
		assert.Equal(t, c.allow, ok, "%s: %s (%s)", c.url, c.why, why)
	}
}

func TestAHostWildcardStaysInTheHost(t *testing.T) {
	checkURLs(t, `{"allowedMcpServers":[{"serverUrl":"https://*.corp.example/*"}]}`, []urlCase{
		{"https://api.corp.example/mcp", true, "a host of the domain"},
		{"https://a.b.corp.example/mcp", true, "a host '*' spans dots, as in Claude Code"},
		{"https://API.Corp.Example:443/x?y=1#z", true, "case, the default port, a query under a path '*', a fragment"},
		{"https://api.corp.example./mcp", true, "the trailing dot of a fully qualified name"},
		{"https://api.corp.example", true, "no path is the path /"},
		{"https://user:pw@api.corp.example/mcp", true, "user information is not compared"},
		{"https://api.corp.example:8443/mcp", true, "a host '*' without a port admits any port, as in Claude Code"},
		{"https://evil.test/.corp.example/mcp", false, "the '*' must not cross the '/' into the path"},
		{"https://evil.test?.corp.example/mcp", false, "nor a '?' into the query"},
		{"https://evil.test#.corp.example/mcp", false, "nor a '#' into the fragment"},
		{"https://api.corp.example@evil.test/mcp", false, "nor an '@': the host is evil.test"},
		{"https://evil.test:443.corp.example/mcp", false, "nor a ':'"},
		{"https://evil.test\\.corp.example/mcp", false, "a backslash, which browsers read as '/'"},
		{"https://evil.test%2f.corp.example/mcp", false, "a percent-encoded '/' in the host"},
		{"https://api.corp.example.evil.test/mcp", false, "the domain must end the host"},
		{"https://corp.example/mcp", false, "'*.' needs a label before the domain, as in Claude Code"},
		{"http://api.corp.example/mcp", false, "another scheme"},
		{"https:///.corp.example/mcp", false, "no host"},
		{"not a url", false, "not a URL"},
	})
}

func TestADeniedHostIsDeniedHoweverItIsSpelt(t *testing.T) {
	checkURLs(t, `{"deniedMcpServers":[{"serverUrl":"https://evil.test/*"}]}`, []urlCase{
		{"https://evil.test/mcp", false, "as written"},
		{"https://EVIL.test/mcp", false, "the host in capitals"},
		{"HTTPS://evil.test/mcp", false, "the scheme in capitals"},
		{"https://evil.test./mcp", false, "a trailing dot"},
		{"https://evil.test:443/mcp", false, "the default port"},
		{"https://evil.test:0443/mcp", false, "the default port with a leading zero"},
		{"https://evil.test:8443/mcp", false, "a deny pattern without a port denies every port of its host"},
		{"https://user@evil.test/mcp", false, "a user name"},
		{"https://user:pw@evil.test/mcp", false, "a user and password"},
		{"https://good.example@evil.test/mcp", false, "a user name that looks like a host"},
		{"https://evil.test", false, "no path"},
		{"https://evil.test/mcp?x=1#f", false, "a query and a fragment"},
		{"https://ｅｖｉｌ.test/mcp", false, "full-width letters, which IDNA maps to evil.test as the client dials it"},
		{"https://evil.test\\@good.example/mcp", false, "a backslash: the URL cannot be read, and deny wins"},
		{"https://%65vil.test/mcp", false, "a percent-encoded host: cannot be read, and deny wins"},
		{"not a url", false, "cannot be read, and deny wins"},
		{"https://good.example/mcp", true, "another host"},
		{"https://evil.test.good.example/mcp", true, "a host that only begins with the name"},
		{"https://${EVIL_HOST}/mcp", true, "an entry not yet expanded is judged once it is"},
	})
}

func TestAddressesAreComparedAsAddresses(t *testing.T) {
	t.Run("IPv6", func(t *testing.T) {
		checkURLs(t, `{"deniedMcpServers":[{"serverUrl":"https://[::1]/*"}]}`, []urlCase{
			{"https://[::1]/mcp", false, "as written"},
			{"https://[0:0::1]/mcp", false, "another spelling"},
			{"https://[0000:0000:0000:0000:0000:0000:0000:0001]:443/mcp", false, "in full, with the default port"},
			{"https://[::1%25lo]/mcp", false, "with a zone, which names the interface the address is reached on"},
			{"https://[::1%25eth0]:8443/mcp", false, "another zone and port"},
			{"https://[::2]/mcp", true, "another address"},
		})
		checkURLs(t, `{"allowedMcpServers":[{"serverUrl":"https://[fe80::1]/*"}]}`, []urlCase{
			{"https://[fe80::1%25eth0]/mcp", true, "an allowed address reached through an interface"},
			{"https://[fe80::2%25eth0]/mcp", false, "another address"},
		})
	})
	t.Run("IPv4", func(t *testing.T) {
		checkURLs(t, `{"deniedMcpServers":[{"serverUrl":"https://127.0.0.1/*"}]}`, []urlCase{
			{"https://127.0.0.1/mcp", false, "as written"},
			{"https://[::ffff:127.0.0.1]/mcp", false, "IPv4-mapped IPv6, dialed over IPv4"},
			{"https://127.1/mcp", false, "a short form resolvers read as 127.0.0.1: cannot be read, and deny wins"},
			{"https://2130706433/mcp", false, "a number resolvers read as 127.0.0.1"},
			{"https://0x7f.0.0.1/mcp", false, "hexadecimal"},
			{"https://127.000.0.1/mcp", false, "leading zeros (octal to some resolvers)"},
			{"https://127.0.0.2/mcp", true, "another address"},
		})
	})
	t.Run("international names", func(t *testing.T) {
		checkURLs(t, `{"deniedMcpServers":[{"serverUrl":"https://bücher.example/*"}]}`, []urlCase{
			{"https://bücher.example/mcp", false, "as written"},
			{"https://BÜCHER.example/mcp", false, "in capitals"},
			{"https://xn--bcher-kva.example/mcp", false, "in its punycode form, which is what is dialed"},
			{"https://bucher.example/mcp", true, "another name"},
		})
		checkURLs(t, `{"deniedMcpServers":[{"serverUrl":"https://xn--bcher-kva.example/*"}]}`, []urlCase{
			{"https://bücher.example/mcp", false, "the pattern in punycode, the URL in Unicode"},
		})
	})
}

func TestAPathWildcardStaysInThePath(t *testing.T) {
	checkURLs(t, `{"allowedMcpServers":[{"serverUrl":"https://api.example/*/public"}]}`, []urlCase{
		{"https://api.example/a/public", true, "a path that matches"},
		{"https://api.example/private?x=/public", false, "the '*' must not reach into the query"},
		{"https://api.example/private#/public", false, "nor into the fragment"},
		{"https://api.example/a/public?x=1", false, "a query the pattern does not admit"},
	})
	checkURLs(t, `{"allowedMcpServers":[{"serverUrl":"https://api.example/public/*"}]}`, []urlCase{
		{"https://api.example/public/x", true, "within the path"},
		{"https://api.example/public/x?y=1", true, "a trailing '*' admits a query, as in Claude Code"},
		{"https://api.example/public/../admin", false, "a dot segment leaves the path"},
		{"https://api.example/public/%2e%2e/admin", false, "an encoded one too"},
		{"https://api.example/%70ublic/x", true, "an encoded letter is the letter"},
	})
	checkURLs(t, `{"allowedMcpServers":[{"serverUrl":"https://api.example/mcp"}]}`, []urlCase{
		{"https://api.example/mcp", true, "exactly"},
		{"https://api.example/mcp?tenant=x", false, "a query the pattern does not have, as in Claude Code"},
		{"https://api.example:8443/mcp", false, "another port"},
		{"https://api.example/mcp/", false, "another path"},
	})
	checkURLs(t, `{"deniedMcpServers":[{"serverUrl":"https://api.example/admin"}]}`, []urlCase{
		{"https://api.example/admin/", false, "a deny pattern matches with a trailing slash"},
		{"https://api.example/admin?x=1", false, "and with any query"},
		{"https://api.example/x/../admin", false, "and through a dot segment"},
		{"https://api.example/%61dmin", false, "and encoded"},
		{"https://api.example/public", true, "another path"},
	})
	checkURLs(t, `{"allowedMcpServers":[{"serverUrl":"*"}]}`, []urlCase{
		{"https://anything.example/x", true, "'*' alone admits every URL"},
		{"https://evil.test\\@good.example/", false, "but none that cannot be read"},
	})
}

func TestAURLPatternThatCannotMeanAURLIsAnError(t *testing.T) {
	for _, p := range []string{
		"corp.example/*",
		"*.corp.example",
		"https://user@corp.example/*",
		"https://corp.example:http/*",
		"https://corp example/*",
		"https://[::1/*",
		"https://corp.example\\mcp",
	} {
		t.Run(p, func(t *testing.T) {
			dir := t.TempDir()
			config.SetManagedDir(t, dir)
			b, _ := json.Marshal(map[string]any{"deniedMcpServers": []map[string]string{{"serverUrl": p}}})
			require.NoError(t, os.WriteFile(filepath.Join(dir, "managed-settings.json"), b, 0o644))
			_, err := config.LoadPolicy()
			assert.ErrorContains(t, err, "serverUrl")
		})
	}
	t.Run("an empty command", func(t *testing.T) {
		dir := t.TempDir()
		config.SetManagedDir(t, dir)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "managed-settings.json"), []byte(`{"deniedMcpServers":[{"serverCommand":[]}]}`), 0o644))
		_, err := config.LoadPolicy()
		assert.ErrorContains(t, err, "at least one element")
	})
}

// Claude Code 2.1.332 expands ${VAR} in a policy's entries, compares a
// command line exactly as the config has it, and lets a deny entry match
// it as written too (seen with claude mcp list).
func TestPolicyEntriesAreExpandedAsClaudeCodeExpandsThem(t *testing.T) {
	homeDir, project := home(t)
	t.Setenv("MCPLUG_POLICY_ARG", "srv.js")
	t.Setenv("MCPLUG_POLICY_HOST", "api.corp.example")
	t.Setenv("MCPLUG_POLICY_EVIL", "evil.test")
	bin := filepath.Join(homeDir, "bin", "x")
	servers := map[string]json.RawMessage{
		"byvar":   json.RawMessage(`{"command": "node", "args": ["${MCPLUG_POLICY_ARG}"]}`),
		"literal": json.RawMessage(`{"command": "node", "args": ["srv.js"]}`),
		"home":    json.RawMessage(`{"command": "` + bin + `"}`),
		"homevar": json.RawMessage(`{"command": "${HOME}/bin/x"}`),
		"other":   json.RawMessage(`{"command": "node", "args": ["other.js"]}`),
		"url":     json.RawMessage(`{"type": "http", "url": "https://${MCPLUG_POLICY_HOST}/mcp"}`),
		"evil":    json.RawMessage(`{"type": "http", "url": "https://${MCPLUG_POLICY_EVIL}/mcp"}`),
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(homeDir, ".claude.json"), b, 0o600))
	tests := []struct {
		name, settings string
		allowed        []string
	}{
		{"allowed", `{"allowedMcpServers":[{"serverUrl":"https://*.corp.example/*"},{"serverCommand":["node","srv.js"]},{"serverCommand":["${HOME}/bin/x"]}]}`,
			[]string{"byvar", "home", "homevar", "literal", "url"}},
		{"denied", `{"deniedMcpServers":[{"serverUrl":"https://${MCPLUG_POLICY_EVIL}/*"},{"serverCommand":["node","${MCPLUG_POLICY_ARG}"]},{"serverCommand":["${HOME}/bin/x"]}]}`,
			[]string{"other", "url"}},
		{"a deny entry matches the command as written", `{"deniedMcpServers":[{"serverCommand":["node","${MCPLUG_POLICY_ARG}"]}]}`,
			[]string{"evil", "home", "homevar", "other", "url"}},
		{"an allow entry with an unset variable matches nothing", `{"allowedMcpServers":[{"serverCommand":["node","${MCPLUG_POLICY_UNSET}"]},{"serverUrl":"https://${MCPLUG_POLICY_UNSET}/*"}]}`,
			nil},
		{"an allow entry whose value would take the path matches nothing", `{"allowedMcpServers":[{"serverUrl":"https://${MCPLUG_POLICY_SLASH}/*"}]}`,
			nil},
	}
	t.Setenv("MCPLUG_POLICY_SLASH", "evil.test/api.corp.example")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policyOf(t, tt.settings)
			cfg, _ := config.Load(project)
			var allowed []string
			for _, name := range cfg.Names() {
				if cfg.Servers[name].Err == nil {
					allowed = append(allowed, name)
				} else {
					assert.ErrorIs(t, cfg.Servers[name].Err, config.ErrPolicy)
				}
			}
			assert.Equal(t, tt.allowed, allowed)
		})
	}
}

// A config read with LoadFile has its relative commands made absolute;
// the policy compares them as written, as Claude Code does with
// --mcp-config.
func TestARelativeCommandIsComparedAsWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "servers.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"evil": {"command": "./evil"}, "ok": {"command": "./ok"}}}`), 0o644))
	policyOf(t, `{"deniedMcpServers":[{"serverCommand":["./evil"]}]}`)
	cfg, _ := config.LoadFile(path)
	assert.ErrorIs(t, cfg.Servers["evil"].Err, config.ErrPolicy)
	assert.NoError(t, cfg.Servers["ok"].Err)
	assert.Equal(t, filepath.Join(dir, "ok"), cfg.Servers["ok"].Command, "still run from the file's folder")
}

func TestAnUnparsableURLIsRefusedWithTheReasonNotTheURL(t *testing.T) {
	p := policyOf(t, `{"deniedMcpServers":[{"serverUrl":"https://evil.test/*"}]}`)
	ok, why := p.Allows(remote("https://s3cret@evil.test\\@good.example/?key=s3cret"))
	assert.False(t, ok)
	assert.Contains(t, why, "cannot be parsed")
	assert.NotContains(t, why, "s3cret")
}

// Add judges an entry as Load will read it: its ${VAR}s expanded.
func TestAddJudgesTheEntryAsLoadWillReadIt(t *testing.T) {
	_, project := home(t)
	ctx := context.Background()
	t.Setenv("MCPLUG_POLICY_SCRIPT", "srv.js")
	policyOf(t, `{"allowedMcpServers":[{"serverCommand":["node","srv.js"]}]}`)
	_, err := config.Add(ctx, project, config.ScopeUser, "ok", json.RawMessage(`{"command":"node","args":["${MCPLUG_POLICY_SCRIPT}"]}`))
	assert.NoError(t, err, "Load would run node srv.js, which is allowed")

	policyOf(t, `{"deniedMcpServers":[{"serverCommand":["node","srv.js"]},{"serverUrl":"https://evil.test/*"}]}`)
	_, err = config.Add(ctx, project, config.ScopeUser, "denied", json.RawMessage(`{"command":"node","args":["${MCPLUG_POLICY_SCRIPT}"]}`))
	assert.ErrorIs(t, err, config.ErrPolicy, "Load would run node srv.js, which is denied")
	t.Setenv("MCPLUG_POLICY_EVIL", "EVIL.test")
	_, err = config.Add(ctx, project, config.ScopeUser, "evil", json.RawMessage(`{"type":"http","url":"https://${MCPLUG_POLICY_EVIL}/mcp"}`))
	assert.ErrorIs(t, err, config.ErrPolicy)
	_, err = config.Add(ctx, project, config.ScopeUser, "later", json.RawMessage(`{"type":"http","url":"https://${MCPLUG_POLICY_UNSET}/mcp"}`))
	assert.NoError(t, err, "an entry whose variable is not set yet is judged when it is")
}
