package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/registry"
)

// oci is a server.json of an image with the runtime arguments args (a
// JSON array) and the environment variables env.
func oci(args, env string) string {
	return `{"name":"io.x/a","packages":[{"registryType":"oci","identifier":"docker.io/x/a:1.0.0","transport":{"type":"stdio"},"runtimeArguments":` + args + `,"environmentVariables":` + env + `}]}`
}

func TestTheContainerGetsOfTheHostOnlyWhatTheUserGives(t *testing.T) {
	refused := []struct{ name, args, why string }{
		{"the root mounted", `[{"type":"named","name":"-v","value":"/:/host"}]`, `"/"`},
		{"docker's socket through its folder", `[{"type":"named","name":"-v","value":"/var/run:/r"}]`, `"/var/run"`},
		{"a volume spelt long", `[{"type":"named","name":"--volume","value":"/home:/h:ro"}]`, `"/home"`},
		{"the working folder", `[{"type":"named","name":"-v","value":".:/w"}]`, `"."`},
		{"a bind mount", `[{"type":"named","name":"--mount","value":"type=bind,source=/,target=/host"}]`, `"/"`},
		{"a bind mount spelt src", `[{"type":"named","name":"--mount","value":"type=bind,dst=/host,src=/etc"}]`, `"/etc"`},
		{"a mount quoted as CSV", `[{"type":"named","name":"--mount","value":"\"type=bind,src=/\",dst=/host"}]`, `--mount`},
		{"a file of variables", `[{"type":"named","name":"--env-file","value":".env"}]`, `".env"`},
		{"a mount's default", `[{"type":"named","name":"-v","value":"{src}:/data","variables":{"src":{"default":"/"}}}]`, `"/"`},
		{"a required mount's default", `[{"type":"named","name":"-v","value":"{src}:/data","isRequired":true,"variables":{"src":{"default":"/etc","isRequired":true}}}]`, `"/etc"`},
		{"the publisher's folder under the user's", `[{"type":"named","name":"-v","value":"/{sub}:/data","variables":{"sub":{"isRequired":true}}}]`, `"/x"`},
		{"a variable of the user's environment", `[{"type":"named","name":"-e","value":"AWS_SECRET_ACCESS_KEY"}]`, `AWS_SECRET_ACCESS_KEY`},
		{"one spelt long", `[{"type":"named","name":"--env","value":"GITHUB_TOKEN"}]`, `GITHUB_TOKEN`},
		{"one as a default", `[{"type":"named","name":"-e","value":"{v}","variables":{"v":{"default":"GITHUB_TOKEN"}}}]`, `GITHUB_TOKEN`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			p, err := registry.PlanFor(doc(t, oci(tt.args, `[]`)), nil)
			if err == nil {
				answerAll(p, "x")
				sc, serr := p.Server()
				require.Error(t, serr, "written: %q", sc)
				err = serr
			}
			assert.ErrorIs(t, err, registry.ErrUnsafe)
			assert.ErrorContains(t, err, tt.why)
		})
	}
	taken := []struct{ name, args, env, answer string }{
		{"a named volume", `[{"type":"named","name":"-v","value":"cache:/data"}]`, `[]`, ""},
		{"an anonymous volume", `[{"type":"named","name":"-v","value":"/data"}]`, `[]`, ""},
		{"a path the user gives", `[{"type":"named","name":"-v","value":"{src}:/data","variables":{"src":{"isRequired":true}}}]`, `[]`, "/home/me/project"},
		{"a bind mount the user gives", `[{"type":"named","name":"--mount","value":"type=bind,src={src},dst=/project","variables":{"src":{"isRequired":true}}}]`, `[]`, "/home/me/project"},
		{"a volume mount", `[{"type":"named","name":"--mount","value":"type=volume,src=cache,dst=/c"}]`, `[]`, ""},
		{"a variable set in the container", `[{"type":"named","name":"-e","value":"MODE=fast"}]`, `[]`, ""},
		{"a variable the entry sets", `[{"type":"named","name":"-e","value":"MODE"}]`, `[{"name":"MODE","default":"fast"}]`, ""},
		{"a variable the user names", `[{"type":"named","name":"-e","value":"{v}","variables":{"v":{"isRequired":true}}}]`, `[]`, "MY_VAR"},
	}
	for _, tt := range taken {
		t.Run(tt.name, func(t *testing.T) {
			p, err := registry.PlanFor(doc(t, oci(tt.args, tt.env)), nil)
			require.NoError(t, err)
			answerAll(p, tt.answer)
			_, err = p.Server()
			assert.NoError(t, err)
		})
	}
	t.Run("a host path the user gives stands as given", func(t *testing.T) {
		p, err := registry.PlanFor(doc(t, oci(`[{"type":"named","name":"-v","value":"{src}:/data","isRequired":true,"variables":{"src":{"isRequired":true}}}]`, `[]`)), nil)
		require.NoError(t, err)
		answerAll(p, "/srv/data")
		sc, err := p.Server()
		require.NoError(t, err)
		assert.Equal(t, []string{"run", "-i", "--rm", "-v", "/srv/data:/data", "docker.io/x/a:1.0.0"}, sc.Args)
	})
}
