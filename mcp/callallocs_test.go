package mcp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call of a small result allocates what it hands over and nothing
// else: the result with its one block, and the result's bytes its
// strings point into. Its params, arguments and request are written
// from pooled buffers.
func TestCallToolAllocatesOnlyItsResult(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers")
	}
	noLeaks(t)
	for _, era := range []struct{ name, version string }{{"2025-11-25", mcp.LatestLegacyVersion}, {"2026-07-28", mcp.LatestProtocolVersion}} {
		t.Run("over stdio, "+era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := mcp.Connect(ctx, &mcp.CommandTransport{Command: testproc.Command("bench"), Logger: quiet}, &mcp.Options{Logger: quiet, ProtocolVersion: era.version})
			require.NoError(t, err)
			defer c.Close()
			args := map[string]any{"text": "hi"}
			var failed error
			call := func() {
				// A ctx that cannot end: one that can costs the call its
				// AfterFunc.
				res, err := c.CallTool(context.Background(), "echo", args)
				if err == nil && len(res.Content) != 1 {
					err = fmt.Errorf("%d blocks", len(res.Content))
				}
				if failed == nil {
					failed = err
				}
			}
			call() // the pools filled
			allocs := testing.AllocsPerRun(200, call)
			require.NoError(t, failed)
			assert.Equal(t, 2.0, allocs)
		})
	}
}
