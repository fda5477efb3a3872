package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResources(t *testing.T) {
	noLeaks(t)
	rec := &recorder{}
	updated := make(chan string, 1)
	listChanged := make(chan struct{}, 1)
	srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{
		"resources/list":           paged("resources", `{"uri":"file:///a.txt","name":"a","mimeType":"text/plain","size":3}`, `{"uri":"file:///b.png","name":"b"}`),
		"resources/templates/list": paged("resourceTemplates", `{"uriTemplate":"file:///{path}","name":"files"}`, `{"uriTemplate":"db://{table}","name":"tables"}`),
		"resources/read": replying(`{"contents":[
			{"uri":"file:///a.txt","mimeType":"text/plain","text":"abc"},
			{"uri":"file:///b.png","mimeType":"image/png","blob":"iVBORw0KGgo="}]}`),
		"resources/subscribe": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, json.RawMessage(`{}`))
			s.Notify("notifications/resources/updated", map[string]string{"uri": "file:///a.txt"})
			s.Notify("notifications/resources/list_changed", nil)
		},
		"resources/unsubscribe": replying(`{}`),
	}}
	c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{
		Logger:              quiet,
		ResourceUpdated:     func(_ *mcp.Connection, uri string) { updated <- uri },
		ResourceListChanged: func(*mcp.Connection) { listChanged <- struct{}{} },
	})
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxTimeout(t, 5*time.Second)

	all, err := c.Resources(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, "file:///a.txt", all[0].URI)
	assert.Equal(t, int64(3), *all[0].Size)
	assert.Equal(t, "b", all[1].Name)

	templates, err := c.ResourceTemplates(ctx)
	require.NoError(t, err)
	require.Len(t, templates, 2)
	assert.Equal(t, "files", templates[0].Name)
	assert.Equal(t, "db://{table}", templates[1].URITemplate)

	read, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///a.txt"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 2)
	assert.Equal(t, "abc", *read.Contents[0].Text)
	assert.Nil(t, read.Contents[0].Blob)
	assert.Equal(t, "iVBORw0KGgo=", *read.Contents[1].Blob)
	assert.JSONEq(t, `{"uri":"file:///a.txt"}`, string(rec.params("resources/read")[0]))

	require.NoError(t, c.Subscribe(ctx, &mcp.SubscribeParams{URI: "file:///a.txt"}))
	assert.Equal(t, "file:///a.txt", <-updated)
	<-listChanged
	require.NoError(t, c.Unsubscribe(ctx, &mcp.SubscribeParams{URI: "file:///a.txt"}))
	assert.JSONEq(t, `{"uri":"file:///a.txt"}`, string(rec.params("resources/unsubscribe")[0]))
}

// paged answers a list method with two pages of items under key.
func paged(key string, first, second string) mcptest.Handler {
	return func(s *mcptest.Session, m *mcptest.Message) {
		if strings.Contains(string(m.Params), `"cursor":"p2"`) {
			s.Reply(m.ID, json.RawMessage(`{"`+key+`":[`+second+`]}`))
			return
		}
		s.Reply(m.ID, json.RawMessage(`{"`+key+`":[`+first+`],"nextCursor":"p2"}`))
	}
}
