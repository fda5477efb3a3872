package jsonrpc

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushed is a stream of messages that says when one has come.
type pushed struct {
	mu     sync.Mutex
	queue  [][]byte
	err    error
	notify func()
}

func (p *pushed) ReadMessage() ([]byte, error) { panic("a pushed stream is not waited on") }

func (p *pushed) TryReadMessage() ([]byte, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) > 0 {
		msg := p.queue[0]
		p.queue = p.queue[1:]
		return msg, true, nil
	}
	return nil, false, p.err
}

func (p *pushed) OnMessage(f func()) {
	p.mu.Lock()
	p.notify = f
	p.mu.Unlock()
}

func (p *pushed) push(msg string) {
	p.mu.Lock()
	p.queue = append(p.queue, []byte(msg))
	f := p.notify
	p.mu.Unlock()
	f()
}

func (p *pushed) end(err error) {
	p.mu.Lock()
	p.err = err
	f := p.notify
	p.mu.Unlock()
	f()
}

func TestOnDemandReaderHoldsNoGoroutineWhileIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, conn := &pushed{}, &fakeConn{}
		r := NewReader(nil, src, conn)
		ended := 0
		require.True(t, r.RunOnDemand(func() { ended++ }))
		synctest.Wait()

		pc := conn.await("1")
		src.push(`{"jsonrpc":"2.0","method":"notifications/message"}`)
		src.push(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
		src.push(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		reply := <-pc.C
		assert.JSONEq(t, `{"ok":true}`, string(reply.Result), "the response reaches its call")
		synctest.Wait() // every goroutine the reader started has returned: none is left waiting
		conn.mu.Lock()
		assert.Equal(t, []string{`{"jsonrpc":"2.0","method":"notifications/message"}`, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`}, conn.served, "the server's messages, in order")
		conn.mu.Unlock()
		select {
		case <-r.Done():
			t.Fatal("Done before the stream ended")
		default:
		}

		gone := errors.New("the stream ended")
		src.end(gone)
		<-r.Done()
		synctest.Wait()
		assert.Equal(t, 1, ended, "ended is called once")
		assert.Equal(t, gone, conn.ended)
		src.end(gone) // a later wake-up finds the end again
		synctest.Wait()
		assert.Equal(t, 1, ended)
	})
}

func TestOnDemandReaderEndsWhenFinishedElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, conn := &pushed{}, &fakeConn{}
		r := NewReader(nil, src, conn)
		ended := 0
		require.True(t, r.RunOnDemand(func() { ended++ }))
		broke := errors.New("a write failed")
		r.Finish(broke)
		<-r.Done()
		synctest.Wait()
		assert.Equal(t, 1, ended)
		assert.Equal(t, broke, conn.ended)
	})
}

func TestOnDemandIsOnlyForPushedStreams(t *testing.T) {
	r := NewReader(newFakeLines(), nil, &fakeConn{})
	assert.False(t, r.RunOnDemand(func() {}), "lines are read by Run")
}
