package jsonrpc

import (
	"sync"
	"sync/atomic"
)

// Reply is a response to one of the client's requests: the raw result
// (its own copy) or an error.
type Reply struct {
	Result []byte
	Err    error
}

// Call is a request waiting for its Reply, which arrives once on C.
type Call struct {
	C chan Reply // buffered: delivery never blocks the reader

	background bool // registered by AddBackground: Fail does not count it
}

// Pending maps request ids to the calls waiting for them. The map is
// split in shards by id, so that the calls registering themselves and the
// reader delivering responses seldom wait for one another's lock.
type Pending struct {
	waiting atomic.Int64 // calls registered and not yet delivered, removed or failed
	over    atomic.Bool  // fail has been called
	shards  [pendingShards]pendingShard
	// free keeps released calls for reuse. It is the Connection's own, not
	// the process's: a channel belongs to the testing/synctest bubble it
	// was made in, so a Connection in a bubble must not be handed one made
	// by another.
	free sync.Pool
}

const pendingShards = 8

type pendingShard struct {
	mu     sync.Mutex
	calls  map[uint64]*Call
	closed error    // set once the connection has ended; later adds fail with it
	_      [64]byte // a cache line of its own
}

func (p *Pending) shard(id uint64) *pendingShard { return &p.shards[id%pendingShards] }

// Add registers id, or returns the connection's end error.
func (p *Pending) Add(id uint64) (*Call, error) { return p.add(id, false) }

// AddBackground registers id as Add does, for a call the client makes on
// its own, for no caller of its: Fail does not count it.
func (p *Pending) AddBackground(id uint64) (*Call, error) { return p.add(id, true) }

func (p *Pending) add(id uint64, background bool) (*Call, error) {
	pc, _ := p.free.Get().(*Call)
	if pc == nil {
		pc = &Call{C: make(chan Reply, 1)}
	}
	sh := p.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed != nil {
		p.free.Put(pc)
		return nil, sh.closed
	}
	if sh.calls == nil {
		sh.calls = map[uint64]*Call{}
	}
	pc.background = background
	sh.calls[id] = pc
	p.waiting.Add(1)
	return pc, nil
}

// Take forgets id and returns its call, if it was still waiting.
func (p *Pending) Take(id uint64) (*Call, bool) {
	sh := p.shard(id)
	sh.mu.Lock()
	pc, ok := sh.calls[id]
	delete(sh.calls, id)
	sh.mu.Unlock()
	if ok {
		p.waiting.Add(-1)
	}
	return pc, ok
}

// Remove forgets id; it reports whether id was still waiting.
func (p *Pending) Remove(id uint64) bool {
	_, ok := p.Take(id)
	return ok
}

// Deliver hands r to the call waiting for id. It reports false for an id
// nobody waits for (late, duplicate or unknown), and how many calls still
// wait.
func (p *Pending) Deliver(id uint64, r Reply) (ok bool, waiting int) {
	pc, ok := p.Take(id)
	if ok {
		pc.C <- r
	}
	return ok, p.Count()
}

// Fail ends every pending call with err and refuses new ones. It returns
// how many calls it ended, those of AddBackground not counted: 0 when
// Fail was called before.
func (p *Pending) Fail(err error) int {
	if p.over.Swap(true) {
		return 0
	}
	n := 0
	for i := range p.shards {
		sh := &p.shards[i]
		sh.mu.Lock()
		sh.closed = err
		for id, pc := range sh.calls {
			pc.C <- Reply{Err: err}
			delete(sh.calls, id)
			p.waiting.Add(-1)
			if !pc.background {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// Count returns how many calls wait.
func (p *Pending) Count() int { return int(p.waiting.Load()) }

// Ended reports whether Fail was called.
func (p *Pending) Ended() bool { return p.over.Load() }

// Release gives back a call whose answer was taken, or that was removed.
func (p *Pending) Release(pc *Call) { p.free.Put(pc) }
