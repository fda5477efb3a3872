package apps

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// A view's requests are bounded per second: the burst, then the rate.
func TestAViewsRequestsAreBoundedPerSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(nil, &Options{SandboxOrigin: "http://*.localhost:1"})
		h.add(&session{info: ViewInfo{ID: "v"}, limiter: rate.NewLimiter(MessageRate, MessageBurst), inFlight: make(chan struct{}, MaxInFlight)})
		code := func() int {
			req := httptest.NewRequest("POST", "/api/views/v/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x/unknown"}`))
			req.Host = "127.0.0.1:8080"
			req.Header.Set("X-Mcplug-Host", h.token)
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			require.Equal(t, http.StatusOK, w.Code)
			var a struct{ Error struct{ Code int } }
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a))
			return a.Error.Code
		}
		count := func(n int) (busy int) {
			for range n {
				if code() == CodeBusy {
					busy++
				}
			}
			return busy
		}
		assert.Zero(t, count(MessageBurst), "the burst is served")
		assert.Equal(t, 1, count(1), "one more is refused")
		time.Sleep(time.Second)
		assert.Zero(t, count(MessageRate), "a second later, the rate is served")
		assert.Equal(t, 1, count(1))
	})
}
