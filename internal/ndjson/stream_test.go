package ndjson

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A direct write that fails while Close waits for the writer goroutine
// must let that goroutine end: a server killed mid-write once left Close
// waiting for ever (found by the soak test).
func TestCloseAfterADirectWriteFails(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	s := NewStream(w, StreamOptions{})
	s.mu.Lock()
	s.writing = true // a caller is writing directly
	s.mu.Unlock()
	closed := make(chan struct{})
	go func() {
		s.Close() // Close now waits for that write
		close(closed)
	}()
	require.Eventually(t, func() bool { // Close waits for the direct write
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.quiet != nil
	}, 5*time.Second, time.Millisecond)
	s.failWrite(errors.New("broken pipe"), true)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a write that has failed")
	}
}
