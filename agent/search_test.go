package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/internal/toolfixtures"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseToolSearch(t *testing.T) {
	tests := []struct {
		in   string
		want agent.ToolSearch
		err  bool
	}{
		{"", agent.ToolSearch{Mode: agent.SearchAuto}, false},
		{"auto", agent.ToolSearch{Mode: agent.SearchAuto}, false},
		{"auto:5", agent.ToolSearch{Mode: agent.SearchAuto, Percent: 5}, false},
		{"true", agent.ToolSearch{Mode: agent.SearchOn}, false},
		{"false", agent.ToolSearch{Mode: agent.SearchOff}, false},
		{"auto:x", agent.ToolSearch{}, true},
		{"auto:101", agent.ToolSearch{}, true},
		{"sometimes", agent.ToolSearch{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := agent.ParseToolSearch(tt.in)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// modelFunc is a Model that answers each request with its function, and
// records the requests.
type modelFunc struct {
	answer   func(step int, req *agent.Request) *agent.Response
	requests []agent.Request
}

func (m *modelFunc) Generate(_ context.Context, req *agent.Request, _ func(string)) (*agent.Response, error) {
	m.requests = append(m.requests, *req)
	return m.answer(len(m.requests), req), nil
}

// fixtureManager serves each of the 47 fixture servers' tool lists from an
// mcptest server; a call answers "<server>.<tool> ran".
func fixtureManager(t *testing.T) *mcp.Manager {
	t.Helper()
	servers, err := toolfixtures.Load()
	require.NoError(t, err)
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { m.Close() })
	for _, s := range servers {
		srv := &mcptest.Server{Name: s.Name}
		for _, tool := range s.Tools {
			text := s.Name + "." + tool.Name + " ran"
			srv.AddTool(tool, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
				return mcptest.TextResult(text), nil
			})
		}
		require.NoError(t, m.Add(s.Name, srv.Transport()))
	}
	return m
}

var foundTool = regexp.MustCompile(`(?m)^- (\S+):`)

// Among the 634 tools of 47 real servers, a model that sees only the
// search tool finds the tool it needs and calls it: search, then call.
func TestAModelFindsAndCallsOneToolAmongHundreds(t *testing.T) {
	m := fixtureManager(t)
	model := &modelFunc{answer: func(step int, req *agent.Request) *agent.Response {
		switch step {
		case 1:
			return call(agent.SearchToolName, `{"query": "take a screenshot of the web page"}`)
		case 2:
			// The first tool found, which must now be loaded.
			text := req.Messages[len(req.Messages)-1].Content[0].Content[0].Text
			first := foundTool.FindStringSubmatch(text)
			if first == nil || !slices.ContainsFunc(req.Tools, func(t mcp.Tool) bool { return t.Name == first[1] }) {
				return answer("the tool found was not loaded: " + text)
			}
			return call(first[1], `{}`)
		}
		return answer("done")
	}}
	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{m}, ToolSearch: agent.ToolSearch{Mode: agent.SearchAuto}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := a.Chat(ctx, "Take a screenshot of the page I have open.")
	require.NoError(t, err)
	assert.Equal(t, "done", got)
	require.Len(t, model.requests, 3)

	first := model.requests[0]
	require.Len(t, first.Tools, 1, "634 tools deferred: the first request has only the search tool")
	assert.Equal(t, agent.SearchToolName, first.Tools[0].Name)
	assert.Greater(t, len(model.requests[1].Tools), 1, "the tools found join the next turn")
	result := model.requests[2].Messages[len(model.requests[2].Messages)-1].Content[0]
	require.Equal(t, agent.BlockToolResult, result.Type)
	assert.False(t, result.IsError, "%v", result.Content)
	assert.Contains(t, []string{"chrome-devtools.take_screenshot ran", "playwright.browser_take_screenshot ran", "puppeteer.puppeteer_screenshot ran"}, result.Content[0].Text)
}

// tools is a ToolProvider whose list the test changes.
type tools struct{ list []mcp.Tool }

func (p *tools) Tools(context.Context) ([]mcp.Tool, error) { return p.list, nil }
func (p *tools) CallTool(_ context.Context, name string, _ any) (*mcp.CallToolResult, error) {
	return agent.Text(name + " ran"), nil
}

func named(names ...string) []mcp.Tool {
	var out []mcp.Tool
	for _, n := range names {
		out = append(out, mcp.Tool{Name: n, Description: "Does " + n + ".", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return out
}

func toolNames(ts []mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestDeferral(t *testing.T) {
	t.Run("a tool found stays loaded when the list changes; new tools are deferred", func(t *testing.T) {
		p := &tools{list: named("mcp__a__deploy_service", "mcp__a__rollback_service")}
		model := &modelFunc{answer: func(step int, req *agent.Request) *agent.Response {
			switch step {
			case 1:
				return call(agent.SearchToolName, `{"query": "select:mcp__a__deploy_service"}`)
			case 2:
				p.list = append(named("mcp__b__new_tool"), p.list...) // list_changed, or a reconnection
				return answer("found")
			}
			return answer("again")
		}}
		a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{p}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
		_, err := a.Chat(context.Background(), "deploy")
		require.NoError(t, err)
		_, err = a.Chat(context.Background(), "and again")
		require.NoError(t, err)
		assert.Equal(t, []string{agent.SearchToolName}, toolNames(model.requests[0].Tools))
		assert.Equal(t, []string{"mcp__a__deploy_service", agent.SearchToolName}, toolNames(model.requests[1].Tools))
		assert.Equal(t, []string{"mcp__a__deploy_service", agent.SearchToolName}, toolNames(model.requests[2].Tools), "after the list changed")
	})
	t.Run("a deferred tool's name stays callable", func(t *testing.T) {
		p := &tools{list: named("mcp__a__deploy_service")}
		s := &script{replies: []*agent.Response{call("mcp__a__deploy_service", `{}`), answer("ok")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{p}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
		_, err := a.Chat(context.Background(), "deploy")
		require.NoError(t, err)
		assert.Equal(t, "mcp__a__deploy_service ran", lastResult(t, s).Content[0].Text)
	})
	t.Run("auto defers only past its share of the context", func(t *testing.T) {
		p := &tools{list: named("mcp__a__one", "mcp__a__two")}
		s := &script{replies: []*agent.Response{answer("small"), answer("large")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{p}, ToolSearch: agent.ToolSearch{Mode: agent.SearchAuto}}
		_, err := a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		assert.Equal(t, []string{"mcp__a__one", "mcp__a__two"}, toolNames(s.requests[0].Tools), "two small tools are not worth deferring")
		a.ToolSearch.ContextTokens = 100 // a small model: the same tools pass 10% of it
		_, err = a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		assert.Equal(t, []string{agent.SearchToolName}, toolNames(s.requests[1].Tools))
	})
	t.Run("off sends everything, and no search tool", func(t *testing.T) {
		p := &tools{list: named("mcp__a__one")}
		s := &script{replies: []*agent.Response{answer("ok")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{p}}
		_, err := a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		assert.Equal(t, []string{"mcp__a__one"}, toolNames(s.requests[0].Tools))
	})
	t.Run("alwaysLoad, on a tool and on a config entry", func(t *testing.T) {
		keep := named("mcp__a__keep")[0]
		keep.Meta = json.RawMessage(`{"anthropic/alwaysLoad": true}`)
		drop := named("mcp__a__drop")[0]
		drop.Meta = json.RawMessage(`{"anthropic/alwaysLoad": false}`)
		p := &tools{list: []mcp.Tool{keep, drop}}
		s := &script{replies: []*agent.Response{answer("ok")}}
		a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{p}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
		_, err := a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		assert.Equal(t, []string{"mcp__a__keep", agent.SearchToolName}, toolNames(s.requests[0].Tools))

		entry := func(always bool) map[string]any {
			return map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "basic"}, "alwaysLoad": always}
		}
		raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"always": entry(true), "maybe": entry(false)}})
		cfg, err := config.Parse(strings.NewReader(string(raw)), "x.json")
		require.NoError(t, err)
		require.True(t, cfg.Servers["always"].AlwaysLoad)
		m := mcp.NewManager(cfg, &mcp.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
		defer m.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p = &tools{}
		p.list, err = m.Tools(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, p.list)
		s = &script{replies: []*agent.Response{answer("ok")}}
		a = &agent.Agent{Model: s, Tools: []agent.ToolProvider{p}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
		_, err = a.Chat(context.Background(), "hi")
		require.NoError(t, err)
		for _, tl := range s.requests[0].Tools {
			assert.True(t, strings.HasPrefix(tl.Name, "mcp__always__") || tl.Name == agent.SearchToolName, "%s is loaded", tl.Name)
		}
		assert.Greater(t, len(s.requests[0].Tools), 1, "the tools of the alwaysLoad entry are loaded")
	})
}

// BenchmarkFirstRequest reports the bytes of the first model request's
// tool definitions and sections over the 634 fixture tools, every tool
// sent and with tool search (the search tool, and the section that names
// the deferred tools), as the JSON a model adapter sends.
func BenchmarkFirstRequest(b *testing.B) {
	all, err := toolfixtures.Exposed()
	require.NoError(b, err)
	var eager, deferred, section int
	for b.Loop() {
		eager, deferred, section = firstRequestBytes(b, all)
	}
	b.ReportMetric(float64(eager), "eager-bytes")
	b.ReportMetric(float64(deferred), "deferred-bytes")
	b.ReportMetric(float64(section), "section-bytes")
	b.ReportMetric(100*float64(deferred)/float64(eager), "deferred-%")
	if deferred*20 > eager {
		b.Errorf("deferred %d bytes, more than 5%% of eager %d", deferred, eager)
	}
}

// The search tool's answer lists each tool found with the start of its
// description, cut between characters.
func TestTheSearchAnswerIsValidText(t *testing.T) {
	p := &tools{list: []mcp.Tool{{Name: "mcp__a__café", Description: "cafés " + strings.Repeat("é", 300), InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	s := &script{replies: []*agent.Response{call(agent.SearchToolName, `{"query": "café"}`), answer("ok")}}
	a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{p}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
	_, err := a.Chat(context.Background(), "hi")
	require.NoError(t, err)
	text := lastResult(t, s).Content[0].Text
	assert.True(t, utf8.ValidString(text), "%q", text)
	assert.Contains(t, text, "mcp__a__café: cafés éé")
	assert.Less(t, len(text), 300)
}

// The search tool's answer counts what it found in words that agree with
// the count.
func TestTheSearchAnswerCountsItsTools(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	for _, tt := range []struct {
		name  string
		tools []mcp.Tool
		want  string
	}{
		{"one tool found is one tool", []mcp.Tool{{Name: "mcp__a__weather", Description: "weather", InputSchema: schema}}, "Found 1 tool; it can be called from now on:\n"},
		{"two tools found are two tools", []mcp.Tool{{Name: "mcp__a__weather", Description: "weather", InputSchema: schema}, {Name: "mcp__b__weather", Description: "weather", InputSchema: schema}}, "Found 2 tools; they can be called from now on:\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{replies: []*agent.Response{call(agent.SearchToolName, `{"query": "weather"}`), answer("ok")}}
			a := &agent.Agent{Model: s, Tools: []agent.ToolProvider{&tools{list: tt.tools}}, ToolSearch: agent.ToolSearch{Mode: agent.SearchOn}}
			_, err := a.Chat(context.Background(), "hi")
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(lastResult(t, s).Content[0].Text, tt.want), "%q", lastResult(t, s).Content[0].Text)
		})
	}
}
