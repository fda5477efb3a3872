package jsonrpc

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// A Reader reads a connection's stream: it takes the responses to the
// connection's own requests out of it, routing each to its call, hands
// the server's requests and notifications on, records why the stream
// ended, and decides which goroutine reads.
//
// One goroutine at a time reads the stream: the reader. On Lines, whose
// reads can be interrupted (stdio, in memory), a call that finds no reader
// becomes it (Await). It reads until its own response arrives, routing
// other responses to their calls and handing the server's requests and
// notifications to Conn.Serve, then lets go. So a call made while no other
// is in flight writes its request and reads its response itself, with no
// hand-off between goroutines. If the call's ctx ends while it reads, a
// read deadline interrupts it (a line half read is kept for the next
// reader).
//
// The goroutine that runs Run is the background reader. It takes over when a reading call lets go while other calls
// still wait, and once no call has read for an idle time (a millisecond),
// so that the server's messages are read between calls too. It lets go
// after a response when no call waits. On other sources it is the only
// reader.
type Reader struct {
	lines    Lines    // the stream's lines, when it has them
	tops     TopLines // lines, when they scan the top level of each
	msgs     Messages // else its messages
	lead     bool     // calls may read: lines whose reads can be interrupted
	conn     Conn
	readDone chan struct{} // closed when Run has returned
	once     sync.Once

	reading atomic.Bool // reader != noReader, for a look without the lock

	mu          sync.Mutex
	reader      readerID
	tickets     readerID
	interrupted bool          // a past read deadline is set to stop the reader
	idleSince   time.Time     // when a call last let go of reading
	idle        time.Duration // idleRead; tests lengthen it
	lastSeen    readerID      // the reader when the background reader last looked
	bgWait      time.Duration // how long the background reader sleeps while a call reads
	end         error         // why reading ended
	wake        chan struct{}
	timer       *time.Timer // the background reader's; only it uses the timer

	// On demand (RunOnDemand): a goroutine reads while messages come, and
	// again is set when one came while it was reading.
	pushed   PushedMessages
	ended    func()
	draining bool
	again    bool
}

// Lines is a stream of messages, one per line, whose reads a deadline can
// interrupt: stdio and in-memory streams.
type Lines interface {
	// ReadLine returns the next line, valid until the next ReadLine.
	ReadLine() ([]byte, error)
	// SetReadDeadline sets the deadline of reads, and reports whether
	// reads honour it.
	SetReadDeadline(t time.Time) bool
	// Detach hands the last line read over to the caller when it is a
	// large one, so it need not be copied (see ndjson.Codec.Detach).
	Detach() bool
}

// TopLines is Lines that scan the top level of the lines they return
// (ndjson.Codec.LastTop), so that the reader does not scan them again.
type TopLines interface {
	LastTop() (ndjson.Top, bool)
}

// Messages is a stream of whole messages, each in a slice of its own.
type Messages interface {
	ReadMessage() ([]byte, error)
}

// PushedMessages is a stream of messages that says when one has come:
// then no goroutine need wait on it (see RunOnDemand).
type PushedMessages interface {
	Messages
	// TryReadMessage returns the next message if one has come, without
	// waiting: ok is false when none has. Once the stream has ended and
	// every message was taken, it returns why.
	TryReadMessage() (msg []byte, ok bool, err error)
	// OnMessage makes the stream call f, from any goroutine, without
	// waiting and without holding a lock TryReadMessage takes, after a
	// message has come and after it has ended.
	OnMessage(f func())
}

// Conn is the connection a Reader reads for.
type Conn interface {
	// Route delivers a response to the call waiting for it and returns
	// how many calls still wait. owned says whether the response's bytes
	// outlive the next read.
	Route(top ndjson.Top, owned bool) (waiting int)
	// Serve handles every other line, in the order read, whoever read it:
	// a request or notification of the server's, top its members (a line
	// that is not a JSON-RPC object has none). owned says whether the
	// line's bytes outlive the next read.
	Serve(line []byte, top ndjson.Top, owned bool)
	// Waiting returns how many calls wait for a response.
	Waiting() int
	// End records that reading ended with err: every waiting call fails.
	End(err error)
}

// A readerID names the goroutine that reads: a call's ticket, or one of
// these.
type readerID uint64

const (
	noReader readerID = iota
	background
)

// idleRead is how long the stream may go unread between calls before the
// background reader takes over.
const idleRead = time.Millisecond

// maxBackoff bounds the background reader's sleep while one call reads.
const maxBackoff = time.Second

// aLongTimeAgo is a read deadline that has passed: it interrupts a read.
var aLongTimeAgo = time.Unix(1, 0)

// NewReader returns a Reader of lines, when the stream has them, or else
// of msgs.
func NewReader(lines Lines, msgs Messages, conn Conn) *Reader {
	r := new(Reader)
	r.Init(lines, msgs, conn)
	return r
}

// Init makes r, a zero Reader (one inside its connection, say), a Reader
// as NewReader returns it.
func (r *Reader) Init(lines Lines, msgs Messages, conn Conn) {
	r.lines, r.msgs, r.conn = lines, msgs, conn
	r.tops, _ = lines.(TopLines)
	r.readDone = make(chan struct{})
	r.wake = make(chan struct{}, 1)
	r.idle = idleRead
	r.idleSince = time.Now() // the handshake's call may read at once
	r.tickets = background   // calls' tickets come after it
	if lines != nil {
		r.lead = lines.SetReadDeadline(time.Time{})
	}
}

// Run is the background reader: it reads whenever no call does, routing
// responses and serving the server's messages as a reading call does,
// until the stream ends; it returns why. It runs on one goroutine, whose
// end Done marks.
func (r *Reader) Run() error {
	defer r.once.Do(func() { close(r.readDone) })
	for {
		r.mu.Lock()
		if r.end != nil {
			err := r.end
			r.mu.Unlock()
			return err
		}
		wait := time.Duration(0) // until woken
		switch r.reader {
		case background:
		case noReader:
			if idle := time.Since(r.idleSince); !r.lead || idle >= r.idle {
				r.take(background)
			} else {
				wait = r.idle - idle
			}
		default:
			// A call reads. It lets go without waking us unless we sleep
			// long: we look again after idle, and back off while the same
			// call goes on reading.
			wait = backOff(r.reader == r.lastSeen, r.bgWait, r.idle)
			r.lastSeen, r.bgWait = r.reader, wait
		}
		reading := r.reader == background
		r.mu.Unlock()
		if !reading {
			r.sleep(wait)
			continue
		}
		line, err := r.read()
		switch {
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			r.clearInterrupt()
		case err != nil:
			r.Finish(err)
		default:
			r.dispatch(line, background)
		}
	}
}

// RunOnDemand is Run for a stream of pushed messages, with no goroutine
// waiting on the stream: one is started when a message comes and returns
// once it has read everything that came; the one that reads the stream's
// end records it (as Run returns it) and then calls ended, once. It
// reports false, having done nothing, when the stream pushes nothing:
// then Run must run.
func (r *Reader) RunOnDemand(ended func()) bool {
	p, ok := r.msgs.(PushedMessages)
	if !ok || r.lines != nil {
		return false
	}
	r.pushed, r.ended = p, ended
	r.wake = nil // no background reader to wake
	p.OnMessage(r.demand)
	r.demand() // what came before
	return true
}

// demand starts a goroutine that reads what has come, unless one runs.
func (r *Reader) demand() {
	r.mu.Lock()
	if r.draining {
		r.again = true
		r.mu.Unlock()
		return
	}
	r.draining, r.again = true, false
	r.mu.Unlock()
	go r.drain()
}

// drain reads and dispatches what has come, as Run does, and returns when
// nothing more has; at the stream's end it finishes.
func (r *Reader) drain() {
	for {
		r.mu.Lock()
		end := r.end
		r.mu.Unlock()
		var msg []byte
		var ok bool
		var err error
		if end == nil {
			msg, ok, err = r.pushed.TryReadMessage()
		}
		switch {
		case end != nil || err != nil:
			if err != nil {
				r.Finish(err)
			}
			done := false
			r.once.Do(func() { done = true; close(r.readDone) })
			if done {
				r.ended()
			}
			return // a later demand finds the end again, and returns
		case !ok:
			r.mu.Lock()
			if r.again || r.end != nil {
				r.again = false
				r.mu.Unlock()
				continue
			}
			r.draining = false
			r.mu.Unlock()
			return
		}
		r.dispatch(msg, background)
	}
}

// Done is closed once Run has returned.
func (r *Reader) Done() <-chan struct{} { return r.readDone }

// backOff is how long the background reader sleeps while a call reads:
// idle at first, then twice as long each time it finds the same call still
// reading (sameCall), up to maxBackoff. Never 0, which would mean "until
// woken", and a call that lets go does not wake it.
func backOff(sameCall bool, last, idle time.Duration) time.Duration {
	if !sameCall {
		return idle
	}
	return min(max(2*last, idle), maxBackoff)
}

// sleep waits for a wake-up, or for d when d > 0.
func (r *Reader) sleep(d time.Duration) {
	if d <= 0 {
		<-r.wake
		return
	}
	if r.timer == nil {
		r.timer = time.NewTimer(d)
	} else {
		r.timer.Reset(d)
	}
	select {
	case <-r.wake:
		r.timer.Stop()
	case <-r.timer.C:
	}
}

func (r *Reader) wakeBackground() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// read returns the next message's bytes.
func (r *Reader) read() ([]byte, error) {
	if r.lines != nil {
		return r.lines.ReadLine()
	}
	return r.msgs.ReadMessage()
}

// dispatch serves a line the reader id has read: a response goes to its
// call, anything else to Conn.Serve.
func (r *Reader) dispatch(line []byte, id readerID) {
	top, ok := r.top(line)
	if ok && top.IsResponse() {
		waiting := r.conn.Route(top, r.owned())
		if id == background && r.lead && waiting == 0 {
			r.mu.Lock()
			if r.reader == background {
				r.setReader(noReader)
				r.idleSince = time.Now()
			}
			r.mu.Unlock()
		}
		return
	}
	if !ok {
		top = ndjson.Top{}
	}
	r.conn.Serve(line, top, r.owned())
}

// top is the top level of line, the line just read.
func (r *Reader) top(line []byte) (ndjson.Top, bool) {
	if r.tops != nil {
		if top, ok := r.tops.LastTop(); ok {
			return top, true
		}
	}
	return ndjson.ScanTop(line)
}

// owned reports whether the line just read outlives the next read.
func (r *Reader) owned() bool { return r.lines == nil || r.lines.Detach() }

// Await returns the reply to pc, or ctx's error. When no one reads, the
// caller reads until the reply arrives.
func (r *Reader) Await(ctx context.Context, pc *Call) (Reply, error) {
	if t := r.tryLead(); t != noReader {
		return r.readFor(ctx, t, pc)
	}
	if ctx.Done() == nil {
		return <-pc.C, nil
	}
	select {
	case reply := <-pc.C:
		return reply, nil
	case <-ctx.Done():
		return Reply{}, context.Cause(ctx)
	}
}

// setReader makes id the reader. r.mu is held.
func (r *Reader) setReader(id readerID) {
	r.reader = id
	r.reading.Store(id != noReader)
}

// tryLead makes the caller the reader, if there is none.
func (r *Reader) tryLead() readerID {
	if !r.lead || r.reading.Load() { // someone reads: no need for the lock
		return noReader
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reader != noReader || r.end != nil {
		return noReader
	}
	r.tickets++
	r.take(r.tickets)
	return r.tickets
}

// take makes id the reader. r.mu is held.
func (r *Reader) take(id readerID) {
	r.setReader(id)
	if r.interrupted { // meant for the reader before
		r.lines.SetReadDeadline(time.Time{})
		r.interrupted = false
	}
}

// readFor reads as reader t until pc's reply arrives or ctx ends.
func (r *Reader) readFor(ctx context.Context, t readerID, pc *Call) (Reply, error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { r.interrupt(t) })
		defer stop()
	}
	for {
		select {
		case reply := <-pc.C:
			r.letGo(t)
			return reply, nil
		default:
		}
		line, err := r.lines.ReadLine()
		switch {
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			r.clearInterrupt()
			if ctx.Err() != nil {
				r.letGo(t)
				return Reply{}, context.Cause(ctx)
			}
		case err != nil:
			r.Finish(err) // fails pc too
		default:
			r.dispatch(line, t)
		}
	}
}

// letGo ends t's turn as reader: the background reader goes on at once if
// calls wait, and after idleRead otherwise.
func (r *Reader) letGo(t readerID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reader != t {
		return
	}
	if r.end == nil && r.conn.Waiting() > 0 {
		r.setReader(background)
		r.wakeBackground()
		return
	}
	r.setReader(noReader)
	r.idleSince = time.Now()
	if r.bgWait > r.idle { // it backed off during a long call
		r.bgWait = 0
		r.wakeBackground()
	}
}

// interrupt stops reader t's read, if t still reads.
func (r *Reader) interrupt(t readerID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reader == t && !r.interrupted {
		r.interrupted = r.lines.SetReadDeadline(aLongTimeAgo)
	}
}

func (r *Reader) clearInterrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interrupted {
		r.lines.SetReadDeadline(time.Time{})
		r.interrupted = false
	}
}

// Finish records that reading ended with err (Conn.End: every waiting
// call fails), and Run returns err. Only the first err counts.
func (r *Reader) Finish(err error) {
	r.conn.End(err)
	r.mu.Lock()
	if r.end == nil {
		r.end = err
	}
	pushed := r.pushed != nil && !r.draining
	r.mu.Unlock()
	r.wakeBackground()
	if pushed {
		r.demand() // to record the end, and call ended
	}
}

// SetIdle changes how long the stream may go unread between calls before
// the background reader takes over, and wakes it to look again (tests).
func (r *Reader) SetIdle(d time.Duration) {
	r.mu.Lock()
	r.idle, r.bgWait = d, 0
	r.mu.Unlock()
	r.wakeBackground()
}

// CallReads reports whether a call is the reader (tests).
func (r *Reader) CallReads() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reader > background
}

// BackgroundSleep returns how long the background reader sleeps while a
// call reads (tests).
func (r *Reader) BackgroundSleep() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bgWait
}
