package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

func init() {
	// A server whose tools/call makes its process exit with status 7.
	servers["exits"] = func() *mcptest.Server {
		srv := &mcptest.Server{Name: "exits"}
		srv.InjectFault("tools/call", mcptest.Exit(7))
		return srv
	}
}

func TestTheExitFault(t *testing.T) {
	t.Run("a child process exits with the status", func(t *testing.T) {
		noLeaks(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := mcp.Connect(ctx, &mcp.CommandTransport{Command: mcptest.Command("exits")}, nil)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.CallTool(ctx, "echo", map[string]any{"text": "x"})
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 7, exit.Code)
		assert.Contains(t, exit.Stderr, "mcptest: exiting with status 7 (the Exit fault injected for tools/call)")
		assert.ErrorIs(t, err, mcp.ErrClosed)
	})
	refused := func(t *testing.T, tr mcp.Transport, srv *mcptest.Server) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := mcp.Connect(ctx, tr, nil)
		require.NoError(t, err)
		defer c.Close()
		srv.InjectFault("tools/call", mcptest.Exit(3))
		_, err = c.CallTool(ctx, "echo", map[string]any{"text": "x"})
		var rpc *mcp.Error
		require.ErrorAs(t, err, &rpc, "the test binary goes on, and the call says why")
		assert.EqualValues(t, mcp.CodeInternalError, rpc.Code)
		assert.Contains(t, rpc.Message, "Exit(3) fault injected for tools/call is refused")
		assert.Contains(t, rpc.Message, "mcptest.Main")
		res, err := c.CallTool(ctx, "echo", map[string]any{"text": "still here"})
		require.NoError(t, err)
		assert.Equal(t, "still here", res.Text())
	}
	t.Run("in memory it is refused with an error", func(t *testing.T) {
		noLeaks(t)
		srv := &mcptest.Server{}
		refused(t, srv.Transport(), srv)
	})
	t.Run("over HTTP it is refused with an error", func(t *testing.T) {
		srv := &mcptest.Server{}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		refused(t, &mcp.StreamableHTTPTransport{URL: hs.URL}, srv)
	})
	t.Run("a status outside 0 to 255 is a mistake", func(t *testing.T) {
		assert.PanicsWithValue(t, "mcptest: Exit(256): an exit status is 0 to 255", func() { mcptest.Exit(256) })
		assert.Panics(t, func() { mcptest.Exit(-1) })
	})
}

// weatherIn and weatherOut are a typed tool's arguments and result.
type weatherIn struct {
	City  string `json:"city" jsonschema:"description=the city's name"`
	Days  int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
	Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial"`
}

type weatherOut struct {
	City  string    `json:"city"`
	Highs []float64 `json:"highs"`
}

func TestTypedTools(t *testing.T) {
	noLeaks(t)
	srv := &mcptest.Server{}
	ran := 0
	mcptest.AddTool(srv, mcp.Tool{Name: "forecast", Description: "The forecast."}, func(ctx context.Context, req *mcptest.Request, in weatherIn) (weatherOut, error) {
		ran++
		if in.City == "Atlantis" {
			return weatherOut{}, errors.New("no weather under the sea")
		}
		days := max(in.Days, 1)
		out := weatherOut{City: in.City}
		for i := range days {
			out.Highs = append(out.Highs, 20+float64(i))
		}
		return out, nil
	})
	mcptest.AddTool(srv, mcp.Tool{Name: "shout"}, func(ctx context.Context, req *mcptest.Request, in map[string]string) (string, error) {
		return in["text"] + "!", nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, srv.Transport(), nil)
	require.NoError(t, err)
	defer c.Close()

	tools, err := c.Tools(ctx)
	require.NoError(t, err)
	require.Len(t, tools, 2)
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["city"],"properties":{
		"city":{"type":"string","description":"the city's name"},
		"days":{"type":"integer","minimum":1,"maximum":7},
		"units":{"type":"string","enum":["metric","imperial"]}}}`, string(tools[0].InputSchema), "the input schema is made from the struct")
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["city","highs"],"properties":{
		"city":{"type":"string"},"highs":{"type":"array","items":{"type":"number"}}}}`, string(tools[0].OutputSchema))

	tests := []struct {
		name    string
		args    any
		isError bool
		text    string
	}{
		{"arguments that match", map[string]any{"city": "Oslo", "days": 2}, false, `{"city":"Oslo","highs":[20,21]}`},
		{"a required argument missing", map[string]any{"days": 2}, true, "invalid arguments for tool forecast: at /: missing property 'city'"},
		{"a value of the wrong type", map[string]any{"city": "Oslo", "days": "two"}, true, "at /days: got string, want integer"},
		{"a value out of range", map[string]any{"city": "Oslo", "days": 9}, true, "at /days: maximum: got 9, want 7"},
		{"a value not in the enum", map[string]any{"city": "Oslo", "units": "kelvin"}, true, "at /units: value must be one of"},
		{"an argument the tool does not take", map[string]any{"city": "Oslo", "when": "now"}, true, "additional properties 'when' not allowed"},
		{"no arguments", nil, true, "missing property 'city'"},
		{"the handler's error", map[string]any{"city": "Atlantis"}, true, "no weather under the sea"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ran
			res, err := c.CallTool(ctx, "forecast", tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.isError, res.IsError)
			assert.Contains(t, res.Text(), tt.text)
			if tt.isError && tt.text != "no weather under the sea" {
				assert.Equal(t, before, ran, "the handler does not run")
			}
			if !tt.isError {
				assert.JSONEq(t, tt.text, string(res.StructuredContent))
			}
		})
	}
	t.Run("a result the client checks against the output schema", func(t *testing.T) {
		out, _, err := mcp.CallToolAs[weatherOut](ctx, c, "forecast", weatherIn{City: "Rome", Days: 1})
		require.NoError(t, err)
		assert.Equal(t, weatherOut{City: "Rome", Highs: []float64{20}}, out)
	})
	t.Run("a map of arguments, and a text result", func(t *testing.T) {
		res, err := c.CallTool(ctx, "shout", map[string]any{"text": "hi"})
		require.NoError(t, err)
		assert.Equal(t, "hi!", res.Text())
		assert.Empty(t, res.StructuredContent)
		res, err = c.CallTool(ctx, "shout", map[string]any{"text": 1})
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Text(), "at /text: got number, want string")
	})
	t.Run("arguments that are not an object are a mistake", func(t *testing.T) {
		assert.PanicsWithValue(t, `mcptest: AddTool: the arguments of tool "n" are a int; a tool's arguments are an object: a struct or a map`, func() {
			mcptest.AddTool(srv, mcp.Tool{Name: "n"}, func(context.Context, *mcptest.Request, int) (int, error) { return 0, nil })
		})
		assert.Panics(t, func() {
			mcptest.AddTool(srv, mcp.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type": 5}`)}, func(context.Context, *mcptest.Request, weatherIn) (string, error) { return "", nil })
		})
	})
}
