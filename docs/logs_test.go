package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warnCall is a log line at Warn or Error in the code: logger.Warn("…",
// logger.Error("…", or paging's warn("…".
var warnCall = regexp.MustCompile(`(?:\.(?:Warn|Error)|\bwarn)\(("(?:[^"\\]|\\.)+")`)

// Every line the library logs at Warn or above is in the table of
// observability.md, with why it is logged: the program is told of every
// other failure by what it called.
func TestTheLogTableNamesEveryWarning(t *testing.T) {
	doc, err := os.ReadFile("observability.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "## Logs: what reaches Warn, and why")
	require.True(t, ok)
	found := 0
	for _, root := range []string{"../mcp", "../internal"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "benchcmp") || strings.Contains(path, "oteltest") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range warnCall.FindAllStringSubmatch(string(b), -1) {
				found++
				msg, err := strconv.Unquote(m[1])
				require.NoError(t, err)
				assert.Contains(t, table, "`"+msg+"`",
					"%s logs %q at Warn or above: add it to observability.md's table, with why nothing returns it", path, msg)
			}
			return nil
		})
		require.NoError(t, err)
	}
	assert.Greater(t, found, 20, "the scan found the log lines")
}
