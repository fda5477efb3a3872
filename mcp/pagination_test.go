package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPagingKeepsNoCursors(t *testing.T) {
	parallel(t)
	noLeaks(t)
	// Every page names a fresh 1 MiB cursor: the cycle check must not keep
	// them. The heap is measured when the last page is asked for, while
	// the listing still holds what it remembers. The work is bounded (40
	// MiB of cursors), not the time.
	const pages, cursorSize = 40, 1 << 20
	var before runtime.MemStats
	var held uint64
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"tools/list": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct{ Cursor string }
			json.Unmarshal(m.Params, &p)
			n := 0
			if p.Cursor != "" {
				fmt.Sscanf(p.Cursor, "%d:", &n)
			}
			res := map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("t%d", n), "inputSchema": map[string]any{"type": "object"}}}}
			if n+1 < pages {
				res["nextCursor"] = fmt.Sprintf("%d:%s", n+1, strings.Repeat("x", cursorSize))
			} else {
				p.Cursor, m.Params = "", nil // the server keeps nothing either
				var now runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&now)
				held = now.HeapAlloc - min(now.HeapAlloc, before.HeapAlloc)
			}
			s.Reply(m.ID, res)
		},
	}}
	c := connect(t, srv.Transport())
	runtime.GC()
	runtime.ReadMemStats(&before)
	tools, err := c.Tools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, pages)
	assert.Equal(t, fmt.Sprintf("t%d", pages-1), tools[pages-1].Name)
	assert.Less(t, held, uint64(pages*cursorSize/4), "paging through %d MiB of cursors keeps them", pages)
}

func TestPagingStopsAtARepeatedCursor(t *testing.T) {
	noLeaks(t)
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"tools/list": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": "again"})
		},
	}}
	c := connect(t, srv.Transport())
	tools, err := c.Tools(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	assert.Len(t, tools, 2, "the first page and the page of the cursor, then the repeat ends it")
}
