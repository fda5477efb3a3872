package mcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// featureServer has a prompt, a resource and a template, each named after
// the server.
func featureServer(name string, rec *methods) *mcptest.Server {
	return &mcptest.Server{
		OnMessage:    rec.on,
		Capabilities: map[string]any{"tools": map[string]any{}, "prompts": map[string]any{}, "resources": map[string]any{"subscribe": true}, "completions": map[string]any{}},
		Handlers: map[string]mcptest.Handler{
			"prompts/list": replying(`{"prompts":[{"name":"review"}]}`),
			"prompts/get": func(s *mcptest.Session, m *mcptest.Message) {
				var p struct {
					Name      string
					Arguments map[string]string
				}
				json.Unmarshal(m.Params, &p)
				s.Reply(m.ID, map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": name + " " + p.Name + " " + p.Arguments["lang"]}}}})
			},
			"resources/list":           replying(`{"resources":[{"uri":"file:///notes","name":"notes"}]}`),
			"resources/templates/list": replying(`{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"files"}]}`),
			"resources/read": func(s *mcptest.Session, m *mcptest.Message) {
				var p struct{ URI string }
				json.Unmarshal(m.Params, &p)
				s.Reply(m.ID, map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": name + " has " + p.URI}}})
			},
			"resources/subscribe": replying(`{}`),
			"completion/complete": func(s *mcptest.Session, m *mcptest.Message) {
				s.Reply(m.ID, map[string]any{"completion": map[string]any{"values": []string{name}}})
			},
		},
	}
}

func TestManagerPromptsAndResources(t *testing.T) {
	noLeaks(t)
	recA, recB := &methods{}, &methods{}
	m := newManager(t, nil, nil)
	require.NoError(t, m.Add("a", featureServer("a", recA).Transport()))
	require.NoError(t, m.Add("a:b", featureServer("a:b", recB).Transport())) // a name that is a prefix of another's ref
	ctx := ctxTimeout(t, 10*time.Second)

	prompts, err := m.Prompts(ctx)
	require.NoError(t, err)
	require.Len(t, prompts, 2)
	assert.Equal(t, "mcp__a__review", prompts[0].Ref)
	assert.Equal(t, "review", prompts[0].Name)
	got, err := m.GetPrompt(ctx, prompts[1].Ref, map[string]string{"lang": "go"})
	require.NoError(t, err)
	assert.Equal(t, "a:b review go", got.Messages[0].Content.Text, "routed to its server, with the server's own name")

	resources, err := m.Resources(ctx)
	require.NoError(t, err)
	require.Len(t, resources, 2)
	assert.Equal(t, "@a:file:///notes", resources[0].Ref)
	assert.Equal(t, "@a%3Ab:file:///notes", resources[1].Ref)
	for _, r := range resources {
		read, err := m.ReadResource(ctx, r.Ref)
		require.NoError(t, err)
		assert.Equal(t, r.Server+" has file:///notes", *read.Contents[0].Text)
	}
	templates, err := m.ResourceTemplates(ctx)
	require.NoError(t, err)
	require.Len(t, templates, 2)
	assert.Equal(t, "@a:file:///{path}", templates[0].Ref)

	require.NoError(t, m.Subscribe(ctx, "@a%3Ab:file:///notes"))
	assert.Contains(t, recB.list(), "resources/subscribe")
	assert.NotContains(t, recA.list(), "resources/subscribe")

	done, err := m.Complete(ctx, &mcp.CompleteParams{Ref: mcp.PromptRef("mcp__a__review"), Argument: mcp.CompleteArgument{Name: "lang", Value: "g"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, done.Completion.Values)
	done, err = m.Complete(ctx, &mcp.CompleteParams{Ref: mcp.ResourceTemplateRef(templates[1].Ref), Argument: mcp.CompleteArgument{Name: "path", Value: "x"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a:b"}, done.Completion.Values)

	_, err = m.ReadResource(ctx, "@nope:file:///x")
	assert.ErrorIs(t, err, mcp.ErrUnknownRef)
	_, err = m.GetPrompt(ctx, "mcp__a__nope", nil)
	assert.ErrorIs(t, err, mcp.ErrUnknownRef)
}

func TestManagerRefsNeverCollide(t *testing.T) {
	t.Run("a resource ref names one server, whatever the names and URIs", func(t *testing.T) {
		noLeaks(t)
		m := newManager(t, nil, nil)
		for _, name := range []string{"gh", "gh:repo", "100%"} {
			srv := featureServer(name, &methods{})
			srv.Handlers["resources/list"] = replying(`{"resources":[{"uri":"repo:notes","name":"a"},{"uri":"notes","name":"b"}]}`)
			require.NoError(t, m.Add(name, srv.Transport()))
		}
		ctx := ctxTimeout(t, 10*time.Second)
		resources, err := m.Resources(ctx)
		require.NoError(t, err)
		require.Len(t, resources, 6)
		refs := map[string]string{}
		for _, r := range resources {
			require.NotContains(t, refs, r.Ref, "two resources share a ref")
			refs[r.Ref] = r.Server + " " + r.URI
			read, err := m.ReadResource(ctx, r.Ref)
			require.NoError(t, err)
			assert.Equal(t, r.Server+" has "+r.URI, *read.Contents[0].Text, r.Ref)
		}
		assert.Equal(t, "gh repo:notes", refs["@gh:repo:notes"], "the first ':' ends the server name")
		assert.Equal(t, "gh:repo notes", refs["@gh%3Arepo:notes"])
		assert.Equal(t, "100% notes", refs["@100%25:notes"])
	})
	t.Run("prompts of servers whose names sanitize alike get distinct refs", func(t *testing.T) {
		noLeaks(t)
		m := newManager(t, nil, nil)
		require.NoError(t, m.Add("my_server", featureServer("my_server", &methods{}).Transport()))
		require.NoError(t, m.Add("my server", featureServer("my server", &methods{}).Transport()))
		ctx := ctxTimeout(t, 10*time.Second)
		prompts, err := m.Prompts(ctx)
		require.NoError(t, err)
		require.Len(t, prompts, 2)
		assert.NotEqual(t, prompts[0].Ref, prompts[1].Ref)
		for _, p := range prompts {
			assert.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, p.Ref)
			got, err := m.GetPrompt(ctx, p.Ref, map[string]string{"lang": "go"})
			require.NoError(t, err)
			assert.Equal(t, p.Server+" review go", got.Messages[0].Content.Text, p.Ref)
		}
	})
}
