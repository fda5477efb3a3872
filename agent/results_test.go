package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/agent/anthropic"
	"github.com/mcplug/mcplug/internal/mockllm"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// reader is a Model that reads back a result kept in a file: on its
// first turn it calls the tool, then reads the kept file range after
// range, following each answer's "next offset", and answers with what it
// read: the head the result gave and every range, joined.
type reader struct {
	tool     string
	length   int // bytes asked a read; 0 asks for no length
	path     string
	got      strings.Builder
	requests []*agent.Request
	reads    int
}

var (
	keptPath = regexp.MustCompile(`kept whole in the file (\S+) \(`)
	headOf   = regexp.MustCompile(`(?s)^\[This result is [^\n]*\]\n(.*)\n\[… [0-9,]+ more bytes: read_tool_result \{"path": "[^"]*", "offset": (\d+)\}\]$`)
	rangeOf  = regexp.MustCompile(`(?s)^\[bytes (\d+) to (\d+) of (\d+) \(lines (\d+) to (\d+) of (\d+)\) of (\S+); (next offset (\d+)|that is the end of the file)\]\n(.*)$`)
)

func (r *reader) Generate(_ context.Context, req *agent.Request, _ func(string)) (*agent.Response, error) {
	r.requests = append(r.requests, req)
	if len(req.Messages) == 1 {
		return call(r.tool, `{}`), nil
	}
	last := req.Messages[len(req.Messages)-1].Content[0]
	if last.IsError {
		return nil, fmt.Errorf("reader: the tool failed: %s", last.Content[0].Text)
	}
	text := last.Content[0].Text
	next := 0
	if r.path == "" {
		m := keptPath.FindStringSubmatch(text)
		h := headOf.FindStringSubmatch(text)
		if m == nil || h == nil {
			return nil, fmt.Errorf("reader: no kept file named in %.300q", text)
		}
		r.path = m[1]
		r.got.WriteString(h[1])
		next, _ = strconv.Atoi(h[2])
	} else {
		m := rangeOf.FindStringSubmatch(text)
		if m == nil {
			return nil, fmt.Errorf("reader: not a range: %.300q", text)
		}
		if start, _ := strconv.Atoi(m[1]); start != r.got.Len() {
			return nil, fmt.Errorf("reader: the range starts at %d, after %d bytes read", start, r.got.Len())
		}
		r.got.WriteString(m[10])
		if m[9] == "" {
			return answer("read it all"), nil
		}
		next, _ = strconv.Atoi(m[9])
	}
	r.reads++
	in := map[string]any{"path": r.path, "offset": next}
	if r.length > 0 {
		in["length"] = r.length
	}
	b, _ := json.Marshal(in)
	return &agent.Response{Content: []agent.Block{{Type: agent.BlockToolUse, ID: fmt.Sprintf("read-%d", r.reads), Name: agent.ReadResultToolName, Input: b}}}, nil
}

// bigText is n bytes of lines of text, some of them multi-byte, some
// long.
func bigText(n int) string {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	words := []string{"log", "entry", "é", "naïve", "日本語", "🙂", "{\"k\": 1}", "\t", "x"}
	for b.Len() < n {
		for range r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		if r.IntN(50) == 0 {
			b.WriteString(strings.Repeat("long-", 20_000)) // a line of 100 KB
		}
		b.WriteByte('\n')
	}
	s := b.String()
	for len(s) > n { // cut to n bytes, on a character's start
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "")
}

func TestALargeResultIsReadBackWhole(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	text := bigText(2 << 20)
	srv := &mcptest.Server{}
	srv.AddTool(mcp.Tool{Name: "logs"}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
		return mcptest.TextResult(text), nil
	})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: quietLog})
	defer m.Close()
	require.NoError(t, m.Add("server", srv.Transport()))
	dir := t.TempDir()
	r := &reader{tool: "mcp__server__logs"}
	a := &agent.Agent{Model: r, Tools: []agent.ToolProvider{m}, ResultDir: dir, MaxSteps: 100}
	got, err := a.Chat(context.Background(), "read the logs")
	require.NoError(t, err)
	assert.Equal(t, "read it all", got)
	require.Equal(t, len(text), r.got.Len(), "every byte was read back")
	assert.True(t, r.got.String() == text, "every byte is the server's")
	t.Logf("%d bytes read back in the head and %d reads", len(text), r.reads)
	t.Logf("the model got: %.700s", r.requests[1].Messages[2].Content[0].Content[0].Text)

	first := r.requests[1].Messages[2].Content[0].Content[0].Text
	assert.Contains(t, first, fmt.Sprintf("[This result is %s bytes in %s lines, about %s tokens: more than the 25,000 tokens a tool result may take",
		commas(len(text)), commas(strings.Count(text, "\n")+1), commas((len(text)+3)/4)))
	assert.Contains(t, first, "(plain text)")
	assert.Less(t, len(first), 12_000, "the model gets the head of it")
	for i, req := range r.requests {
		for _, m := range req.Messages {
			for _, b := range m.Content {
				for _, c := range b.Content {
					assert.LessOrEqual(t, len(c.Text), 50_300, "request %d: every text the model gets is bounded", i)
				}
			}
		}
		names := toolNamesOf(req.Tools)
		assert.Equal(t, i > 0, slices.Contains(names, agent.ReadResultToolName), "request %d: the read tool once a result is kept", i)
	}

	info, err := os.Stat(r.path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	folder := filepath.Dir(r.path)
	assert.Equal(t, dir, filepath.Dir(folder), "in a folder of its own in ResultDir")
	info, err = os.Stat(folder)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	require.NoError(t, a.Close())
	_, err = os.Stat(folder)
	assert.True(t, errors.Is(err, os.ErrNotExist), "Close removes the folder")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "and leaves nothing behind")
	require.NoError(t, a.Close(), "Close twice is fine")
}

func TestTheReadToolReadsOnlyItsOwnFiles(t *testing.T) {
	text := strings.Repeat("0123456789\n", 20_000) // 220,000 bytes
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("the secret"), 0o600))
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "dump"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return agent.Text(text), nil
	}}}
	read := func(path string, offset, length int) *agent.Response {
		b, _ := json.Marshal(map[string]any{"path": path, "offset": offset, "length": length})
		return &agent.Response{Content: []agent.Block{{Type: agent.BlockToolUse, ID: "r", Name: agent.ReadResultToolName, Input: b}}}
	}
	first := &script{replies: []*agent.Response{call("dump", `{}`), answer("ok")}}
	a := &agent.Agent{Model: first, Tools: []agent.ToolProvider{tools}, ResultDir: dir}
	defer a.Close()
	_, err := a.Chat(context.Background(), "dump")
	require.NoError(t, err)
	kept := keptPath.FindStringSubmatch(lastResult(t, first).Content[0].Text)
	require.NotNil(t, kept)
	path := kept[1]

	tests := []struct {
		name    string
		call    *agent.Response
		isError bool
		has     string
	}{
		{"a file of another", read(secret, 0, 100), true, "not a file this agent kept"},
		{"a path that leads out of the folder", read(filepath.Join(filepath.Dir(path), "..", "secret.txt"), 0, 100), true, "not a file this agent kept"},
		{"the folder itself", read(filepath.Dir(path), 0, 100), true, "not a file this agent kept"},
		{"an offset past the end", read(path, 220_000, 100), true, "outside the file"},
		{"a negative offset", read(path, -1, 100), true, "outside the file"},
		{"a range within the file", read(path, 11, 22), false, "[bytes 11 to 32 of 220000 (lines 2 to 3 of 20000) of " + path + "; next offset 33]\n0123456789\n0123456789\n"},
		{"a length past the bound is cut to it", read(path, 0, 10_000_000), false, "[bytes 0 to 49999 of 220000"},
		{"the end", read(path, 219_989, 100), false, "[bytes 219989 to 219999 of 220000 (lines 20000 to 20000 of 20000) of " + path + "; that is the end of the file]\n0123456789\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{replies: []*agent.Response{tt.call, answer("ok")}}
			a.Model = s
			_, err := a.Chat(context.Background(), "read")
			require.NoError(t, err)
			res := lastResult(t, s)
			assert.Equal(t, tt.isError, res.IsError)
			assert.Contains(t, res.Content[0].Text, tt.has)
			assert.NotContains(t, res.Content[0].Text, "the secret")
		})
	}
	t.Run("after Close the files are gone", func(t *testing.T) {
		require.NoError(t, a.Close())
		s := &script{replies: []*agent.Response{read(path, 0, 10), answer("ok")}}
		a.Model = s
		_, err := a.Chat(context.Background(), "read")
		require.NoError(t, err)
		res := lastResult(t, s)
		assert.True(t, res.IsError)
		assert.NotContains(t, toolNamesOf(s.requests[0].Tools), agent.ReadResultToolName, "nothing to read: no read tool")
	})
}

func TestTheCapOfAResult(t *testing.T) {
	text := strings.Repeat("abcd", 30_000) // 120,000 bytes: 30,000 tokens at four bytes a token
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "t"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return agent.Text(text), nil
	}}}
	tests := []struct {
		name    string
		env     string
		tokens  int
		counter func(string) int
		kept    bool
		counted bool
	}{
		{"past Claude Code's 25,000 tokens it is kept", "", 0, nil, true, false},
		{"MAX_MCP_OUTPUT_TOKENS raises the cap", "40000", 0, nil, false, false},
		{"MaxResultTokens over MAX_MCP_OUTPUT_TOKENS", "40000", 20_000, nil, true, false},
		{"a counter is asked in doubt, and decides", "", 0, func(string) int { return 24_000 }, false, true},
		{"a count of zero leaves the estimate", "", 0, func(string) int { return 0 }, true, true},
		{"a negative count leaves the estimate", "", 0, func(string) int { return -1 }, true, true},
		{"a counter is not asked far under the cap", "", 1_000_000, func(string) int { panic("asked") }, false, false},
		{"a counter is not asked far past the cap", "", 5_000, func(string) int { panic("asked") }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MAX_MCP_OUTPUT_TOKENS", tt.env)
			counted := false
			count := tt.counter
			if count != nil {
				count = func(s string) int { counted = true; return tt.counter(s) }
			}
			s := &script{replies: []*agent.Response{call("t", `{}`), answer("ok")}}
			a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}, ResultDir: t.TempDir(), MaxResultTokens: tt.tokens, CountTokens: count}
			defer a.Close()
			_, err := a.Chat(context.Background(), "go")
			require.NoError(t, err)
			got := lastResult(t, s).Content[0].Text
			if tt.kept {
				assert.Regexp(t, `^\[This result is 120,000 bytes in 1 lines`, got)
			} else {
				assert.Equal(t, text, got)
			}
			assert.Equal(t, tt.counted, counted)
		})
	}
}

func TestASubAgentKeepsItsResultsWithItsParent(t *testing.T) {
	text := strings.Repeat("x", 200_000)
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "t"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return agent.Text(text), nil
	}}}
	dir := t.TempDir()
	parent := &agent.Agent{Model: &script{}, ResultDir: dir}
	s := &script{replies: []*agent.Response{call("t", `{}`), answer("ok")}}
	sub := parent.SubAgent("helper", tools)
	sub.Model = s
	_, err := sub.Chat(context.Background(), "go")
	require.NoError(t, err)
	path := keptPath.FindStringSubmatch(lastResult(t, s).Content[0].Text)[1]
	require.NoError(t, sub.Close())
	_, err = os.Stat(path)
	require.NoError(t, err, "a SubAgent's Close leaves its parent's results")
	require.NoError(t, parent.Close())
	_, err = os.Stat(path)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the parent's Close removes them")
}

func toolNamesOf(tools []mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func TestAResultThatCannotBeKeptIsCutWithANote(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "t"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return agent.Text(strings.Repeat("y", 200_000)), nil
	}}}
	s := &script{replies: []*agent.Response{call("t", `{}`), answer("ok")}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{tools}, ResultDir: filepath.Join(file, "under")} // no folder can be made there
	defer a.Close()
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	got := lastResult(t, s).Content[0].Text
	assert.Contains(t, got, "\n[truncated: showing 100000 of 200000 bytes]\n[the whole result of 200000 bytes could not be kept for reading: ")
	assert.Less(t, len(got), 100_400)
	assert.NotContains(t, toolNamesOf(s.requests[1].Tools), agent.ReadResultToolName)
}

// A result four bytes a token leave under the cap, but in doubt, is
// counted as the Messages API counts it (agent/anthropic asks
// count_tokens): past the cap by that count, it is kept in a file.
func TestTheModelsAPICountsAResultInDoubt(t *testing.T) {
	tests := []struct {
		name    string
		bytes   int
		asked   bool
		kept    bool
		summary string
	}{
		{"in doubt, counted past the cap", 80_000, true, true, "[This result is 80,000 bytes in 1 lines, about 26,667 tokens: more than the 25,000 tokens"},
		{"in doubt, counted under the cap", 72_000, true, false, ""},
		{"well under the cap, not asked", 48_000, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Repeat("abcd", tt.bytes/4)
			tools := agent.Funcs{{Tool: mcp.Tool{Name: "t"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return agent.Text(text), nil
			}}}
			mock, err := mockllm.Start(mockllm.Turn{ToolCalls: []mockllm.ToolCall{{Name: "t"}}}, mockllm.Turn{Text: "ok"})
			require.NoError(t, err)
			defer mock.Close()
			model := anthropic.New(option.WithBaseURL(mock.URL), option.WithAPIKey("k"))
			a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{tools}, ResultDir: t.TempDir()}
			defer a.Close()
			_, err = a.Chat(context.Background(), "go")
			require.NoError(t, err)

			counts := mock.CountRequests()
			if !tt.asked {
				assert.Empty(t, counts)
			} else {
				require.Len(t, counts, 1)
				var req struct {
					Model    string `json:"model"`
					Messages []struct {
						Role    string `json:"role"`
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"messages"`
				}
				require.NoError(t, json.Unmarshal(counts[0], &req))
				require.Len(t, req.Messages, 1)
				assert.Equal(t, "user", req.Messages[0].Role)
				assert.True(t, req.Messages[0].Content[0].Text == text, "the result's text is what is counted")
				assert.Equal(t, model.Name(), req.Model)
			}
			var sent struct {
				Messages []struct {
					Content []struct {
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"content"`
				} `json:"messages"`
			}
			requests := mock.Requests()
			require.Len(t, requests, 2)
			require.NoError(t, json.Unmarshal(requests[1], &sent))
			got := sent.Messages[len(sent.Messages)-1].Content[0].Content[0].Text
			if tt.kept {
				assert.True(t, strings.HasPrefix(got, tt.summary), "%.200s", got)
			} else {
				assert.True(t, got == text, "sent whole: %.200s", got)
			}
		})
	}
}

// failingCounter is a Model whose token counts fail.
type failingCounter struct{ *script }

func (failingCounter) CountTokens(context.Context, string) (int, error) {
	return 0, errors.New("count_tokens: 529 overloaded")
}

func TestACountThatFailsLeavesTheEstimate(t *testing.T) {
	text := strings.Repeat("abcd", 24_000) // 24,000 tokens at four bytes a token
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "t"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return agent.Text(text), nil
	}}}
	s := &script{replies: []*agent.Response{call("t", `{}`), answer("ok"), call("t", `{}`), answer("ok")}}
	a := &agent.Agent{Model: failingCounter{s}, Tools: []agent.ToolProvider{tools}, ResultDir: t.TempDir()}
	defer a.Close()
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	assert.True(t, lastResult(t, s).Content[0].Text == text, "under the cap by the estimate")

	a.CountTokens = func(string) int { return 30_000 }
	_, err = a.Chat(context.Background(), "again")
	require.NoError(t, err)
	assert.Regexp(t, `^\[This result is 96,000 bytes in 1 lines, about 30,000 tokens`, lastResult(t, s).Content[0].Text, "Agent.CountTokens comes before the Model's")
}
