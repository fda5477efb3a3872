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

func TestCompletionLoggingPing(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	logs := make(chan *mcp.LoggingMessage, 1)
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"completion/complete": replying(`{"completion":{"values":["go","gopher"],"total":10,"hasMore":true}}`),
		"logging/setLevel": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{}`))
			s.Notify("notifications/message", map[string]any{"level": "warning", "logger": "db", "data": map[string]any{"slow": true}})
		},
	}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger: quiet, LoggingMessage: func(_ *mcp.Connection, m *mcp.LoggingMessage) { logs <- m }})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)

	res, err := c.Complete(ctx, &mcp.CompleteParams{
		Ref:      mcp.PromptRef("review"),
		Argument: mcp.CompleteArgument{Name: "lang", Value: "go"},
		Context:  &mcp.CompleteContext{Arguments: map[string]string{"style": "strict"}},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "gopher"}, res.Completion.Values)
	assert.Equal(t, 10, *res.Completion.Total)
	assert.True(t, res.Completion.HasMore)
	assert.JSONEq(t, `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"lang","value":"go"},"context":{"arguments":{"style":"strict"}}}`,
		string(rec.params("completion/complete")[0]))
	_, err = c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.ResourceTemplateRef("file:///{path}"), Argument: mcp.CompleteArgument{Name: "path", Value: "sr"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"ref":{"type":"ref/resource","uri":"file:///{path}"},"argument":{"name":"path","value":"sr"}}`,
		string(rec.params("completion/complete")[1]))

	require.NoError(t, c.SetLoggingLevel(ctx, mcp.LevelWarning))
	assert.JSONEq(t, `{"level":"warning"}`, string(rec.params("logging/setLevel")[0]))
	m := <-logs
	assert.Equal(t, mcp.LevelWarning, m.Level)
	assert.Equal(t, "db", m.Logger)
	assert.JSONEq(t, `{"slow":true}`, string(m.Data))

	require.NoError(t, c.Ping(ctx))
	assert.Len(t, rec.params("ping"), 2, "the handshake's, and Ping's")
}
