package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp"
)

// logged is a Stream the program wrapped around a transport's: only the
// three Stream methods show through.
type logged struct{ mcp.Stream }

func TestAFailedPOSTFailsOnlyItsCall(t *testing.T) {
	tests := []struct {
		name  string
		wrap  bool
		check func(t *testing.T, err error)
	}{
		{name: "the call gets the Go error of the exchange", check: func(t *testing.T, err error) {
			var status *mcp.HTTPStatusError
			require.ErrorAs(t, err, &status)
			assert.Equal(t, http.StatusBadGateway, status.StatusCode)
		}},
		{name: "through a wrapped stream, a JSON-RPC error that says what failed", wrap: true, check: func(t *testing.T, err error) {
			var rpcErr *mcp.Error
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, int64(mcp.CodeInternalError), rpcErr.Code)
			assert.Contains(t, rpcErr.Message, "502")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			srv := scriptedServer(t, &scripted{call: func(w http.ResponseWriter, r *http.Request, m rpcMsg) {
				var p struct{ Name string }
				json.Unmarshal(m.Params, &p)
				if p.Name == "broken" {
					w.WriteHeader(http.StatusBadGateway)
					return
				}
				writeJSON(w, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "fine"}}}))
			}})
			var transport mcp.Transport = &mcp.StreamableHTTPTransport{URL: srv.URL}
			if tt.wrap {
				inner := transport
				transport = mcp.TransportFunc(func(ctx context.Context) (mcp.Stream, error) {
					s, err := inner.Connect(ctx)
					return logged{s}, err
				})
			}
			c := httpConnect(t, transport, nil)
			ctx := ctxTimeout(t, 5*time.Second)
			_, err := c.CallTool(ctx, "broken", nil)
			tt.check(t, err)
			res, err := c.CallTool(ctx, "other", nil)
			require.NoError(t, err, "the connection goes on")
			assert.Equal(t, "fine", res.Text())
		})
	}
}

func TestAURLThatIsNotHTTPSaysSo(t *testing.T) {
	noLeaks(t)
	_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), &mcp.StreamableHTTPTransport{URL: "ftp://files.example/mcp?token=secret"}, &mcp.Options{Logger: quiet})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unsupported protocol scheme "ftp"`)
	assert.Contains(t, err.Error(), "ftp://files.example/mcp", "the error names the URL")
	assert.NotContains(t, err.Error(), "secret", "without its query values")
}

func TestAnUnparsableURLKeepsItsSecretsOutOfTheError(t *testing.T) {
	tests := []struct {
		name string
		t    mcp.Transport
	}{
		{"HTTP+SSE", &mcp.SSETransport{URL: "http://127.0.0.1:1/sse?token=s3cret\x7f"}},
		{"Streamable HTTP", &mcp.StreamableHTTPTransport{URL: "http://127.0.0.1:1/mcp?token=s3cret\x7f"}},
		{"user info", mcp.NewHTTPTransport("http://u:s3cret@127.0.0.1:1/mcp\x7f", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			_, err := mcp.Connect(ctxTimeout(t, 5*time.Second), tt.t, &mcp.Options{Logger: quiet})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "invalid control character", "the error says what is wrong")
			assert.NotContains(t, err.Error(), "s3cret")
		})
	}
}
