package mcp_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listens is a modern server's side of subscriptions/listen: it keeps each
// listen request open and tells the test about it.
type listens struct {
	mu      sync.Mutex
	opened  chan listen
	session *mcptest.Session
}

type listen struct {
	id     json.RawMessage
	filter map[string]any
}

func newListens() *listens { return &listens{opened: make(chan listen, 16)} }

func (l *listens) handler(s *mcptest.Session, m *mcptest.Message) {
	var p struct {
		Notifications map[string]any `json:"notifications"`
	}
	json.Unmarshal(m.Params, &p)
	l.mu.Lock()
	l.session = s
	l.mu.Unlock()
	s.Notify("notifications/subscriptions/acknowledged", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": m.ID}, "notifications": p.Notifications})
	l.opened <- listen{id: m.ID, filter: p.Notifications}
}

func (l *listens) next(t *testing.T) listen {
	t.Helper()
	select {
	case x := <-l.opened:
		return x
	case <-time.After(10 * time.Second):
		t.Fatal("no subscriptions/listen")
		return listen{}
	}
}

func (l *listens) notify(id json.RawMessage, method string, params map[string]any) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/subscriptionId": id}
	l.mu.Lock()
	s := l.session
	l.mu.Unlock()
	s.Notify(method, params)
}

func TestModernSubscriptions(t *testing.T) {
	parallel(t)
	t.Run("list changes come on subscriptions/listen, with a filter of the handlers set", func(t *testing.T) {
		noLeaks(t)
		l := newListens()
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"subscriptions/listen": l.handler}}
		changed := make(chan string, 4)
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			ToolListChanged:   func(*mcp.Connection) { changed <- "tools" },
			PromptListChanged: func(*mcp.Connection) { changed <- "prompts" },
		})
		require.NoError(t, err)
		defer c.Close()
		first := l.next(t)
		assert.Equal(t, map[string]any{"toolsListChanged": true, "promptsListChanged": true}, first.filter)
		l.notify(first.id, "notifications/tools/list_changed", nil)
		l.notify(first.id, "notifications/prompts/list_changed", nil)
		assert.Equal(t, "tools", <-changed)
		assert.Equal(t, "prompts", <-changed)
	})
	t.Run("Subscribe opens the listen again with the resource in its filter", func(t *testing.T) {
		noLeaks(t)
		l := newListens()
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"subscriptions/listen": l.handler}}
		updated := make(chan string, 4)
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			ResourceUpdated: func(_ *mcp.Connection, uri string) { updated <- uri }})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Subscribe(ctxTimeout(t, 5*time.Second), &mcp.SubscribeParams{URI: "file:///a"}))
		first := l.next(t)
		assert.Equal(t, []any{"file:///a"}, first.filter["resourceSubscriptions"])
		require.NoError(t, c.Subscribe(ctxTimeout(t, 5*time.Second), &mcp.SubscribeParams{URI: "file:///b"}))
		second := l.next(t)
		assert.Equal(t, []any{"file:///a", "file:///b"}, second.filter["resourceSubscriptions"])
		assert.NotEqual(t, string(first.id), string(second.id))
		l.notify(second.id, "notifications/resources/updated", map[string]any{"uri": "file:///b"})
		assert.Equal(t, "file:///b", <-updated)
		require.NoError(t, c.Unsubscribe(ctxTimeout(t, 5*time.Second), &mcp.SubscribeParams{URI: "file:///a"}))
		third := l.next(t)
		assert.Equal(t, []any{"file:///b"}, third.filter["resourceSubscriptions"])
	})
	t.Run("a listen the server ends is opened again", func(t *testing.T) {
		noLeaks(t)
		l := newListens()
		srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{"subscriptions/listen": l.handler}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet,
			ToolListChanged: func(*mcp.Connection) {}})
		require.NoError(t, err)
		defer c.Close()
		first := l.next(t)
		l.mu.Lock()
		l.session.Reply(first.id, map[string]any{"resultType": "complete", "_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": first.id}})
		l.mu.Unlock()
		second := l.next(t)
		assert.NotEqual(t, string(first.id), string(second.id))
	})
	t.Run("a legacy server gets resources/subscribe and no listen", func(t *testing.T) {
		noLeaks(t)
		rec := &methods{}
		srv := &mcptest.Server{OnMessage: rec.on, Handlers: map[string]mcptest.Handler{"resources/subscribe": replying(`{}`)}}
		c, err := mcp.Connect(ctxTimeout(t, 5*time.Second), srv.Transport(), &mcp.Options{Logger: quiet, ToolListChanged: func(*mcp.Connection) {}})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Subscribe(ctxTimeout(t, 5*time.Second), &mcp.SubscribeParams{URI: "file:///a"}))
		assert.Contains(t, rec.list(), "resources/subscribe")
		assert.NotContains(t, rec.list(), "subscriptions/listen")
	})
}
