package httpstream

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// inbox is the queue of messages a remote stream has received and
// ReadObject has not taken yet.
type inbox struct {
	mu     sync.Mutex
	queue  [][]byte
	bytes  int           // in queue
	wake   chan struct{} // made by the first take that waits
	closed bool
	err    error // why the stream ended, returned once the queue is empty

	// fail, once the Connection named it, takes the failed exchanges of
	// requests (see failRequest).
	fail atomic.Pointer[func(id []byte, err error)]

	badResult error // what a response that does not decode matches

	// notify, when set, is called after a message is queued and after the
	// end (see onMessage).
	notify atomic.Pointer[func()]
}

// onMessage makes the inbox call f after each message it queues and
// after its end, outside its lock: the reader then need not wait in take.
func (b *inbox) onMessage(f func()) {
	b.notify.Store(&f)
	f() // for what came before
}

// tryTake returns the next message without waiting: ok is false when
// none is queued; once the inbox has ended and is empty, the reason.
func (b *inbox) tryTake() (msg []byte, ok bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) > 0 {
		msg = b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		b.bytes -= len(msg)
		if len(b.queue) == 0 {
			b.queue = nil // an idle inbox keeps no array
		}
		return msg, true, nil
	}
	if b.closed {
		return nil, false, b.err
	}
	return nil, false, nil
}

// route hands the failure of the request id to the Connection's route,
// where the call gets err as it is; it reports false when the stream has
// no route (a Stream the program wrapped).
func (b *inbox) route(id []byte, err error) bool {
	f := b.fail.Load()
	if f != nil {
		(*f)(id, err)
	}
	return f != nil
}

// failRequest fails the request id, whose exchange failed, with err:
// through the route, or, with none, as a failureResponse read like any
// other message.
func (b *inbox) failRequest(id []byte, err error) {
	if !b.route(id, err) {
		b.put(failureResponse(id, err))
	}
}

// routeFailures makes route hand failures to f.
func (b *inbox) routeFailures(f func(id []byte, err error)) { b.fail.Store(&f) }

func newInbox(badResult error) *inbox {
	return &inbox{badResult: badResult}
}

func (b *inbox) put(msg []byte) {
	b.mu.Lock()
	if !b.closed {
		b.queue = append(b.queue, msg)
		b.bytes += len(msg)
	}
	b.mu.Unlock()
	b.kick()
}

// putBounded queues msg unless the queue already holds more than max
// bytes: a peer that does not take what is sent must not make it pile up
// without end.
func (b *inbox) putBounded(msg []byte, max int) error {
	b.mu.Lock()
	if b.bytes > 0 && b.bytes+len(msg) > max {
		n := b.bytes
		b.mu.Unlock()
		return &ndjson.WriteStalledError{Queued: n + len(msg), Max: max}
	}
	b.mu.Unlock()
	b.put(msg)
	return nil
}

func (b *inbox) kick() {
	b.mu.Lock()
	wake := b.wake
	b.mu.Unlock()
	if wake != nil {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if f := b.notify.Load(); f != nil {
		(*f)()
	}
}

// end makes ReadObject fail with err once the queue is drained.
func (b *inbox) end(err error) {
	b.mu.Lock()
	if !b.closed {
		b.closed, b.err = true, err
	}
	b.mu.Unlock()
	b.kick()
}

// discard drops what is queued: the stream was closed and nobody will
// read it.
func (b *inbox) discard() {
	b.mu.Lock()
	b.queue, b.bytes = nil, 0
	b.mu.Unlock()
}

// take waits for the next message.
func (b *inbox) take() ([]byte, error) {
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			msg := b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
			b.bytes -= len(msg)
			b.mu.Unlock()
			return msg, nil
		}
		if b.closed {
			err := b.err
			b.mu.Unlock()
			return nil, err
		}
		if b.wake == nil {
			b.wake = make(chan struct{}, 1)
		}
		wake := b.wake
		b.mu.Unlock()
		<-wake
	}
}

// readObject decodes the next message into v. A message that does not
// decode never ends the stream: a response stands for an error of its
// call (ErrBadResult), anything else is skipped.
func (b *inbox) readObject(v any) error {
	for {
		msg, err := b.take()
		if err != nil {
			return err
		}
		err = ndjson.DecodeFresh(msg, v)
		if err == nil {
			return nil
		}
		if top, ok := ndjson.ScanTop(msg); ok && top.IsResponse() {
			failed := fmt.Errorf("%w: the response does not decode: %v", b.badResult, err)
			if b.route(top.ID, failed) {
				continue
			}
			if ndjson.DecodeFresh(failureResponse(top.ID, failed), v) == nil {
				return nil
			}
		}
	}
}
