package mcp_test

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A newcomer's first page: the package doc opens with Connection, the
// Manager and the transports, and names the host features only after
// them.
func TestThePackageDocStartsWithTheEntryPoints(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	headings := []string{}
	for _, line := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			headings = append(headings, h)
		}
	}
	require.NotEmpty(t, headings)
	assert.Equal(t, "Start here", headings[0])
	start, _, _ := strings.Cut(doc, "# "+headings[1])
	last := 0
	for _, first := range []string{"[Connection]", "[Connect]", "[Manager]", "[LoadConfig]", "[Manager.Add]", "[CommandTransport]", "[StreamableHTTPTransport]", "[NewInMemoryTransports]"} {
		i := strings.Index(start, first)
		assert.Greater(t, i, -1, "%s is in the first section", first)
		assert.GreaterOrEqual(t, i, last, "%s comes after the entry points before it", first)
		last = max(last, i)
	}
	for _, later := range []string{"[SamplingHandler]", "[Task]", "[UIExtension]", "[Authorizer]", "[Observer]"} {
		i := strings.Index(start, later)
		assert.Greater(t, i, last, "%s comes after the entry points", later)
	}
}
