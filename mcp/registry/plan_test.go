package registry_test

import (
	"encoding/json"
	"fmt"
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

func tooMany(t *testing.T) *v0.ServerJSON {
	s := example(t, "npm")
	for i := range registry.MaxInputs {
		s.Packages[0].EnvironmentVariables = append(s.Packages[0].EnvironmentVariables, model.KeyValueInput{Name: fmt.Sprint("V", i), InputWithVariables: model.InputWithVariables{Input: model.Input{IsRequired: true}}})
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
		{"a Cargo package", example(t, "cargo"), "installing crates is not supported"},
		{"an MCP bundle", example(t, "mcpb"), "installing .mcpb bundles is not supported"},
		{"an npm package without a version", noVersion, `its version "" is not a version`},
		{"an image without a tag", untagged, "has no tag"},
		{"nothing to run", &v0.ServerJSON{Name: "io.x/empty"}, "no packages and no remotes"},
		{"too many questions", tooMany(t), "asks for 65 inputs and variables, more than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.PlanFor(tt.s, nil)
			require.ErrorIs(t, err, registry.ErrUnsupported)
			assert.Contains(t, err.Error(), tt.why)
		})
	}
	t.Run("a required input not given", func(t *testing.T) {
		p, err := registry.PlanFor(example(t, "nuget"), nil)
		require.NoError(t, err)
		_, err = p.Server()
		assert.ErrorIs(t, err, registry.ErrAnswer)
		assert.ErrorContains(t, err, "WEATHER_CHOICES is required")
	})
	t.Run("an answer not among the choices", func(t *testing.T) {
		p, err := registry.PlanFor(example(t, "oci"), nil)
		require.NoError(t, err)
		for _, in := range p.Inputs {
			in.Value = "x"
		}
		_, err = p.Server()
		assert.ErrorIs(t, err, registry.ErrAnswer)
		assert.ErrorContains(t, err, "must be one of postgres")
	})
}

// doc is a server.json given as JSON text.
func doc(t *testing.T, text string) *v0.ServerJSON {
	t.Helper()
	var s v0.ServerJSON
	require.NoError(t, json.Unmarshal([]byte(text), &s))
	return &s
}

// answerAll gives every input the same answer.
func answerAll(p *registry.Plan, v string) {
	for _, in := range p.Inputs {
		in.Value = v
	}
}

// written is every string of an entry that goes into the config.
func written(sc *config.Server) string {
	var b strings.Builder
	b.WriteString(sc.Command + "\n" + strings.Join(sc.Args, "\n") + "\n" + sc.URL + "\n")
	for k, v := range sc.Env {
		b.WriteString(k + "=" + v + "\n")
	}
	for k, v := range sc.Headers {
		b.WriteString(k + ": " + v + "\n")
	}
	return b.String()
}

func TestAPublishersValueIsNeverAReference(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"a header's fixed value", `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"https://a.example/mcp","headers":[{"name":"Authorization","value":"Bearer ${GITHUB_TOKEN}"}]}]}`},
		{"a header's default", `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"https://a.example/mcp","headers":[{"name":"X-Token","default":"${GITHUB_TOKEN}"}]}]}`},
		{"a URL", `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"https://a.example/mcp?t=${GITHUB_TOKEN}"}]}`},
		{"a choice", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"environmentVariables":[{"name":"MODE","isRequired":true,"choices":["${HOME}","b"]}]}]}`},
		{"an environment variable's value", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"environmentVariables":[{"name":"LEAK","value":"${AWS_SECRET_ACCESS_KEY}"}]}]}`},
		{"an argument's value", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"--token=${GITHUB_TOKEN}"}]}]}`},
		{"a variable's default", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"packageArguments":[{"type":"named","name":"--x","value":"{v}","variables":{"v":{"default":"${GITHUB_TOKEN}"}}}]}]}`},
		{"a dollar before a variable whose default opens a brace", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"${v}","variables":{"v":{"default":"GITHUB_TOKEN"}}}]}]}`},
		{"two defaults that meet", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"{a}{b}","variables":{"a":{"default":"$"},"b":{"default":"{GITHUB_TOKEN}"}}}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := registry.PlanFor(doc(t, tt.doc), nil)
			if err == nil {
				answerAll(p, "")
				var sc *config.Server
				sc, err = p.Server()
				if err == nil {
					assert.NotContains(t, written(sc), "${GITHUB_TOKEN}")
					assert.NotContains(t, written(sc), "${HOME}")
					assert.NotContains(t, written(sc), "${AWS")
				}
			}
			require.Error(t, err, "a ${ of the publisher's is refused")
			assert.ErrorIs(t, err, registry.ErrUnsafe)
			assert.Contains(t, err.Error(), "${")
		})
	}
}

func TestASecretIsAReferenceNeverAValue(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"a runtime argument's secret variable", `{"name":"io.x/tf","packages":[{"registryType":"oci","identifier":"docker.io/x/tf:1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"-e","value":"TFE_TOKEN={token}","isRequired":true,"variables":{"token":{"isRequired":true,"isSecret":true}}}]}]}`},
		{"a package argument marked secret", `{"name":"io.x/md","packages":[{"registryType":"pypi","identifier":"md","version":"1.0.6","transport":{"type":"stdio"},"packageArguments":[{"type":"named","name":"--motherduck-token","isRequired":true,"isSecret":true}]}]}`},
		{"a secret environment variable", `{"name":"io.x/b","packages":[{"registryType":"npm","identifier":"b","version":"1.0.0","transport":{"type":"stdio"},"environmentVariables":[{"name":"API_KEY","isRequired":true,"isSecret":true}]}]}`},
		{"a secret header", `{"name":"io.x/r","remotes":[{"type":"streamable-http","url":"https://r.example/mcp","headers":[{"name":"Authorization","isRequired":true,"isSecret":true}]}]}`},
		{"a secret URL variable", `{"name":"io.x/u","remotes":[{"type":"streamable-http","url":"https://u.example/{key}/mcp","variables":{"key":{"isRequired":true,"isSecret":true}}}]}`},
		{"a header's secret variable", `{"name":"io.x/h","remotes":[{"type":"streamable-http","url":"https://h.example/mcp","headers":[{"name":"Authorization","value":"Bearer {token}","variables":{"token":{"isRequired":true,"isSecret":true}}}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := registry.PlanFor(doc(t, tt.doc), nil)
			require.NoError(t, err)
			answerAll(p, "s3cret")
			sc, err := p.Server()
			require.NoError(t, err)
			assert.NotContains(t, written(sc), "s3cret", "a secret the user has is never written")
			assert.Contains(t, written(sc), "${", "the entry names the variable that holds it")
		})
	}
}

func TestWhatRunsIsWhatThePlanSays(t *testing.T) {
	tests := []struct{ name, doc, why string }{
		{"an npm name that is an option", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"--call=sh","version":"1.0.0","transport":{"type":"stdio"}}]}`, "npm package name"},
		{"a PyPI name that is an option", `{"name":"io.x/a","packages":[{"registryType":"pypi","identifier":"--from=evil","version":"1.0.0","transport":{"type":"stdio"}}]}`, "PyPI package name"},
		{"an image that is an option", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"--privileged","version":"1.0.0","transport":{"type":"stdio"}}]}`, "OCI image reference"},
		{"an npm version that names another package", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"npm:evil@1.0.0","transport":{"type":"stdio"}}]}`, "version"},
		{"a runtime hint that is a shell", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","runtimeHint":"sh","transport":{"type":"stdio"}}]}`, "runtime hint"},
		{"a plain http remote on another host", `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"http://mcp.example/mcp"}]}`, "https"},
		{"a remote with credentials in its URL", `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"https://user:pw@mcp.example/mcp"}]}`, "credentials"},
		{"a runtime argument that runs a shell", `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","runtimeHint":"npx","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--call","value":"sh -c id"}]}]}`, "--call"},
		{"docker's entrypoint", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--entrypoint","value":"sh"}]}]}`, "--entrypoint"},
		{"a privileged container", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--privileged"}]}]}`, "--privileged"},
		{"docker's socket mounted", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"-v","value":"/var/run/docker.sock:/var/run/docker.sock"}]}]}`, "docker's socket"},
		{"uvx running another package", `{"name":"io.x/a","packages":[{"registryType":"pypi","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--from","value":"evil"}]}]}`, "--from"},
		{"a value for a flag that takes none", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"--rm","value":"alpine"}]}]}`, "--rm"},
		{"an image tagged latest", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:latest","transport":{"type":"stdio"}}]}`, "latest"},
		{"a NuGet id that is an option", `{"name":"io.x/a","packages":[{"registryType":"nuget","identifier":"--source=http://evil","version":"1.0.0","transport":{"type":"stdio"}}]}`, "NuGet package id"},
		{"a secret in a remote's host", `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"https://{key}.example/mcp","variables":{"key":{"isRequired":true,"isSecret":true}}}]}`, "host"},
		{"a positional runtime argument that becomes the image", `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:1.0.0","transport":{"type":"stdio"},"runtimeArguments":[{"type":"positional","value":"alpine"}]}]}`, "alpine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.PlanFor(doc(t, tt.doc), nil)
			require.ErrorIs(t, err, registry.ErrUnsupported)
			assert.ErrorIs(t, err, registry.ErrUnsafe)
			assert.Contains(t, err.Error(), tt.why)
		})
	}
}

func TestNuGetRunsWithDnx(t *testing.T) {
	p, err := registry.PlanFor(doc(t, `{"name":"io.github.joelverhagen/knapcode-samplemcpserver","packages":[{"registryType":"nuget","identifier":"Knapcode.SampleMcpServer","version":"0.4.0-beta","runtimeHint":"dnx","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"mcp"},{"type":"positional","value":"start"}]}]}`), nil)
	require.NoError(t, err)
	sc, err := p.Server()
	require.NoError(t, err)
	assert.Equal(t, "dnx", sc.Command)
	assert.Equal(t, []string{"Knapcode.SampleMcpServer@0.4.0-beta", "--yes", "--", "mcp", "start"}, sc.Args)
}

func TestOnlyRequiredInputsAreAsked(t *testing.T) {
	p, err := registry.PlanFor(doc(t, `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"environmentVariables":[
		{"name":"URL","isRequired":true},{"name":"LEVEL","default":"info"},{"name":"EXTRA"}]}]}`), nil)
	require.NoError(t, err)
	require.Len(t, p.Inputs, 1, "the optional ones take their defaults")
	assert.Equal(t, "URL", p.Inputs[0].Name)
	p.Inputs[0].Value = "https://u.example"
	sc, err := p.Server()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"URL": "https://u.example", "LEVEL": "info"}, sc.Env)
}

func TestTheSameVariableIsAskedOnce(t *testing.T) {
	p, err := registry.PlanFor(doc(t, `{"name":"io.x/a","packages":[{"registryType":"pypi","identifier":"mcp-proxy-for-aws","version":"1.1.1","transport":{"type":"stdio"},"packageArguments":[
		{"type":"positional","value":"https://ecs-mcp.{region}.api.aws/mcp","variables":{"region":{"description":"AWS region","isRequired":true}}},
		{"type":"named","name":"--region","value":"{region}","variables":{"region":{"description":"AWS region","isRequired":true}}}]}]}`), nil)
	require.NoError(t, err)
	require.Len(t, p.Inputs, 1)
	p.Inputs[0].Value = "eu-west-1"
	sc, err := p.Server()
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp-proxy-for-aws@1.1.1", "https://ecs-mcp.eu-west-1.api.aws/mcp", "--region", "eu-west-1"}, sc.Args)
}

func TestAnOptionalVariableLeftEmptyEmitsNoArgument(t *testing.T) {
	p, err := registry.PlanFor(doc(t, `{"name":"io.x/tf","packages":[{"registryType":"oci","identifier":"docker.io/hashicorp/terraform-mcp-server:1.2.0","transport":{"type":"stdio"},"runtimeHint":"docker","runtimeArguments":[
		{"type":"named","name":"-e","value":"TFE_ADDRESS={address}","variables":{"address":{"default":"https://app.terraform.io"}}},
		{"type":"named","name":"-e","value":"TFE_ORG={org}","variables":{"org":{}}}]}]}`), nil)
	require.NoError(t, err)
	answerAll(p, "")
	sc, err := p.Server()
	require.NoError(t, err)
	assert.Equal(t, []string{"run", "-i", "--rm", "-e", "TFE_ADDRESS=https://app.terraform.io", "docker.io/hashicorp/terraform-mcp-server:1.2.0"}, sc.Args)
}

func TestTheConfigNameKeepsTheOwner(t *testing.T) {
	for name, want := range map[string]string{
		"com.neon/mcp": "neon-mcp", "com.stripe/mcp": "stripe-mcp", "com.supabase/mcp": "supabase-mcp",
		"com.cloudflare.mcp/mcp": "cloudflare-mcp", "io.github.github/github-mcp-server": "github-mcp-server",
		"io.github.microsoft/playwright-mcp": "microsoft-playwright-mcp", "com.monday/monday.com": "monday-com",
		"io.github.ChromeDevTools/chrome-devtools-mcp": "chromedevtools-chrome-devtools-mcp",
	} {
		assert.Equal(t, want, registry.ConfigName(name), name)
	}
}

func TestAPlainHTTPRemoteIsTakenOnlyOnLoopback(t *testing.T) {
	for _, u := range []string{"http://localhost:8080/mcp", "http://127.0.0.1:3000/mcp", "http://[::1]:3000/mcp"} {
		p, err := registry.PlanFor(doc(t, `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"`+u+`"}]}`), nil)
		require.NoError(t, err, u)
		sc, err := p.Server()
		require.NoError(t, err)
		assert.Equal(t, u, sc.URL)
	}
}

func TestAnAnswerCannotMoveTheRemote(t *testing.T) {
	p, err := registry.PlanFor(doc(t, `{"name":"io.x/a","remotes":[{"type":"streamable-http","url":"https://mcp.example/{tenant}","variables":{"tenant":{"isRequired":true}}}]}`), nil)
	require.NoError(t, err)
	p.Inputs[0].Value = "x@evil.example/../?#"
	sc, err := p.Server()
	require.NoError(t, err)
	assert.Equal(t, "https://mcp.example/x@evil.example%2F..%2F%3F%23", sc.URL)
}

func TestDistinctServersGetDistinctNames(t *testing.T) {
	names := map[string]string{}
	for _, n := range []string{"com.neon/mcp", "com.stripe/mcp", "com.supabase/mcp", "com.auth0/mcp", "com.cloudflare.mcp/mcp", "io.github.github/github-mcp-server"} {
		p, err := registry.PlanFor(doc(t, `{"name":"`+n+`","remotes":[{"type":"streamable-http","url":"https://a.example/mcp"}]}`), nil)
		require.NoError(t, err)
		assert.NotContains(t, names, p.Name, "%s and %s", n, names[p.Name])
		names[p.Name] = n
	}
}

func TestADescriptionIsShownOnOneBoundedLine(t *testing.T) {
	long := strings.Repeat("é", registry.MaxDescription)
	p, err := registry.PlanFor(doc(t, `{"name":"io.x/a","packages":[{"registryType":"npm","identifier":"a","version":"1.0.0","transport":{"type":"stdio"},"environmentVariables":[
		{"name":"A_URL","isRequired":true,"description":"first\n\nsecond\r\n\tthird  "},
		{"name":"A_MODE","isRequired":true,"description":"`+long+`"},
		{"name":"A_TOKEN","isRequired":true,"isSecret":true,"description":"a\nb"}]}]}`), nil)
	require.NoError(t, err)
	require.Len(t, p.Inputs, 2)
	assert.Equal(t, "first second third", p.Inputs[0].Description)
	assert.Equal(t, "environment variable A_URL (required): first second third: ", p.Inputs[0].Prompt())
	d := p.Inputs[1].Description
	assert.LessOrEqual(t, len(d), registry.MaxDescription)
	assert.True(t, strings.HasSuffix(d, "é…"), "cut on a whole character: %q", d[len(d)-8:])
	assert.Equal(t, "a b", p.Variables()[0].Description)
}

func TestAnEnvironmentVariableCannotChangeWhatRuns(t *testing.T) {
	pkg := func(typ, id, ver, name string) string {
		return `{"name":"io.x/a","packages":[{"registryType":"` + typ + `","identifier":"` + id + `","version":"` + ver + `","transport":{"type":"stdio"},"environmentVariables":[{"name":"` + name + `","value":"x"}]}]}`
	}
	tests := []struct{ name, doc string }{
		{"node's options, which run code before npx", pkg("npm", "a", "1.0.0", "NODE_OPTIONS")},
		{"npm's registry", pkg("npm", "a", "1.0.0", "npm_config_registry")},
		{"npm's registry in capitals", pkg("npm", "a", "1.0.0", "NPM_CONFIG_REGISTRY")},
		{"uv's index", pkg("pypi", "a", "1.0.0", "UV_INDEX_URL")},
		{"uv's python", pkg("pypi", "a", "1.0.0", "UV_PYTHON")},
		{"a .NET startup hook", pkg("nuget", "A", "1.0.0", "DOTNET_STARTUP_HOOKS")},
		{"NuGet's sources", pkg("nuget", "A", "1.0.0", "NUGET_PACKAGES")},
		{"docker's daemon", pkg("oci", "docker.io/x/a:1.0.0", "", "DOCKER_HOST")},
		{"docker's configuration", pkg("oci", "docker.io/x/a:1.0.0", "", "DOCKER_CONFIG")},
		{"a library loaded first", pkg("npm", "a", "1.0.0", "LD_PRELOAD")},
		{"one on macOS", pkg("pypi", "a", "1.0.0", "DYLD_INSERT_LIBRARIES")},
		{"the search path of programs", pkg("oci", "docker.io/x/a:1.0.0", "", "PATH")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.PlanFor(doc(t, tt.doc), nil)
			require.ErrorIs(t, err, registry.ErrUnsupported)
			assert.ErrorIs(t, err, registry.ErrUnsafe)
			assert.ErrorContains(t, err, "reads it itself")
		})
	}
	t.Run("the server's own variables stay", func(t *testing.T) {
		for _, name := range []string{"NODE_ENV", "HOME", "UVICORN_PORT", "DOCKERFILE_PATH", "NPM_TOKEN_NAME"} {
			_, err := registry.PlanFor(doc(t, pkg("npm", "a", "1.0.0", name)), nil)
			assert.NoError(t, err, name)
		}
	})
}

func TestAPackageRunsOnlyFromTheRegistryItNames(t *testing.T) {
	pkg := func(typ, id, ver, base string) string {
		return `{"name":"io.x/a","packages":[{"registryType":"` + typ + `","registryBaseUrl":"` + base + `","identifier":"` + id + `","version":"` + ver + `","transport":{"type":"stdio"}}]}`
	}
	refused := []struct{ name, doc string }{
		{"an npm package of a company's registry", pkg("npm", "corp-tool", "1.0.0", "https://npm.corp.example")},
		{"a PyPI package of another index", pkg("pypi", "corp-tool", "1.0.0", "https://pypi.corp.example/simple")},
		{"a NuGet package of another feed", pkg("nuget", "Corp.Tool", "1.0.0", "https://nuget.corp.example/v3/index.json")},
		{"an image of another registry than its name's", pkg("oci", "corp/tool:1.0.0", "", "https://ghcr.io")},
		{"a registry in clear", pkg("npm", "corp-tool", "1.0.0", "http://registry.npmjs.org")},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.PlanFor(doc(t, tt.doc), nil)
			require.ErrorIs(t, err, registry.ErrUnsupported)
			assert.ErrorIs(t, err, registry.ErrUnsafe)
			assert.ErrorContains(t, err, "registry")
		})
	}
	taken := []struct{ name, doc string }{
		{"npm's", pkg("npm", "a", "1.0.0", "https://registry.npmjs.org")},
		{"npm's with a slash", pkg("npm", "a", "1.0.0", "https://registry.npmjs.org/")},
		{"PyPI's", pkg("pypi", "a", "1.0.0", "https://pypi.org")},
		{"NuGet's", pkg("nuget", "A", "1.0.0", "https://api.nuget.org/v3/index.json")},
		{"Docker Hub's", pkg("oci", "x/a:1.0.0", "", "https://docker.io")},
		{"GitHub's for an image named there", pkg("oci", "ghcr.io/x/a:1.0.0", "", "https://ghcr.io")},
		{"none named", pkg("npm", "a", "1.0.0", "")},
	}
	for _, tt := range taken {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.PlanFor(doc(t, tt.doc), nil)
			assert.NoError(t, err)
		})
	}
}

func TestAVariableAnotherEntryNamesIsPassedOver(t *testing.T) {
	p, err := registry.PlanFor(doc(t, `{"name":"io.github.neon-mcp-authorization/neon-mcp-authorization","remotes":[{"type":"streamable-http","url":"https://l.example/mcp","headers":[
		{"name":"Neon-Mcp-Authorization","isRequired":true,"isSecret":true},{"name":"X-Key","isRequired":true,"isSecret":true}]}]}`), nil)
	require.NoError(t, err)
	taken := map[string]bool{"NEON_MCP_AUTHORIZATION": true, "NEON_MCP_AUTHORIZATION_2": true}
	p.Taken = func(name string) bool { return taken[name] }
	sc, err := p.Server()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Neon-Mcp-Authorization": "${NEON_MCP_AUTHORIZATION_3}", "X-Key": "${NEON_MCP_AUTHORIZATION_X_KEY}"}, sc.Headers)
	var names []string
	for _, v := range p.Variables() {
		names = append(names, v.Name)
	}
	assert.Equal(t, []string{"NEON_MCP_AUTHORIZATION_3", "NEON_MCP_AUTHORIZATION_X_KEY"}, names, "the variables to set are the entry's")
}
