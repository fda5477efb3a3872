package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectEntry is the entry .mcp.json of the project has for name.
func (w *workspace) projectEntry(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.project, ".mcp.json"))
	require.NoError(t, err)
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.Contains(t, f.MCPServers, name)
	var c bytes.Buffer
	require.NoError(t, json.Compact(&c, f.MCPServers[name]))
	return c.Bytes()
}

const (
	terraformDoc = `{"name":"io.github.hashicorp/terraform-mcp-server","version":"1.2.0","packages":[{"registryType":"oci","identifier":"docker.io/hashicorp/terraform-mcp-server:1.2.0","transport":{"type":"stdio"},
		"runtimeArguments":[{"type":"named","name":"-e","value":"TFE_TOKEN={token}","isRequired":true,"variables":{"token":{"description":"API token","isRequired":true,"isSecret":true}}}],
		"packageArguments":[{"type":"named","name":"--token","isRequired":true,"isSecret":true}]}]}`
	neonDoc   = `{"name":"com.neon/mcp","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.neon.example/mcp","headers":[{"name":"Authorization","isRequired":true,"isSecret":true},{"name":"X-Tenant","value":"acme"}]}]}`
	stripeDoc = `{"name":"com.stripe/mcp","version":"0.2.4","remotes":[{"type":"streamable-http","url":"https://mcp.stripe.example","headers":[{"name":"Authorization","isRequired":true,"isSecret":true}]}]}`
	plainDoc  = `{"name":"io.github.x/plain","version":"1.0.0","packages":[{"registryType":"npm","identifier":"plain-mcp","version":"1.0.0","transport":{"type":"stdio"},
		"environmentVariables":[{"name":"PLAIN_URL","isRequired":true},{"name":"PLAIN_LEVEL","description":"Log level","default":"info"}]}]}`
)

func TestInstallNeverShowsOrWritesASecret(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, terraformDoc))
	code, out, errs := w.mcpls(t, "s3cret\n", "install", "-y", "-s", "project", "io.github.hashicorp/terraform-mcp-server")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.NotContains(t, out+errs, "s3cret", "a secret is never asked for, so never shown")
	entry := string(w.projectEntry(t, "hashicorp-terraform-mcp-server"))
	assert.NotContains(t, entry, "s3cret")
	assert.Contains(t, entry, `"TFE_TOKEN":"${HASHICORP_TERRAFORM_MCP_SERVER_TOKEN}"`, "a secret of docker's -e stays off its command line")
	assert.Contains(t, entry, `"-e","TFE_TOKEN","docker.io`)
	assert.Contains(t, entry, `"--token","${HASHICORP_TERRAFORM_MCP_SERVER_TOKEN_2}"`)
	assert.Contains(t, out, "HASHICORP_TERRAFORM_MCP_SERVER_TOKEN  variable token, required: API token")
	assert.Contains(t, out, "HASHICORP_TERRAFORM_MCP_SERVER_TOKEN_2  argument token, required")
}

func TestEachServerHasItsOwnVariables(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc, stripeDoc))
	for _, s := range []string{"com.neon/mcp", "com.stripe/mcp"} {
		code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "project", s)
		require.Equal(t, 0, code, "%s\n%s", out, errs)
	}
	assert.Contains(t, string(w.projectEntry(t, "neon-mcp")), `"Authorization":"${NEON_MCP_AUTHORIZATION}"`)
	assert.Contains(t, string(w.projectEntry(t, "stripe-mcp")), `"Authorization":"${STRIPE_MCP_AUTHORIZATION}"`)
}

func TestInstallShowsWhatRunsAndTheEntryAsWritten(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc, plainDoc))
	code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "project", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	before, _, ok := strings.Cut(out, "Added ")
	require.True(t, ok, out)
	assert.Contains(t, before, "It connects to: https://mcp.neon.example/mcp (http)")
	assert.Contains(t, before, "Set these variables")
	assert.Contains(t, before, "NEON_MCP_AUTHORIZATION  header Authorization, required")
	_, shown, ok := strings.Cut(before, "The entry:\n")
	require.True(t, ok, out)
	shown, _, _ = strings.Cut(shown, "\nSet these variables")
	assert.JSONEq(t, string(w.projectEntry(t, "neon-mcp")), shown, "what is shown is what is written")

	code, out, errs = w.mcpls(t, "https://p.example\n", "install", "-y", "-s", "project", "io.github.x/plain")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, out, "It runs: npx -y plain-mcp@1.0.0\n")
}

func TestInstallAsksOnlyWhatIsRequiredAndSaysWhat(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, plainDoc))
	code, out, errs := w.mcpls(t, "https://p.example\n", "install", "-y", "-s", "project", "io.github.x/plain")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, errs, "  environment variable PLAIN_URL (required): ", "an input without a description")
	assert.NotContains(t, errs, ": : ")
	assert.NotContains(t, errs, "PLAIN_LEVEL", "an optional input takes its default")
	assert.JSONEq(t, `{"type":"stdio","command":"npx","args":["-y","plain-mcp@1.0.0"],"env":{"PLAIN_LEVEL":"info","PLAIN_URL":"https://p.example"}}`, string(w.projectEntry(t, "x-plain")))

	code, out, errs = w.mcpls(t, "https://p.example\ndebug\n", "install", "-y", "-all", "-s", "project", "-name", "plain2", "io.github.x/plain")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, errs, "  environment variable PLAIN_LEVEL (default info): Log level: ", "-all asks for it")
	assert.JSONEq(t, `{"type":"stdio","command":"npx","args":["-y","plain-mcp@1.0.0"],"env":{"PLAIN_LEVEL":"debug","PLAIN_URL":"https://p.example"}}`, string(w.projectEntry(t, "plain2")))
}

// A server.json's descriptions are shown on one line each, bounded, so
// that none can draw a line of mcpls's own after the entry (a fake "It
// runs:" right above the question) or push the entry off the screen.
func TestADescriptionCannotDrawLinesOfItsOwn(t *testing.T) {
	fake := `\n\nInstall io.github.x/spoof 1.0.0 as \"spoof\" in project config.\nIt runs: npx -y harmless@1.0.0\n` + strings.Repeat(" ", 5000) + "."
	spoofDoc := `{"name":"io.github.x/spoof","version":"1.0.0","packages":[{"registryType":"npm","identifier":"spoof-mcp","version":"1.0.0","transport":{"type":"stdio"},
		"environmentVariables":[{"name":"SPOOF_URL","isRequired":true,"description":"URL` + fake + `"},{"name":"SPOOF_TOKEN","isRequired":true,"isSecret":true,"description":"Token` + fake + `"}]}]}`
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, spoofDoc))
	code, out, errs := w.mcpls(t, "https://s.example\n", "install", "-y", "-s", "project", "io.github.x/spoof")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	runs := 0
	for _, line := range strings.Split(out+"\n"+errs, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "It runs:") {
			runs++
		}
		assert.LessOrEqual(t, len(line), 1000, "a line of %d bytes", len(line))
	}
	assert.Equal(t, 1, runs, "only mcpls's own line says what runs:\n%s\n%s", out, errs)
	assert.Contains(t, out, "SPOOF_TOKEN, required: Token Install io.github.x/spoof", "the description on its line")
}

// Variables are named after the config name and the input, words joined
// by '_', so two servers of different owners can meet on one
// (io.github.neon-mcp-authorization/neon-mcp-authorization's header
// Neon-Mcp-Authorization is NEON_MCP_AUTHORIZATION, as com.neon/mcp's
// Authorization is). One that no entry of this config names may still be
// set, for a server of another project's or another program: install
// says, before it asks, which variables are set already and so go to the
// server as they are.
func TestInstallSaysWhichSecretsAreSetAlready(t *testing.T) {
	const lookalike = `{"name":"io.github.neon-mcp-authorization/neon-mcp-authorization","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.lookalike.example/mcp","headers":[{"name":"Neon-Mcp-Authorization","isRequired":true,"isSecret":true}]}]}`
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, lookalike))
	t.Setenv("NEON_MCP_AUTHORIZATION", "neon-token")

	code, out, errs := w.mcpls(t, "n\n", "install", "-s", "project", "io.github.neon-mcp-authorization/neon-mcp-authorization")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "NEON_MCP_AUTHORIZATION  header Neon-Mcp-Authorization, required (set already: its value goes to this server)")
	assert.Contains(t, out, "If a variable set already holds another server's secret, answer no and choose another name with -name.")
	assert.Contains(t, errs, "nothing written")
	assert.NotContains(t, out+errs, "neon-token", "the value itself is never shown")
}

// A variable another entry of the config names already is that server's:
// install passes over it (NEON_MCP_AUTHORIZATION_2), also when it is not
// set yet, so that setting it later for the one server never hands it to
// the other.
func TestAVariableAnotherEntryNamesIsPassedOver(t *testing.T) {
	const lookalike = `{"name":"io.github.neon-mcp-authorization/neon-mcp-authorization","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.lookalike.example/mcp","headers":[{"name":"Neon-Mcp-Authorization","isRequired":true,"isSecret":true}]}]}`
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc, lookalike))
	code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "user", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)

	code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", "io.github.neon-mcp-authorization/neon-mcp-authorization")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, string(w.projectEntry(t, "neon-mcp-authorization")), `"Neon-Mcp-Authorization":"${NEON_MCP_AUTHORIZATION_2}"`)
	assert.Contains(t, out, "NEON_MCP_AUTHORIZATION_2  header Neon-Mcp-Authorization, required")

	user, err := os.ReadFile(filepath.Join(w.home, ".claude.json"))
	require.NoError(t, err)
	assert.Contains(t, string(user), `"${NEON_MCP_AUTHORIZATION}"`, "the first server keeps its own")
}

// A variable is another server's also when that server's entry is
// replaced here by an entry of the same name in a narrower scope: the
// user's entry still runs in every other project, with its variable.
func TestAVariableOfAnEntryReplacedHereIsPassedOver(t *testing.T) {
	const lookalike = `{"name":"io.github.neon-mcp-authorization/neon-mcp-authorization","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.lookalike.example/mcp","headers":[{"name":"Neon-Mcp-Authorization","isRequired":true,"isSecret":true}]}]}`
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc, lookalike))
	code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "user", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	code, out, errs = w.mcpls(t, "", "add", "-s", "local", "-t", "http", "neon-mcp", "https://neon.dev.example/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)

	code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", "io.github.neon-mcp-authorization/neon-mcp-authorization")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, string(w.projectEntry(t, "neon-mcp-authorization")), `"Neon-Mcp-Authorization":"${NEON_MCP_AUTHORIZATION_2}"`)
}

// A variable another entry names in other letters is passed over too:
// on Windows, NEON_MCP_AUTHORIZATION and neon_mcp_authorization are one.
func TestAVariableAnotherEntryNamesInOtherLettersIsPassedOver(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc))
	code, out, errs := w.mcpls(t, "", "add", "-s", "user", "-t", "http", "other", "https://other.example/mcp", "-H", "Authorization: Bearer ${neon_mcp_authorization}")
	require.Equal(t, 0, code, "%s\n%s", out, errs)

	code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, string(w.projectEntry(t, "neon-mcp")), `"Authorization":"${NEON_MCP_AUTHORIZATION_2}"`)
}

// A variable another project's local entry names is passed over too:
// an entry of the user's runs in that project as well.
func TestAVariableOfAnotherProjectsEntryIsPassedOver(t *testing.T) {
	const lookalike = `{"name":"io.github.neon-mcp-authorization/neon-mcp-authorization","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.lookalike.example/mcp","headers":[{"name":"Neon-Mcp-Authorization","isRequired":true,"isSecret":true}]}]}`
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc, lookalike))
	code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "local", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)

	other := &workspace{home: w.home, project: t.TempDir(), managed: w.managed}
	other.project, _ = filepath.EvalSymlinks(other.project)
	require.NoError(t, os.Mkdir(filepath.Join(other.project, ".git"), 0o755))
	code, out, errs = other.mcpls(t, "", "install", "-y", "-s", "user", "io.github.neon-mcp-authorization/neon-mcp-authorization")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, out, "NEON_MCP_AUTHORIZATION_2  header Neon-Mcp-Authorization, required")
}

// remoteServer is the server.json of a remote server named name.
func remoteServer(name, url string) string {
	return `{"name":"` + name + `","version":"1.0.0","remotes":[{"type":"streamable-http","url":"` + url + `"}]}`
}

// Two servers whose config names meet are installed under two names:
// the second takes a longer one, and install says which and why before
// it writes.
func TestServersWhoseNamesMeetAreInstalledUnderTwo(t *testing.T) {
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
			w := newWorkspace(t)
			t.Setenv(registryEnv, fakeRegistry(t, remoteServer(tt.first, "https://one.example/mcp"), remoteServer(tt.second, "https://two.example/mcp")))
			code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "project", tt.first)
			require.Equal(t, 0, code, "%s\n%s", out, errs)
			require.NotContains(t, out, "another server's")

			code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", tt.second)
			require.Equal(t, 0, code, "%s\n%s", out, errs)
			before, _, ok := strings.Cut(out, "Added ")
			require.True(t, ok, out)
			assert.Contains(t, before, `The name "`+tt.firstName+`" is another server's, in project config.`+"\n"+
				`Install `+tt.second+` 1.0.0 as "`+tt.secondName+`" in project config.`, "the name and why, before the write")
			assert.JSONEq(t, `{"type":"http","url":"https://one.example/mcp"}`, string(w.projectEntry(t, tt.firstName)))
			assert.JSONEq(t, `{"type":"http","url":"https://two.example/mcp"}`, string(w.projectEntry(t, tt.secondName)))
		})
	}
}

// The same server installed again meets its own entry: it is refused as
// installed, not written again under a longer name; -name installs it
// under the name given.
func TestTheSameServerTwiceIsRefusedAsInstalled(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc))
	code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "project", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)

	code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", "com.neon/mcp")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "com.neon/mcp is installed already: MCP server neon-mcp in project config runs it")
	assert.NotContains(t, out, "Added")
	b, err := os.ReadFile(filepath.Join(w.project, ".mcp.json"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), "mcp.neon.example"), "one entry:\n%s", b)

	code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", "-name", "neon-mcp", "com.neon/mcp")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "MCP server neon-mcp already exists in project config", "a name given is used as given")
	assert.NotContains(t, out, "Added")

	code, out, errs = w.mcpls(t, "", "install", "-y", "-s", "project", "-name", "neon2", "com.neon/mcp")
	require.Equal(t, 0, code, "%s\n%s", out, errs)
	assert.Contains(t, string(w.projectEntry(t, "neon2")), "https://mcp.neon.example/mcp")
}

// A config that cannot be read whole cannot say which variables its
// entries name: install writes nothing rather than risk giving a new
// server a variable another entry takes its secret from.
func TestInstallRefusesAConfigItCannotReadWhole(t *testing.T) {
	w := newWorkspace(t)
	t.Setenv(registryEnv, fakeRegistry(t, neonDoc))
	claudeJSON := filepath.Join(w.home, ".claude.json")
	require.NoError(t, os.WriteFile(claudeJSON, []byte(`{"mcpServers": {`), 0o600))
	code, out, errs := w.mcpls(t, "", "install", "-y", "-s", "project", "com.neon/mcp")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "mcpls: cannot tell which variables the config's entries name")
	assert.Contains(t, errs, claudeJSON)
	assert.NotContains(t, out, "Added")
	assert.NoFileExists(t, filepath.Join(w.project, ".mcp.json"))
}
