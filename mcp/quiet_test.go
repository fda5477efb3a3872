package mcp_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// records is a slog.Handler that keeps every record, at every level.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) at(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.list {
		if rec.Level >= level {
			out = append(out, rec.Message)
		}
	}
	return out
}

// A healthy connection logs nothing at Info: the era it speaks is chosen
// quietly, the same way over every transport.
func TestAHealthyConnectionLogsNothingAtInfo(t *testing.T) {
	srv := httptest.NewServer(&mcptest.Server{})
	defer srv.Close()
	for _, tt := range []struct {
		name string
		tr   func() mcp.Transport
	}{
		{"in memory", func() mcp.Transport { return (&mcptest.Server{}).Transport() }},
		{"streamable http", func() mcp.Transport { return &mcp.StreamableHTTPTransport{URL: srv.URL + "/mcp"} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			rec := &records{}
			c, err := mcp.Connect(ctxTimeout(t, 10*time.Second), tt.tr(), &mcp.Options{Logger: slog.New(rec)})
			require.NoError(t, err)
			_, err = c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "hi"})
			require.NoError(t, err)
			c.Close()
			mcp.CloseIdleHTTPConnections()
			assert.Empty(t, rec.at(slog.LevelInfo), "records at Info or above")
		})
	}
	t.Run("an unreachable URL is not taken for a legacy server", func(t *testing.T) {
		noLeaks(t)
		rec := &records{}
		_, err := mcp.Connect(ctxTimeout(t, 10*time.Second), &mcp.StreamableHTTPTransport{URL: "http://127.0.0.1:1/mcp"}, &mcp.Options{Logger: slog.New(rec)})
		require.Error(t, err)
		for _, m := range rec.at(slog.LevelDebug) {
			assert.False(t, strings.Contains(m, "legacy"), "logged %q for a server that never answered", m)
		}
		mcp.CloseIdleHTTPConnections()
	})
}
