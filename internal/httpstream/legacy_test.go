package httpstream

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The legacy transport's record of queued requests keeps nothing once a
// request was POSTed or given up on, whatever the order: a cancellation
// that comes after the POST leaves no entry behind.
func TestSSEQueuedRequestsKeepNothingBehind(t *testing.T) {
	var s SSE
	noop := func() {}
	cancelled := []byte(`{"requestId":1}`)

	s.enqueue("1")
	assert.True(t, s.startPost("1", noop))
	s.endPost()
	s.abandon(cancelled) // answered already: nothing to keep
	assert.Empty(t, s.queued)

	s.enqueue("2")
	s.abandon([]byte(`{"requestId":2}`))
	assert.False(t, s.startPost("2", noop), "a request given up on while queued is not sent")
	assert.Empty(t, s.queued)

	ended := false
	s.enqueue("3")
	_, cancel := context.WithCancel(context.Background())
	assert.True(t, s.startPost("3", func() { ended = true; cancel() }))
	s.abandon([]byte(`{"requestId":3}`))
	assert.True(t, ended, "the POST under way is ended")
	s.endPost()
	assert.Empty(t, s.queued)
}
