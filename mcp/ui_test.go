package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAToolsUIIsReadAsTheSpecWritesIt(t *testing.T) {
	tests := []struct {
		name  string
		meta  string
		want  *mcp.ToolUI
		bad   bool
		model bool
		app   bool
	}{
		{"no _meta", ``, nil, false, true, true},
		{"no ui", `{"other":1}`, nil, false, true, true},
		{"a view for both", `{"ui":{"resourceUri":"ui://a/v.html"}}`, &mcp.ToolUI{ResourceURI: "ui://a/v.html"}, false, true, true},
		{"the older key", `{"ui/resourceUri":"ui://a/v.html"}`, &mcp.ToolUI{ResourceURI: "ui://a/v.html"}, false, true, true},
		{"for apps only", `{"ui":{"resourceUri":"ui://a/v.html","visibility":["app"]}}`, &mcp.ToolUI{ResourceURI: "ui://a/v.html", Visibility: []string{"app"}}, false, false, true},
		{"for the model only", `{"ui":{"visibility":["model"]}}`, &mcp.ToolUI{Visibility: []string{"model"}}, false, true, false},
		{"a visibility that is not a list", `{"ui":{"visibility":"app"}}`, nil, true, false, false},
		{"a visibility it does not know", `{"ui":{"visibility":["everyone"]}}`, nil, true, false, false},
		{"a resource that is not ui://", `{"ui":{"resourceUri":"https://evil.example/v.html"}}`, nil, true, false, false},
		{"a _meta that is not an object", `[1]`, nil, true, false, false},
		{"a key in another case is not the key", `{"ui":{"resourceUri":"ui://a/v.html","Visibility":["app"]}}`, &mcp.ToolUI{ResourceURI: "ui://a/v.html"}, false, true, true},
		{"nor is UI ui", `{"UI":{"visibility":["app"]}}`, nil, false, true, true},
		{"a key given twice", `{"ui":{"visibility":["app"],"visibility":["model","app"]}}`, nil, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := mcp.Tool{Name: "x", Meta: json.RawMessage(tt.meta)}
			ui, err := tool.UI()
			if tt.bad {
				require.ErrorIs(t, err, mcp.ErrBadResult)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, ui)
			assert.Equal(t, tt.model, ui.VisibleTo(mcp.VisibilityModel))
			assert.Equal(t, tt.app, ui.VisibleTo(mcp.VisibilityApp))
		})
	}
}

// appServer is a server with a view, a tool for the model that shows it,
// a tool for the view alone and a tool for the model alone.
func appServer(reads *atomic.Int32, html string, meta string) *mcptest.Server {
	srv := &mcptest.Server{Name: "apps"}
	srv.AddTool(mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://apps/view.html"}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("shown"), nil
		})
	srv.AddTool(mcp.Tool{Name: "refresh", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://apps/view.html","visibility":["app"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("refreshed"), nil
		})
	srv.AddTool(mcp.Tool{Name: "secret", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["model"]}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("model only"), nil
		})
	srv.AddTool(mcp.Tool{Name: "garbled", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":"app"}}`)},
		func(ctx context.Context, r *mcptest.Request) (*mcp.CallToolResult, error) {
			return mcptest.TextResult("?"), nil
		})
	srv.AddResource(mcp.Resource{URI: "ui://apps/view.html", Name: "view", MimeType: mcp.MIMETypeApp}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
		uri := r.URI
		reads.Add(1)
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, MimeType: mcp.MIMETypeApp, Text: &html, Meta: json.RawMessage(meta)}}}, nil
	})
	return srv
}

func TestAToolForTheViewAloneNeverReachesTheModel(t *testing.T) {
	noLeaks(t)
	var reads atomic.Int32
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("apps", appServer(&reads, "<p>hi</p>", "").Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	tools, err := m.Tools(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"mcp__apps__show", "mcp__apps__secret"}, toolNames(tools))
	_, err = m.CallTool(ctx, "mcp__apps__refresh", nil)
	assert.ErrorIs(t, err, mcp.ErrUnknownTool, "a tool for the view alone cannot be called as the model's")
	assert.Contains(t, strings.Join(statusOf(m)["apps"].Warnings, "\n"), `tool "garbled"`, "the unreadable visibility is reported")

	apps, err := m.AppTools(ctx)
	require.NoError(t, err)
	require.Len(t, apps, 1)
	assert.Equal(t, "show", apps[0].Tool.Name)
	assert.Equal(t, "mcp__apps__show", apps[0].Name)
	assert.Equal(t, "ui://apps/view.html", apps[0].UI.ResourceURI)
}

func TestAViewCallsOnlyItsServersToolsThatAppsMaySee(t *testing.T) {
	noLeaks(t)
	var reads atomic.Int32
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("apps", appServer(&reads, "<p>hi</p>", "").Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	tests := []struct {
		tool, want string
		err        error
	}{
		{"refresh", "refreshed", nil},
		{"show", "shown", nil},
		{"secret", "", mcp.ErrNotForApps},
		{"garbled", "", mcp.ErrNotForApps},
		{"nope", "", mcp.ErrUnknownTool},
		{"mcp__apps__show", "", mcp.ErrUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := m.CallAppTool(ctx, "apps", tt.tool, nil)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Text())
		})
	}
}

func TestAViewIsReadOnceUntilItsServerSaysItChanged(t *testing.T) {
	noLeaks(t)
	var reads atomic.Int32
	srv := appServer(&reads, "<p>hi</p>", `{"ui":{"csp":{"connectDomains":["https://api.example"]},"prefersBorder":true,"domain":"a.example","permissions":{"camera":{}}}}`)
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("apps", srv.Transport()))
	ctx := ctxTimeout(t, 10*time.Second)
	v, err := m.View(ctx, "apps", "ui://apps/view.html")
	require.NoError(t, err)
	assert.Equal(t, "<p>hi</p>", v.HTML)
	require.NotNil(t, v.UI)
	assert.Equal(t, []string{"https://api.example"}, v.UI.CSP.ConnectDomains)
	assert.Equal(t, "a.example", v.UI.Domain)
	assert.NotNil(t, v.UI.Permissions.Camera)
	assert.Nil(t, v.UI.Permissions.Microphone)
	assert.True(t, *v.UI.PrefersBorder)
	_, err = m.View(ctx, "apps", "ui://apps/view.html")
	require.NoError(t, err)
	assert.EqualValues(t, 1, reads.Load(), "cached")

	for _, change := range []struct {
		method string
		params any
	}{
		{"notifications/resources/updated", map[string]any{"uri": "ui://apps/view.html"}},
		{"notifications/resources/list_changed", nil},
		{"notifications/tools/list_changed", nil},
	} {
		t.Run("dropped on "+change.method, func(t *testing.T) {
			before := reads.Load()
			srv.Notify(change.method, change.params)
			require.Eventually(t, func() bool {
				_, err := m.View(ctx, "apps", "ui://apps/view.html")
				return err == nil && reads.Load() > before
			}, 5*time.Second, time.Millisecond)
		})
	}
	t.Run("dropped on a reconnection", func(t *testing.T) {
		before := reads.Load()
		require.NoError(t, m.Reconnect(ctx, "apps"))
		_, err := m.View(ctx, "apps", "ui://apps/view.html")
		require.NoError(t, err)
		assert.Equal(t, before+1, reads.Load())
	})
}

func TestAViewThatIsNotOneIsRefused(t *testing.T) {
	noLeaks(t)
	big := strings.Repeat("x", mcp.MaxViewSize+1)
	blob := base64.StdEncoding.EncodeToString([]byte("<p>blob</p>"))
	bad := base64.StdEncoding.EncodeToString([]byte("\xff<p>"))
	tests := []struct {
		name     string
		contents []mcp.ResourceContents
		want     string
	}{
		{"no contents", nil, "no contents"},
		{"another MIME type", []mcp.ResourceContents{{URI: "ui://x/v", MimeType: "text/html", Text: new("<p>")}}, "MIME type"},
		{"too large", []mcp.ResourceContents{{URI: "ui://x/v", MimeType: mcp.MIMETypeApp, Text: &big}}, "more than"},
		{"a blob that is not UTF-8", []mcp.ResourceContents{{URI: "ui://x/v", MimeType: mcp.MIMETypeApp, Blob: &bad}}, "not UTF-8"},
		{"a bad _meta.ui", []mcp.ResourceContents{{URI: "ui://x/v", MimeType: mcp.MIMETypeApp, Text: new("<p>"), Meta: json.RawMessage(`{"ui":{"csp":"all"}}`)}}, "_meta.ui"},
		{"a blob", []mcp.ResourceContents{{URI: "ui://x/v", MimeType: mcp.MIMETypeApp, Blob: &blob}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &mcptest.Server{}
			srv.AddResource(mcp.Resource{URI: "ui://x/v", Name: "v"}, func(ctx context.Context, r *mcptest.Request) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: tt.contents}, nil
			})
			m := newManager(t, nil, nil)
			require.NoError(t, m.Add("x", srv.Transport()))
			v, err := m.View(ctxTimeout(t, 10*time.Second), "x", "ui://x/v")
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "<p>blob</p>", v.HTML)
				return
			}
			require.ErrorIs(t, err, mcp.ErrBadResult)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("a URI that is not ui://", func(t *testing.T) {
		m := newManager(t, nil, nil)
		_, err := m.View(context.Background(), "x", "file:///etc/passwd")
		assert.ErrorContains(t, err, "not a ui:// URI")
	})
}

func TestExtensionsAreDeclaredInEitherEra(t *testing.T) {
	noLeaks(t)
	for _, era := range []struct {
		name     string
		versions []string
		method   string
		path     []string
	}{
		{"2025-11-25", nil, "initialize", []string{"capabilities", "extensions"}},
		{"2026-07-28", mcptest.Modern, "tools/list", []string{"_meta", "io.modelcontextprotocol/clientCapabilities", "extensions"}},
	} {
		t.Run(era.name, func(t *testing.T) {
			var got atomic.Value
			srv := &mcptest.Server{Versions: era.versions}
			srv.OnMessage = func(m *mcptest.Message) {
				if m.Method == era.method {
					got.Store(gjson(t, m.Params, era.path...))
				}
			}
			c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet, Extensions: mcp.UIExtension()})
			_, err := c.Tools(ctxTimeout(t, 10*time.Second))
			require.NoError(t, err)
			raw, _ := got.Load().(string)
			require.NotEmpty(t, raw)
			var exts map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(raw), &exts))
			assert.JSONEq(t, `{"mimeTypes":["text/html;profile=mcp-app"]}`, string(exts[mcp.ExtensionUI]))
			if era.versions != nil {
				assert.Contains(t, exts, mcp.ExtensionTasks, "the tasks extension stays")
			}
		})
	}
	t.Run("the server's are read in either era", func(t *testing.T) {
		for _, versions := range [][]string{nil, mcptest.Modern} {
			srv := &mcptest.Server{Versions: versions, Capabilities: map[string]any{"tools": map[string]any{}, "extensions": map[string]any{mcp.ExtensionUI: map[string]any{}}}}
			c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet})
			assert.Contains(t, c.InitializeResult().Capabilities.Extensions, mcp.ExtensionUI, "versions %v", versions)
		}
	})
	t.Run("a declaration that is not an object is refused", func(t *testing.T) {
		srv := &mcptest.Server{}
		_, err := mcp.Connect(context.Background(), srv.Transport(), &mcp.Options{Logger: quiet, Extensions: map[string]json.RawMessage{"x/y": json.RawMessage(`true`)}})
		assert.ErrorContains(t, err, `extension "x/y"`)
	})
	t.Run("none is declared unless asked", func(t *testing.T) {
		var got atomic.Value
		srv := &mcptest.Server{}
		srv.OnMessage = func(m *mcptest.Message) {
			if m.Method == "initialize" {
				got.Store(string(m.Params))
			}
		}
		c := connectWith(t, srv.Transport(), &mcp.Options{Logger: quiet})
		_, err := c.Tools(ctxTimeout(t, 10*time.Second))
		require.NoError(t, err)
		assert.NotContains(t, got.Load(), mcp.ExtensionUI)
	})
}
