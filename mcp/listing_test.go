package mcp_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A listing fetches a page only when the loop reaches it: a loop that
// stops early asks for no more.
func TestAListingCanStop(t *testing.T) {
	noLeaks(t)
	var toolPages, resourcePages atomic.Int32
	srv := &mcptest.Server{PageSize: 2}
	for i := range 10 {
		srv.Tools = append(srv.Tools, mcptest.Raw(map[string]any{"name": fmt.Sprintf("t%d", i), "inputSchema": map[string]any{"type": "object"}}))
	}
	const resources = 100_000
	srv.Capabilities = map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{}}
	srv.Handlers = map[string]mcptest.Handler{"resources/list": func(s *mcptest.Session, m *mcptest.Message) {
		resourcePages.Add(1)
		var p struct{ Cursor string }
		json.Unmarshal(m.Params, &p)
		from, _ := strconv.Atoi(p.Cursor)
		var page []map[string]any
		for i := from; i < min(from+50, resources); i++ {
			page = append(page, map[string]any{"uri": fmt.Sprintf("file:///r%d", i), "name": fmt.Sprint("r", i)})
		}
		res := map[string]any{"resources": page}
		if from+50 < resources {
			res["nextCursor"] = strconv.Itoa(from + 50)
		}
		s.Reply(m.ID, res)
	}}
	srv.OnMessage = func(m *mcptest.Message) {
		if m.Method == "tools/list" {
			toolPages.Add(1)
		}
	}
	c := connect(t, srv.Transport())
	ctx := ctxTimeout(t, 10*time.Second)

	var first []string
	for r, err := range c.AllResources(ctx) {
		require.NoError(t, err)
		first = append(first, r.URI)
		if len(first) == 60 { // the first screen
			break
		}
	}
	assert.Len(t, first, 60)
	assert.Equal(t, "file:///r59", first[59])
	assert.EqualValues(t, 2, resourcePages.Load(), "two pages of 50, for 60 of 100,000 resources")

	for tool, err := range c.AllTools(ctx) {
		require.NoError(t, err)
		assert.Equal(t, "t0", tool.Name)
		break
	}
	assert.EqualValues(t, 1, toolPages.Load())
	tools, err := c.Tools(ctx)
	require.NoError(t, err)
	assert.Len(t, tools, 10, "a listing stopped early is not taken for the whole")
	assert.EqualValues(t, 6, toolPages.Load())
	n := 0
	for _, err := range c.AllTools(ctx) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 10, n)
	assert.EqualValues(t, 6, toolPages.Load(), "the cached list is yielded without a request")
}
