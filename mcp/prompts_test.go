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

func TestPrompts(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	changed := make(chan struct{}, 1)
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"prompts/list": paged("prompts", `{"name":"review","description":"Review code","arguments":[{"name":"lang","required":true}]}`, `{"name":"summarize"}`),
		"prompts/get": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{"description":"Review","messages":[
				{"role":"user","content":{"type":"text","text":"Review this Go"}},
				{"role":"user","content":{"type":"image","data":"aW1n","mimeType":"image/png"}},
				{"role":"user","content":{"type":"audio","data":"YXVk","mimeType":"audio/wav"}},
				{"role":"assistant","content":{"type":"resource","resource":{"uri":"file:///x.go","text":"package x"}}}]}`))
			s.Notify("notifications/prompts/list_changed", nil)
		},
	}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger: quiet, PromptListChanged: func(*mcp.Connection) { changed <- struct{}{} }})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)

	prompts, err := c.Prompts(ctx)
	require.NoError(t, err)
	require.Len(t, prompts, 2)
	assert.Equal(t, []mcp.PromptArgument{{Name: "lang", Required: true}}, prompts[0].Arguments)

	got, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "go"}})
	require.NoError(t, err)
	require.Len(t, got.Messages, 4)
	assert.Equal(t, "Review this Go", got.Messages[0].Content.Text)
	assert.Equal(t, "image/png", got.Messages[1].Content.MimeType)
	assert.Equal(t, "audio", got.Messages[2].Content.Type)
	assert.Equal(t, "assistant", got.Messages[3].Role)
	assert.Equal(t, "package x", *got.Messages[3].Content.Resource.Text)
	assert.JSONEq(t, `{"name":"review","arguments":{"lang":"go"}}`, string(rec.params("prompts/get")[0]))
	<-changed
}
