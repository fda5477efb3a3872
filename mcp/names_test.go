package mcp_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManagerNames(t *testing.T) {
	noLeaks(t)
	long := strings.Repeat("very_long_tool_name_", 4) + "xxxxxxxxxx" // 90 bytes
	require.Len(t, long, 90)
	srv := namingServer
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("my server", srv("get.file").Transport()))
	require.NoError(t, m.Add("données", srv("créer").Transport()))
	require.NoError(t, m.Add("a__b", srv("c__d", long).Transport()))
	require.NoError(t, m.Add("dup.x", srv("same").Transport()))
	require.NoError(t, m.Add("dup_x", srv("same").Transport()))

	tools, err := m.Tools(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	names := map[string]bool{}
	for _, tl := range tools {
		assert.Regexp(t, valid, tl.Name)
		assert.False(t, names[tl.Name], "names are unique: %s", tl.Name)
		names[tl.Name] = true
	}
	assert.True(t, names["mcp__my_server__get_file"])
	assert.True(t, names["mcp__donn_es__cr_er"], "each non-ASCII rune becomes one _")
	assert.True(t, names["mcp__a__b__c__d"])
	longName := mcp.ExposedName("a__b", long)
	assert.Len(t, longName, 64)
	assert.True(t, names[longName])
	assert.Equal(t, longName, mcp.ExposedName("a__b", long), "shortening is stable")
	assert.NotEqual(t, longName, mcp.ExposedName("a__b", long+"2"), "shortened names stay distinct")
	assert.False(t, names["mcp__dup_x__same"], "colliding names are not shadowed: neither keeps the plain name")
	assert.Len(t, tools, 6)

	// Every exposed name routes back to its server and tool.
	for _, tl := range tools {
		res, err := m.CallTool(ctxTimeout(t, 5*time.Second), tl.Name, nil)
		require.NoError(t, err, tl.Name)
		want := map[string]string{
			"mcp__my_server__get_file": "get.file", "mcp__donn_es__cr_er": "créer",
			"mcp__a__b__c__d": "c__d", longName: long,
		}[tl.Name]
		if want == "" {
			want = "same"
		}
		assert.Equal(t, want, res.Text(), tl.Name)
		assert.Contains(t, tl.Description, "MCP tool ", "a tool without a description gets one")
	}

	st := statusOf(m)
	require.Len(t, st["dup.x"].Warnings, 1, "the collision is reported for both servers")
	require.Len(t, st["dup_x"].Warnings, 1)
	assert.Contains(t, st["dup.x"].Warnings[0], "mcp__dup_x__same")

	_, err = m.CallTool(ctxTimeout(t, 5*time.Second), "mcp__nope__nothing", nil)
	assert.ErrorIs(t, err, mcp.ErrUnknownTool)
	assert.Contains(t, err.Error(), "mcp__nope__nothing")
}

func TestManagerExposedNamesAreUnique(t *testing.T) {
	noLeaks(t)
	echoing := namingServer
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("twice", echoing("same", "same", "other").Transport()))
	require.NoError(t, m.Add("a", echoing("_x").Transport()))
	require.NoError(t, m.Add("a_", echoing("x").Transport()))
	require.NoError(t, m.Add("b", echoing("y", "y.").Transport()))

	tools, err := m.Tools(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, tl := range tools {
		assert.False(t, seen[tl.Name], "exposed twice: %s", tl.Name)
		seen[tl.Name] = true
	}
	assert.Len(t, tools, 6, "a tool listed twice is exposed once")
	assert.False(t, seen["mcp__a___x"], "neither of two colliding servers keeps the plain name")
	st := statusOf(m)
	require.NotEmpty(t, st["twice"].Warnings)
	assert.Contains(t, st["twice"].Warnings[0], "more than once")
	assert.NotEmpty(t, st["a"].Warnings)
	assert.NotEmpty(t, st["a_"].Warnings)
	for _, tl := range tools { // each routes to its own tool
		res, err := m.CallTool(ctxTimeout(t, 5*time.Second), tl.Name, nil)
		require.NoError(t, err)
		assert.NotEmpty(t, res.Text())
	}
}
