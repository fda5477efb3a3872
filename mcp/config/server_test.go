package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/mcp/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigExpansion(t *testing.T) {
	t.Setenv("MCPLUG_TEST_SET", "value")
	t.Setenv("MCPLUG_TEST_EMPTY", "")
	os.Unsetenv("MCPLUG_TEST_UNSET")
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": {
		"ok": {
			"command": "${MCPLUG_TEST_SET}/bin",
			"args": ["--a=${MCPLUG_TEST_SET}", "--b=${MCPLUG_TEST_UNSET:-fallback}", "--c=${MCPLUG_TEST_EMPTY:-not used}", "--d=[${MCPLUG_TEST_EMPTY}]", "plain $HOME"],
			"env": {"TOKEN": "${MCPLUG_TEST_SET}-${MCPLUG_TEST_SET}"},
			"cwd": "${MCPLUG_TEST_UNSET:-/tmp}"
		},
		"remote": {"type": "http", "url": "https://${MCPLUG_TEST_UNSET:-example.com}/mcp", "headers": {"Authorization": "Bearer ${MCPLUG_TEST_SET}"}},
		"missing": {"command": "x", "args": ["${MCPLUG_TEST_UNSET}"]},
		"unclosed": {"command": "x", "env": {"A": "${MCPLUG_TEST_SET"}}
	}}`), "cfg.json")
	require.Error(t, err)

	ok := cfg.Servers["ok"]
	require.NoError(t, ok.Err)
	assert.Equal(t, "value/bin", ok.Command)
	assert.Equal(t, []string{"--a=value", "--b=fallback", "--c=", "--d=[]", "plain $HOME"}, ok.Args, "a default is for an unset variable, not an empty one")
	assert.Equal(t, map[string]string{"TOKEN": "value-value"}, ok.Env)
	assert.Equal(t, "/tmp", ok.Cwd)

	remote := cfg.Servers["remote"]
	require.NoError(t, remote.Err)
	assert.Equal(t, "https://example.com/mcp", remote.URL)
	assert.Equal(t, "Bearer value", remote.Headers["Authorization"])

	var ce *config.Error
	require.ErrorAs(t, cfg.Servers["missing"].Err, &ce)
	assert.Contains(t, ce.Error(), "MCPLUG_TEST_UNSET is not set")
	require.ErrorAs(t, cfg.Servers["unclosed"].Err, &ce)
	assert.Contains(t, ce.Error(), "not closed")
	assert.NotContains(t, ce.Error(), "MCPLUG_TEST_SET", "a config error never quotes the value")
}

func TestConfigExpansionNestedDefaults(t *testing.T) {
	t.Setenv("MCPLUG_TEST_SET", "value")
	os.Unsetenv("MCPLUG_TEST_UNSET")
	deep := "${MCPLUG_TEST_UNSET:-" + strings.Repeat("${MCPLUG_TEST_UNSET:-", 9) + "x" + strings.Repeat("}", 10)
	tests := []struct {
		name, value, want, err string
	}{
		{"a default that names a set variable", "${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_SET}}", "value", ""},
		{"a default nested twice", "a${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_SET}/b}}c", "avalue/bc", ""},
		{"a set variable ignores its nested default", "${MCPLUG_TEST_SET:-${MCPLUG_TEST_UNSET}}", "value", ""},
		{"a nested default that is unset", "${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_UNSET}}", "", "MCPLUG_TEST_UNSET is not set"},
		{"a nested default not closed", "${MCPLUG_TEST_UNSET:-${MCPLUG_TEST_SET}", "", "not closed"},
		{"defaults nested too deep", deep, "", "nested more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(map[string]any{"s": map[string]any{"command": "run", "args": []string{tt.value}}})
			require.NoError(t, err)
			cfg, _ := config.Parse(strings.NewReader(string(b)), "cfg.json")
			sc := cfg.Servers["s"]
			if tt.err != "" {
				require.Error(t, sc.Err)
				assert.Contains(t, sc.Err.Error(), tt.err)
				return
			}
			require.NoError(t, sc.Err)
			assert.Equal(t, []string{tt.want}, sc.Args)
			assert.NotContains(t, sc.Args[0], "${", "never a literal ${")
		})
	}
}

func TestOAuthIssuerIsRead(t *testing.T) {
	t.Setenv("MCPLUG_TEST_ISSUER", "https://login.example.com")
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": {"r": {"type": "http", "url": "https://mcp.example/mcp",
		"oauth": {"grant": "client_credentials", "clientId": "m", "clientSecret": "s", "issuer": "${MCPLUG_TEST_ISSUER}"}}}}`), "cfg.json")
	require.NoError(t, err)
	require.NotNil(t, cfg.Servers["r"].OAuth)
	assert.Equal(t, "https://login.example.com", cfg.Servers["r"].OAuth.Issuer, "the credentials' issuer, expanded")
	assert.NotContains(t, cfg.Servers["r"].Extra, "oauth")
}

func TestCmdRunsWhereTheEntrySays(t *testing.T) {
	tests := []struct {
		name, cwd, workDir, projectDir, wantDir string
	}{
		{"no cwd runs in WorkDir", "", "/work", "/proj", "/work"},
		{"a relative cwd is taken from WorkDir", "sub", "/work", "/proj", "/work/sub"},
		{"an absolute cwd is kept", "/abs", "/work", "/proj", "/abs"},
		{"without WorkDir, ProjectDir", "sub", "", "/proj", "/proj/sub"},
		{"a program's own entry runs where the program does", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &config.Server{Command: "srv", Args: []string{"-x"}, Cwd: tt.cwd, WorkDir: tt.workDir, ProjectDir: tt.projectDir}
			cmd := sc.Cmd()
			assert.Equal(t, []string{"srv", "-x"}, cmd.Args)
			assert.Equal(t, filepath.FromSlash(tt.wantDir), cmd.Dir)
			if tt.projectDir == "" {
				assert.Nil(t, cmd.Env, "the program's environment, unchanged")
			} else {
				assert.Contains(t, cmd.Env, "CLAUDE_PROJECT_DIR="+tt.projectDir)
			}
		})
	}
	t.Run("Env is added after the program's environment, and wins", func(t *testing.T) {
		t.Setenv("MCPLUG_TEST_CMD", "program")
		cmd := (&config.Server{Command: "srv", Env: map[string]string{"MCPLUG_TEST_CMD": "entry", "B": "2"}}).Cmd()
		require.NotNil(t, cmd.Env)
		assert.Equal(t, []string{"B=2", "MCPLUG_TEST_CMD=entry"}, cmd.Env[len(cmd.Env)-2:])
		assert.NotSame(t, cmd, (&config.Server{Command: "srv"}).Cmd())
	})
}

func TestVariablesAreWhatAnEntryNames(t *testing.T) {
	t.Setenv("MCPLUG_TEST_SET", "v")
	cfg, _ := config.Parse(strings.NewReader(`{"mcpServers": {
		"s": {"command": "${MCPLUG_TEST_SET}", "args": ["--k=${MCPLUG_TEST_UNSET_A}-${MCPLUG_TEST_UNSET_B}"],
			"env": {"K": "${MCPLUG_TEST_SET:-${MCPLUG_TEST_DEFAULT}}"}},
		"h": {"type": "http", "url": "https://h.example/${MCPLUG_TEST_PATH:-mcp}", "headers": {"Authorization": "Bearer ${MCPLUG_TEST_TOKEN}"}},
		"none": {"command": "x"},
		"helper": {"type": "http", "url": "https://${MCPLUG_TEST_HOST:-h.example}/mcp",
			"headersHelper": "printf '{\"Authorization\": \"Bearer %s\"}' \"$MCPLUG_TEST_TOKEN\" ${MCPLUG_TEST_HEADER:-x} $_mcplug_test_2 $1 $$ $ {X}"}
	}}`), "test.json")
	require.NotNil(t, cfg.Servers["s"].Err, "an unset variable fails the entry")
	assert.Equal(t, []string{"MCPLUG_TEST_DEFAULT", "MCPLUG_TEST_SET", "MCPLUG_TEST_UNSET_A", "MCPLUG_TEST_UNSET_B"}, cfg.Servers["s"].Variables(),
		"every name, set or not, a default's too, also after one that is not set")
	assert.Equal(t, []string{"MCPLUG_TEST_PATH", "MCPLUG_TEST_TOKEN"}, cfg.Servers["h"].Variables())
	assert.Empty(t, cfg.Servers["none"].Variables())
	assert.Equal(t, []string{"MCPLUG_TEST_HEADER", "MCPLUG_TEST_HOST", "MCPLUG_TEST_TOKEN", "_mcplug_test_2"}, cfg.Servers["helper"].Variables(),
		"the headersHelper's, as the shell that runs it reads them")
	assert.Empty(t, (&config.Server{Command: "${X}"}).Variables(), "a Server made in code was read from no entry")
}
