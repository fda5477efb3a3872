package mcp_test

import (
	"testing"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutputSchemaWorkIsBounded(t *testing.T) {
	t.Run("a schema bomb is refused, and the call returns at once", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, withOutputSchema(schemaBomb(40), map[string]any{"a": 1}).Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var tc *mcp.SchemaTooComplexError
		require.ErrorAs(t, err, &tc, "a schema that cannot be applied is never taken as permissive")
		var se *mcp.OutputSchemaError
		assert.ErrorAs(t, err, &se)
	})
	t.Run("a schema that refers outside itself is not fetched, and its results are refused", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, withOutputSchema(map[string]any{"$ref": "https://example.com/schema.json"}, map[string]any{"a": 1}).Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var se *mcp.OutputSchemaError
		require.ErrorAs(t, err, &se)
		assert.Contains(t, err.Error(), "only references within the schema are followed")
	})
	t.Run("a schema with shared definitions within bounds is applied", func(t *testing.T) {
		noLeaks(t)
		c := connect(t, withOutputSchema(schemaBomb(8), "not an object").Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var se *mcp.OutputSchemaError
		require.ErrorAs(t, err, &se)
	})
	t.Run("a schema applied to a huge value is refused, not run", func(t *testing.T) {
		noLeaks(t)
		values := make([]any, 60000)
		for i := range values {
			values[i] = i
		}
		c := connect(t, withOutputSchema(schemaBomb(10), map[string]any{"v": values}).Transport())
		_, err := c.Tools(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		_, err = callWithin(t, c, 5*time.Second)
		var tc *mcp.SchemaTooComplexError
		require.ErrorAs(t, err, &tc)
		var se *mcp.OutputSchemaError
		assert.ErrorAs(t, err, &se)
	})
}
