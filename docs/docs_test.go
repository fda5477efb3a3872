// Package docs holds the guides; its test keeps their code compiled and
// their outputs true: every Go block of README.md and docs/*.md is an
// excerpt of an Example function (marked <!-- example: DIR NAME --> on
// the line before it; go test compiles the Example and checks its
// Output), or a whole program, which the test builds.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guides are the files whose code is checked, from this folder.
func guides(t *testing.T) []string {
	files, err := filepath.Glob("*.md")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return append([]string{"../README.md"}, files...)
}

// block is a fenced code block of a guide.
type block struct {
	file   string
	line   int // of its opening fence
	lang   string
	marker string // the line before the fence
	lines  []string
}

var fence = regexp.MustCompile("^```([a-z]*)$")

func blocks(t *testing.T, file string) []block {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		bl := block{file: file, line: i + 1, lang: m[1]}
		if i > 0 {
			bl.marker = strings.TrimSpace(lines[i-1])
		}
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			bl.lines = append(bl.lines, lines[i])
		}
		require.Less(t, i, len(lines), "%s:%d: a code block that does not end", file, bl.line)
		out = append(out, bl)
	}
	return out
}

var exampleMarker = regexp.MustCompile(`^<!-- example: (\S+) (Example\w*) -->$`)

// normalize makes lines comparable whatever their alignment.
func normalize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.Join(strings.Fields(l), " ")
	}
	return out
}

// exampleBody returns the lines of the body of the Example name among the
// test files of dir (relative to the repository root).
func exampleBody(t *testing.T, dir, name string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*_test.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != name || fn.Recv != nil {
				continue
			}
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			return strings.Split(strings.Trim(body, "\n"), "\n")
		}
	}
	t.Fatalf("no %s in %s", name, dir)
	return nil
}

func TestTheGuidesCodeIsCompiledAndRun(t *testing.T) {
	programs := 0
	for _, file := range guides(t) {
		for _, b := range blocks(t, file) {
			if b.lang != "go" {
				continue
			}
			where := b.file + ":" + strconv.Itoa(b.line)
			if m := exampleMarker.FindStringSubmatch(b.marker); m != nil {
				body := normalize(exampleBody(t, m[1], m[2]))
				excerpt := normalize(b.lines)
				assert.True(t, contains(body, excerpt), "%s: the block is not an excerpt of %s in %s; the Example reads:\n%s", where, m[2], m[1], strings.Join(exampleBody(t, m[1], m[2]), "\n"))
				continue
			}
			if len(b.lines) > 0 && strings.HasPrefix(b.lines[0], "package main") {
				programs++
				build(t, where, strings.Join(b.lines, "\n")+"\n")
				continue
			}
			t.Errorf("%s: a Go block must be an excerpt of an Example (<!-- example: DIR NAME --> before it) or a whole program", where)
		}
	}
	assert.Positive(t, programs, "the quick start is a program")
}

// contains reports whether excerpt is a run of body's lines.
func contains(body, excerpt []string) bool {
	if len(excerpt) == 0 {
		return false
	}
	for i := 0; i+len(excerpt) <= len(body); i++ {
		if slices.Equal(body[i:i+len(excerpt)], excerpt) {
			return true
		}
	}
	return false
}

// build compiles a guide's program inside the module, so that its
// imports of mcplug resolve to this tree.
func build(t *testing.T, where, src string) {
	t.Helper()
	dir, err := os.MkdirTemp("..", ".guide-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "%s: the program does not build:\n%s", where, out)
}

var link = regexp.MustCompile(`\]\(([^)#:]+\.md)(#[^)]*)?\)`)

func TestTheGuidesLinksLead(t *testing.T) {
	for _, file := range guides(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := filepath.Join(filepath.Dir(file), m[1])
			_, err := os.Stat(target)
			assert.NoError(t, err, "%s links to %s", file, m[1])
		}
	}
}
