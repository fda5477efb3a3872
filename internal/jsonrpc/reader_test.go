package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackOff(t *testing.T) {
	tests := []struct {
		name     string
		sameCall bool
		last     time.Duration
		want     time.Duration
	}{
		{"a new call is looked at again after idle", false, 400 * time.Millisecond, time.Millisecond},
		{"the same call doubles the sleep", true, 8 * time.Millisecond, 16 * time.Millisecond},
		{"up to the bound", true, maxBackoff, maxBackoff},
		{"never zero, even after a reset", true, 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, backOff(tt.sameCall, tt.last, time.Millisecond))
		})
	}
}

// fakeLines is a stream of lines whose reads a past deadline interrupts.
type fakeLines struct {
	in chan []byte

	mu       sync.Mutex
	deadline chan struct{} // closed while a past deadline is set
}

func newFakeLines() *fakeLines {
	return &fakeLines{in: make(chan []byte, 16), deadline: make(chan struct{})}
}

func (l *fakeLines) ReadLine() ([]byte, error) {
	l.mu.Lock()
	d := l.deadline
	l.mu.Unlock()
	select {
	case b, ok := <-l.in:
		if !ok {
			return nil, io.EOF
		}
		return b, nil
	case <-d:
		return nil, os.ErrDeadlineExceeded
	}
}

func (l *fakeLines) SetReadDeadline(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	past := !t.IsZero() && t.Before(time.Now())
	select {
	case <-l.deadline:
		if !past {
			l.deadline = make(chan struct{})
		}
	default:
		if past {
			close(l.deadline)
		}
	}
	return true
}

func (l *fakeLines) Detach() bool { return false }

// fakeConn records what a Reader hands it.
type fakeConn struct {
	mu     sync.Mutex
	calls  map[string]*Call
	routed []string
	served []string
	ended  error
}

func (c *fakeConn) Route(top ndjson.Top, owned bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.routed = append(c.routed, string(top.ID))
	if pc := c.calls[string(top.ID)]; pc != nil {
		delete(c.calls, string(top.ID))
		pc.C <- Reply{Result: bytes.Clone(top.Result)}
	}
	return len(c.calls)
}

func (c *fakeConn) Serve(line []byte, _ ndjson.Top, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.served = append(c.served, string(line))
}

func (c *fakeConn) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

func (c *fakeConn) End(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended == nil {
		c.ended = err
	}
	for id, pc := range c.calls {
		delete(c.calls, id)
		pc.C <- Reply{Err: err}
	}
}

func (c *fakeConn) await(id string) *Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]*Call{}
	}
	pc := &Call{C: make(chan Reply, 1)}
	c.calls[id] = pc
	return pc
}

func TestACallWithNoReaderReadsItsOwnReply(t *testing.T) {
	lines, conn := newFakeLines(), &fakeConn{}
	r := NewReader(lines, nil, conn)
	mine, other := conn.await("1"), conn.await("2")
	lines.in <- []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
	lines.in <- []byte(`{"jsonrpc":"2.0","id":2,"result":"theirs"}`)
	lines.in <- []byte(`{"jsonrpc":"2.0","id":1,"result":"mine"}`)

	reply, err := r.Await(context.Background(), mine)
	require.NoError(t, err)
	assert.Equal(t, `"mine"`, string(reply.Result))
	assert.Equal(t, `"theirs"`, string((<-other.C).Result), "the other call's reply was routed on the way")
	assert.Equal(t, []string{"2", "1"}, conn.routed)
	assert.Equal(t, []string{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`}, conn.served, "the server's message was served, in order")
	assert.False(t, r.CallReads(), "the call let go")
}

func TestACancelledReadingCallLeavesTheRestToTheNext(t *testing.T) {
	lines, conn := newFakeLines(), &fakeConn{}
	r := NewReader(lines, nil, conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Await(ctx, conn.await("1"))
		done <- err
	}()
	require.Eventually(t, r.CallReads, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.False(t, r.CallReads())

	// The cancelled call still counted as waiting when it let go, so the
	// background reader reads on.
	ended := make(chan error, 1)
	go func() { ended <- r.Run() }()
	third := conn.await("3") // before its answer, which the background reader may read at once
	lines.in <- []byte(`{"jsonrpc":"2.0","id":3,"result":true}`)
	reply, err := r.Await(context.Background(), third)
	require.NoError(t, err, "the interrupted read left the stream readable")
	assert.Equal(t, "true", string(reply.Result))
	close(lines.in)
	assert.ErrorIs(t, <-ended, io.EOF)
}

// chanMessages are the messages sent on a channel, until it is closed.
type chanMessages chan []byte

func (c chanMessages) ReadMessage() ([]byte, error) {
	b, ok := <-c
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}

// The background reader routes responses and serves the server's
// messages, in the order read, as a reading call does.
func TestTheBackgroundReaderServesTheServersMessages(t *testing.T) {
	msgs := make(chan []byte, 4)
	conn := &fakeConn{}
	r := NewReader(nil, chanMessages(msgs), conn)
	ended := make(chan error, 1)
	go func() { ended <- r.Run() }()
	pc := conn.await("7")
	msgs <- []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)
	msgs <- []byte(`{"jsonrpc":"2.0","method":"ping","id":"s1"}`)
	msgs <- []byte(`not json`)
	assert.Equal(t, "{}", string((<-pc.C).Result), "a response is routed")

	waiting := conn.await("8")
	close(msgs)
	require.ErrorIs(t, <-ended, io.ErrUnexpectedEOF)
	<-r.Done()
	assert.ErrorIs(t, (<-waiting.C).Err, io.ErrUnexpectedEOF, "the end fails the calls that wait")
	conn.mu.Lock()
	assert.Equal(t, []string{`{"jsonrpc":"2.0","method":"ping","id":"s1"}`, "not json"}, conn.served, "what is not a response is served, in order")
	assert.Equal(t, []string{"7"}, conn.routed)
	conn.mu.Unlock()
	r.Finish(errors.New("later"))
	assert.ErrorIs(t, r.Run(), io.ErrUnexpectedEOF, "the first end is the one kept")
}
