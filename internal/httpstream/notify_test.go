package httpstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A notification the caller POSTs itself goes after the notifications
// written before it, however far the sender has got with them. (Whether
// the caller tries while the sender is busy is up to the scheduler, so
// the test tries 20 times.)
func TestPostNotificationKeepsTheOrderWritten(t *testing.T) {
	for round := range 20 {
		arrived := make(chan string, 8)
		gotFirst := make(chan struct{})
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var m struct{ Method string }
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &m)
			arrived <- m.Method
			if m.Method == "first" {
				close(gotFirst)
				<-release // the sender is busy with it
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		s := New(Options{Config: Config{URL: srv.URL, Client: srv.Client(), Logger: slog.New(slog.DiscardHandler),
			Errors: &Errors{Closed: errors.New("closed"), BadResult: errors.New("bad result")}}})

		require.NoError(t, s.WriteObject(json.RawMessage(`{"jsonrpc":"2.0","method":"first"}`)))
		<-gotFirst
		require.NoError(t, s.WriteObject(json.RawMessage(`{"jsonrpc":"2.0","method":"second"}`))) // queued behind it
		posted := make(chan bool)
		initialized := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		go func() { posted <- s.PostNotification(context.Background(), initialized) }()
		close(release)
		if !<-posted { // refused while the others wait: it takes the queue, as the Connection then writes it
			require.NoError(t, s.WriteObject(json.RawMessage(initialized)))
		}
		var order []string
		for range 3 {
			order = append(order, <-arrived)
		}
		assert.Equal(t, []string{"first", "second", "notifications/initialized"}, order, "round %d: the order written", round)

		assert.True(t, s.PostNotification(context.Background(), []byte(`{"jsonrpc":"2.0","method":"third"}`)), "with nothing queued, the caller POSTs it")
		select {
		case m := <-arrived:
			assert.Equal(t, "third", m)
		default:
			t.Error("PostNotification returned before the server had the notification")
		}
		assert.False(t, s.PostNotification(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)), "a request is no notification")
		s.Close()
		srv.Close()
		if t.Failed() {
			return
		}
	}
}
