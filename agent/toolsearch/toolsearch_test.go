package toolsearch_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/agent/toolsearch"
	"github.com/mcplug/mcplug/internal/toolfixtures"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// task is what a user would type, and the tools (server.tool) that do it.
type task struct {
	query string
	want  []string
}

// tasks is a set of things users ask for over the 47 fixture servers: a
// sentence each, in the user's words rather than the tools'.
var tasks = []task{
	{"open a pull request on GitHub from my feature branch", []string{"github.create_pull_request"}},
	{"merge the pull request once the review passed", []string{"github.merge_pull_request", "gitlab.merge_merge_request"}},
	{"show me which files changed in pull request 42", []string{"github.get_pull_request_files", "gitlab.list_merge_request_changed_files"}},
	{"stage my changes for the next commit", []string{"git.git_add"}},
	{"commit the staged changes with a message", []string{"git.git_commit"}},
	{"see who last changed each line of main.go", []string{"git.git_blame"}},
	{"temporarily put away my uncommitted work", []string{"git.git_stash"}},
	{"show the commit history of the repository", []string{"git.git_log", "github.list_commits"}},
	{"take a screenshot of the current web page", []string{"chrome-devtools.take_screenshot", "playwright.browser_take_screenshot", "puppeteer.puppeteer_screenshot"}},
	{"click the login button on the page", []string{"chrome-devtools.click", "playwright.browser_click", "puppeteer.puppeteer_click"}},
	{"run a Lighthouse audit of the site", []string{"chrome-devtools.lighthouse_audit"}},
	{"list the network requests the page made", []string{"chrome-devtools.list_network_requests", "playwright.browser_network_requests"}},
	{"search the web for the latest Go release notes", []string{"brave-search.brave_web_search", "tavily.tavily_search", "firecrawl.firecrawl_search"}},
	{"find coffee shops near me", []string{"brave-search.brave_local_search", "google-maps.maps_search_places"}},
	{"get driving directions from Berlin to Munich", []string{"google-maps.maps_directions"}},
	{"convert this street address to latitude and longitude", []string{"google-maps.maps_geocode"}},
	{"draw a pie chart of our revenue by region", []string{"antv-chart.generate_pie_chart"}},
	{"make a line chart of the temperature over time", []string{"antv-chart.generate_line_chart"}},
	{"create a mind map of the project plan", []string{"antv-chart.generate_mind_map"}},
	{"post a message to the general Slack channel", []string{"slack.slack_post_message"}},
	{"reply in a Slack thread", []string{"slack.slack_reply_to_thread"}},
	{"add an emoji reaction to a slack message", []string{"slack.slack_add_reaction"}},
	{"run a SQL query against the database", []string{"dbhub-sqlite.execute_sql", "postgres.query"}},
	{"list the pods in the kube-system namespace", []string{"kubernetes-go.pods_list_in_namespace", "kubernetes-go.pods_list", "kubernetes-ts.kubectl_get"}},
	{"show the logs of a crashing pod", []string{"kubernetes-go.pods_log", "kubernetes-ts.kubectl_logs"}},
	{"scale the deployment to three replicas", []string{"kubernetes-go.resources_scale", "kubernetes-ts.kubectl_scale"}},
	{"install a helm chart into the cluster", []string{"kubernetes-ts.install_helm_chart"}},
	{"forward local port 8080 to a pod", []string{"kubernetes-ts.port_forward"}},
	{"why did my CircleCI build fail", []string{"circleci.get_build_failure_logs"}},
	{"find the flaky tests in our CI", []string{"circleci.find_flaky_tests"}},
	{"rerun the failed workflow", []string{"circleci.rerun_workflow"}},
	{"look up the documentation of a library", []string{"context7.query-docs", "context7.resolve-library-id"}},
	{"lint these JavaScript files", []string{"eslint.lint-files"}},
	{"read the contents of a text file", []string{"filesystem.read_text_file", "filesystem.read_file", "desktop-commander.read_file"}},
	{"write some text to a new file on disk", []string{"filesystem.write_file", "desktop-commander.write_file"}},
	{"show the directory tree of my project", []string{"filesystem.directory_tree", "filesystem.list_directory", "desktop-commander.list_directory"}},
	{"move a file to another folder", []string{"filesystem.move_file", "desktop-commander.move_file"}},
	{"start a long running shell command and read what it prints", []string{"desktop-commander.start_process", "desktop-commander.read_process_output"}},
	{"kill the process that hangs", []string{"desktop-commander.kill_process", "desktop-commander.force_terminate"}},
	{"download the images of my Figma design", []string{"figma.download_figma_images"}},
	{"scrape the content of a web page as markdown", []string{"firecrawl.firecrawl_scrape", "tavily.tavily_extract"}},
	{"crawl a whole website", []string{"firecrawl.firecrawl_crawl", "tavily.tavily_crawl"}},
	{"find research papers about transformers", []string{"firecrawl.firecrawl_research_search_papers"}},
	{"create a feature flag for the new checkout", []string{"launchdarkly.create-feature-flag"}},
	{"turn off a feature flag in production", []string{"launchdarkly.update-feature-flag"}},
	{"create contacts in HubSpot", []string{"hubspot.hubspot-batch-create-objects"}},
	{"find documents in a MongoDB collection", []string{"mongodb.find", "mongodb.aggregate"}},
	{"create an index on a MongoDB collection", []string{"mongodb.create-index"}},
	{"search my Notion pages", []string{"notion.API-post-search"}},
	{"add a comment to a Notion page", []string{"notion.API-create-a-comment"}},
	{"what time is it now in Tokyo", []string{"time-mcp.current_time", "time-mcp.convert_time"}},
	{"convert 3pm New York time to London time", []string{"time-mcp.convert_time"}},
	{"remember that Alice works at Acme", []string{"memory.create_entities", "memory.add_observations", "gosdk-memory.create_entities", "gosdk-memory.add_observations"}},
	{"search the knowledge graph for Alice", []string{"memory.search_nodes", "gosdk-memory.search_nodes"}},
	{"think through this problem step by step", []string{"sequential-thinking.sequentialthinking", "gosdk-sequential.start_thinking"}},
	{"find the errors Sentry reported for my project", []string{"sentry.search_events", "sentry.search_issues"}},
	{"read an Excel sheet", []string{"excel-go.excel_read_sheet"}},
	{"write values into an Excel worksheet", []string{"excel-go.excel_write_to_sheet"}},
	{"validate my n8n workflow", []string{"n8n.validate_workflow"}},
	{"fill in the signup form on the page", []string{"chrome-devtools.fill_form", "playwright.browser_fill_form", "puppeteer.puppeteer_fill"}},
	{"create a new GitLab merge request", []string{"gitlab.create_merge_request", "gitlab-official.create_merge_request"}},
	{"protect the main branch in GitLab", []string{"gitlab.protect_branch"}},
	{"open an issue about the crash", []string{"github.create_issue", "gitlab.create_issue", "gitlab-official.create_issue"}},
	{"search GitHub for repositories about MCP", []string{"github.search_repositories"}},
	{"fork the repository to my account", []string{"github.fork_repository", "gitlab.fork_repository", "gitlab-official.fork_repository"}},
}

func fixtureIndex(tb testing.TB) (*toolsearch.Index, []mcp.Tool) {
	tb.Helper()
	tools, err := toolfixtures.Exposed()
	require.NoError(tb, err)
	return toolsearch.New(tools), tools
}

func exposed(want []string) []string {
	var out []string
	for _, w := range want {
		server, tool, _ := strings.Cut(w, ".")
		out = append(out, mcp.ExposedName(server, tool))
	}
	return out
}

// Recall over the task set: for how many tasks a tool that does it is
// first, and among the first five.
func TestSearchFindsTheToolsOfTheTaskSet(t *testing.T) {
	idx, tools := fixtureIndex(t)
	require.Len(t, tools, 634, "the fixture's 47 servers")
	require.GreaterOrEqual(t, len(tasks), 50)
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	hit1, hit5 := 0, 0
	var misses []string
	for _, tk := range tasks {
		want := exposed(tk.want)
		for _, w := range want {
			require.True(t, names[w], "%q: the task names a tool the fixtures lack: %s", tk.query, w)
		}
		res := idx.Search(tk.query, 5)
		var got []string
		for _, r := range res {
			got = append(got, r.Tool.Name)
		}
		if len(got) > 0 && slices.Contains(want, got[0]) {
			hit1++
		}
		found := slices.ContainsFunc(got, func(n string) bool { return slices.Contains(want, n) })
		if found {
			hit5++
		} else {
			misses = append(misses, fmt.Sprintf("%q: want one of %v, got %v", tk.query, want, got))
		}
	}
	r1, r5 := float64(hit1)/float64(len(tasks)), float64(hit5)/float64(len(tasks))
	t.Logf("%d tasks over %d tools: recall@1 %.2f, recall@5 %.2f\nmissed at 5:\n%s", len(tasks), len(tools), r1, r5, strings.Join(misses, "\n"))
	assert.GreaterOrEqual(t, r5, 0.9, "recall@5")
}

func TestTermsSplitNamesAsTheyAreWritten(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"list_pull_requests", []string{"list", "pull", "request"}},
		{"listPullRequests", []string{"list", "pull", "request"}},
		{"list-pull-requests", []string{"list", "pull", "request"}},
		{"HTTPServer", []string{"http", "server"}},
		{"mcp__github__create_pull_request", []string{"mcp", "github", "creat", "pull", "request"}},
		{"Take a screenshot of the page", []string{"take", "screenshot", "page"}},
		{"base64Encode utf8", []string{"base", "64", "encod", "utf"}}, // one character is too short to count
		{"Größe ändernÜberall_数据库", []string{"größe", "ändern", "überal", "数据库"}},
		{"ΑΒΓδεζ", []string{"αβ", "γδεζ"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, toolsearch.Terms(tt.in))
		})
	}
}

// The index skips Snowball for the words it leaves as they are (two
// letters, digits): for every word of the fixture tools, the stems agree.
func TestStemsAgreeWithSnowball(t *testing.T) {
	tools, err := toolfixtures.Exposed()
	require.NoError(t, err)
	words := map[string]bool{}
	for _, tool := range tools {
		names, descs := toolsearch.Arguments(tool.InputSchema)
		for _, text := range []string{tool.Name, tool.Title, tool.Description, names, descs} {
			toolsearch.EachWord(text, func(w string) { words[strings.ToLower(w)] = true })
		}
	}
	require.Greater(t, len(words), 3000)
	for w := range words {
		if got := toolsearch.Stem(w); got != "" {
			require.Equal(t, toolsearch.SnowballStem(w), got, "the stem of %q", w)
		}
	}
}

func TestSearchRanksAndSelects(t *testing.T) {
	tools := []mcp.Tool{
		{Name: "mcp__git__git_commit", Description: "Record changes to the repository."},
		{Name: "mcp__slack__post_message", Title: "Post message", Description: "Post a message to a channel.",
			InputSchema: []byte(`{"type":"object","properties":{"channel_id":{"type":"string","description":"The channel to post to"}}}`)},
		{Name: "mcp__web__fetch", Description: "Fetch a URL.", InputSchema: []byte(`{"type":"object","properties":{"url":{"type":"string","description":"the address of the page"}}}`)},
	}
	idx := toolsearch.New(tools)
	t.Run("the best first", func(t *testing.T) {
		res := idx.Search("post to a channel", 3)
		require.NotEmpty(t, res)
		assert.Equal(t, "mcp__slack__post_message", res[0].Tool.Name)
	})
	t.Run("argument descriptions count", func(t *testing.T) {
		res := idx.Search("the address of a page", 1)
		require.Len(t, res, 1)
		assert.Equal(t, "mcp__web__fetch", res[0].Tool.Name)
	})
	t.Run("a query that matches nothing finds nothing", func(t *testing.T) {
		assert.Empty(t, idx.Search("kubernetes pods", 3))
		assert.Empty(t, idx.Search("the of a", 3), "stop words only")
	})
	t.Run("select: takes exact names, in order", func(t *testing.T) {
		res := idx.Search("select:mcp__web__fetch, mcp__git__git_commit,mcp__nope", 5)
		require.Len(t, res, 2)
		assert.Equal(t, "mcp__web__fetch", res[0].Tool.Name)
		assert.Equal(t, "mcp__git__git_commit", res[1].Tool.Name)
	})
	t.Run("k bounds the results", func(t *testing.T) {
		assert.Len(t, idx.Search("message channel fetch commit", 2), 2)
		assert.Empty(t, idx.Search("commit", 0))
	})
}

func BenchmarkSearch(b *testing.B) {
	idx, _ := fixtureIndex(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		idx.Search(tasks[i%len(tasks)].query, 5)
	}
}

// BenchmarkIndex builds the index of the 634 fixture tools: "cold" as a
// program's first, "again" as after a list changed (what the tools that
// did not change weighed is kept).
func BenchmarkIndex(b *testing.B) {
	tools, err := toolfixtures.Exposed()
	require.NoError(b, err)
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			toolsearch.Forget()
			toolsearch.New(tools)
		}
	})
	b.Run("again", func(b *testing.B) {
		toolsearch.New(tools)
		b.ReportAllocs()
		for b.Loop() {
			toolsearch.New(tools)
		}
	})
}

// What a tool weighed is kept for the next index only while its fields
// are the same: a changed description is weighed again.
func TestAnIndexAfterAChangeSeesTheChange(t *testing.T) {
	tools := []mcp.Tool{{Name: "mcp__a__x", Description: "Frobnicate the widget."}, {Name: "mcp__a__y", Description: "Polish the gadget."}}
	first := toolsearch.New(tools)
	require.Equal(t, "mcp__a__x", first.Search("frobnicate", 1)[0].Tool.Name)
	changed := slices.Clone(tools)
	changed[0].Description = "Defenestrate the widget."
	second := toolsearch.New(changed)
	assert.Empty(t, second.Search("frobnicate", 1), "the old description is gone")
	require.NotEmpty(t, second.Search("defenestrate", 1))
	assert.Equal(t, "Defenestrate the widget.", second.Search("defenestrate", 1)[0].Tool.Description)
	assert.NotEmpty(t, first.Search("frobnicate", 1), "an index built before is unchanged")
}

// Indexes built at once, cold and warm, on several goroutines, agree with
// one built alone (run with -race).
func TestIndexesBuiltAtOnceAgree(t *testing.T) {
	all, err := toolfixtures.Exposed()
	require.NoError(t, err)
	toolsearch.Forget()
	want := toolsearch.New(all).Search(tasks[0].query, 5)
	toolsearch.Forget()
	results := make(chan []toolsearch.Result, 8)
	for range 8 {
		go func() { results <- toolsearch.New(all).Search(tasks[0].query, 5) }()
	}
	for range 8 {
		got := <-results
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, want[i].Tool.Name, got[i].Tool.Name)
			assert.InDelta(t, want[i].Score, got[i].Score, 1e-9)
		}
	}
}

func ExampleIndex_Search() {
	idx := toolsearch.New([]mcp.Tool{
		{Name: "mcp__git__git_commit", Description: "Record changes to the repository."},
		{Name: "mcp__github__create_pull_request", Description: "Create a new pull request in a GitHub repository."},
		{Name: "mcp__slack__slack_post_message", Description: "Post a new message to a Slack channel."},
	})
	for _, r := range idx.Search("open a pull request", 2) {
		fmt.Println(r.Tool.Name)
	}
	fmt.Println(idx.Search("select:mcp__git__git_commit", 5)[0].Tool.Name)
	// Output:
	// mcp__github__create_pull_request
	// mcp__git__git_commit
}

// Every argument of a schema is read, the members after a nested object
// too, and a closing brace is never taken for a name.
func TestArgumentsAreReadFromTheWholeSchema(t *testing.T) {
	deep := `{"properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"properties":{"f":{}}}}}}}}}}}}}`
	many := `{"properties":{`
	for i := range 70 {
		if i > 0 {
			many += ","
		}
		many += fmt.Sprintf(`"p%d":{}`, i)
	}
	many += `}}`
	tests := []struct {
		name, schema, names, descs string
	}{
		{"nothing", ``, "", ""},
		{"flat", `{"type":"object","properties":{"x":{"type":"string","description":"X"},"y":{"description":"Y"}},"required":["x"]}`, "x y ", "X Y "},
		{"members after a nested object", `{"type":"object","properties":{"data":{"type":"array","items":{"type":"object","properties":{"time":{"type":"string"},"value":{"type":"number"}}},"description":"D"},"title":{"type":"string","description":"T"}},"required":["data"]}`, "data time value title ", "D T "},
		{"escaped names", `{"propert\u0069es":{"a\"b":{"descr\u0069ption":"esc\naped"}}}`, `a"b `, "esc\naped "},
		{"a description that is not a string", `{"properties":{"x":{"description":{"description":"no"}}}}`, "x ", ""},
		{"a member named properties inside properties", `{"properties":{"properties":{"description":"P"}}}`, "properties ", "P "},
		{"beyond the depth taken", deep, "a b c d e ", ""},
		{"at most 64 arguments", many, func() string {
			s := ""
			for i := range 64 {
				s += fmt.Sprintf("p%d ", i)
			}
			return s
		}(), ""},
		{"a syntax error stops the walk", `{"properties":{"x":{},"y" "z"}}`, "x y ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names, descs := toolsearch.Arguments([]byte(tt.schema))
			assert.Equal(t, tt.names, names)
			assert.Equal(t, tt.descs, descs)
		})
	}
}

// The schema walk reads what a walk through jsontext's tokens reads: for
// every fixture schema, and the cases of TestArgumentsAreReadFromTheWholeSchema.
func TestArgumentsAgreeWithATokenWalk(t *testing.T) {
	tools, err := toolfixtures.Exposed()
	require.NoError(t, err)
	for _, tool := range tools {
		names, descs := toolsearch.Arguments(tool.InputSchema)
		wantNames, wantDescs := toolsearch.ReferenceArguments(tool.InputSchema)
		require.Equal(t, wantNames, names, tool.Name)
		require.Equal(t, wantDescs, descs, tool.Name)
	}
}

// For any valid JSON, the schema walk agrees with the token walk.
func FuzzArgumentsAgreeWithATokenWalk(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"x":{"type":"string","description":"X"},"y":{"description":"Y"}},"required":["x"]}`,
		`{"propert\u0069es":{"a\"b":{"descr\u0069ption":"esc\naped"}}}`,
		`{"properties":{"x":{"description":{"description":"no"}}}}`,
		`[{"properties":{"a":{}}}, 1, true, null, -2.5e3, "s"]`,
		`{"properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"properties":{"f":{}}}}}}}}}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		if !json.Valid(schema) {
			t.Skip()
		}
		names, descs := toolsearch.Arguments(schema)
		wantNames, wantDescs := toolsearch.ReferenceArguments(schema)
		assert.Equal(t, wantNames, names)
		assert.Equal(t, wantDescs, descs)
	})
}

// The splitter splits as a splitter that reads a rune at a time: for the
// text of every fixture tool, and any text.
func FuzzEachWordAgreesWithARuneWalk(f *testing.F) {
	tools, err := toolfixtures.Exposed()
	require.NoError(f, err)
	for _, tool := range tools[:40] {
		f.Add(tool.Name + " " + tool.Description)
	}
	f.Add("HTTPServer base64Encode utf8 Größe ändernÜberall_数据库 ΑΒΓδεζ aB1cD22eeF")
	f.Fuzz(func(t *testing.T, text string) {
		var got, want []string
		toolsearch.EachWord(text, func(w string) { got = append(got, w) })
		toolsearch.ReferenceEachWord(text, func(w string) { want = append(want, w) })
		assert.Equal(t, want, got)
	})
}

func TestEachWordAgreesWithARuneWalk(t *testing.T) {
	tools, err := toolfixtures.Exposed()
	require.NoError(t, err)
	for _, tool := range tools {
		names, descs := toolsearch.Arguments(tool.InputSchema)
		for _, text := range []string{tool.Name, tool.Title, tool.Description, names, descs} {
			var got, want []string
			toolsearch.EachWord(text, func(w string) { got = append(got, w) })
			toolsearch.ReferenceEachWord(text, func(w string) { want = append(want, w) })
			require.Equal(t, want, got, tool.Name)
		}
	}
}
