package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
)

// floorMux is the floor for concurrent calls over stdio: the least a
// client shared by goroutines must do. Each call builds its request by
// hand and writes it with one write under a lock. No goroutine is there
// only to read: the call whose answer is awaited reads, straight from the
// buffer, hands each line that answers another call to that call (a copy
// into the waiter's own buffer), and once its own has come, hands the
// reading to a call still waiting. Like floorClient, it serves nothing
// and decodes nothing but the text's length.
type floorMux struct {
	contract bool // the contract floor (contract.go)
	cmd      *exec.Cmd
	in       *os.File
	out      *os.File
	r        *lineReader
	id       atomic.Int64
	wmu      sync.Mutex

	mu      sync.Mutex
	reading bool              // a call holds the reading
	waiting map[int64]*waiter // the calls waiting for an answer
	err     error             // why reading ended
	waiters sync.Pool
}

// waiter is a call waiting: it gets its answer, or the reading, on ch.
type waiter struct {
	ch   chan bool // true: the answer is in line; false: read yourself
	line []byte
	req  []byte
}

func connectFloorMux(_ context.Context, exe string) (client, error) {
	return startFloorMux(exe, false)
}

// connectContractMux is the contract floor for concurrent calls.
func connectContractMux(_ context.Context, exe string) (client, error) {
	return startFloorMux(exe, true)
}

func startFloorMux(exe string, contract bool) (client, error) {
	cmd, in, out, err := startFloorServer(exe)
	if err != nil {
		return nil, err
	}
	f := &floorMux{contract: contract, cmd: cmd, in: in, out: out, r: newLineReader(out), waiting: map[int64]*waiter{}}
	f.waiters.New = func() any { return &waiter{ch: make(chan bool, 1)} }
	if _, err := f.roundTrip(floorInitialize); err != nil {
		f.close()
		return nil, err
	}
	if err := f.write([]byte(floorInitialized)); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// answerID finds the id of an answer line, which the bench server writes
// first: {"jsonrpc":"2.0","id":N,...
func answerID(line []byte) (int64, bool) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	id, n := int64(0), 0
	for _, c := range line[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
		n++
	}
	return id, n > 0
}

func (f *floorMux) write(b []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, err := f.in.Write(b)
	return err
}

// send writes a request whose text after "method": is built by rest, waits
// for its answer and gives what answer makes of it (the answer's line is
// only valid during answer).
func (f *floorMux) send(rest func([]byte) []byte, answer func([]byte) (int, error)) (int, error) {
	id := f.id.Add(1)
	w := f.waiters.Get().(*waiter)
	defer f.waiters.Put(w)
	w.req = append(w.req[:0], `{"jsonrpc":"2.0","id":`...)
	w.req = strconv.AppendInt(w.req, id, 10)
	w.req = append(w.req, `,"method":`...)
	w.req = rest(w.req)
	f.mu.Lock()
	if f.err != nil {
		f.mu.Unlock()
		return 0, f.err
	}
	f.waiting[id] = w
	lead := !f.reading
	f.reading = true
	f.mu.Unlock()
	if err := f.write(w.req); err != nil {
		return 0, err
	}
	if !lead {
		if got := <-w.ch; got {
			return answer(w.line)
		}
		f.mu.Lock()
		err := f.err
		f.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
	return f.readFor(id, answer)
}

// readFor reads lines until the answer to id, holding the reading, and
// then hands the reading on.
func (f *floorMux) readFor(id int64, answer func([]byte) (int, error)) (int, error) {
	for {
		line, err := f.r.next()
		if err != nil {
			f.mu.Lock()
			f.err = err
			for other, w := range f.waiting {
				if other != id {
					w.ch <- false // each finds f.err
				}
			}
			clear(f.waiting)
			f.mu.Unlock()
			return 0, err
		}
		got, ok := answerID(line)
		if !ok {
			continue
		}
		if got == id {
			n, err := answer(line)
			f.handOn(id)
			return n, err
		}
		f.mu.Lock()
		w := f.waiting[got]
		delete(f.waiting, got)
		f.mu.Unlock()
		if w != nil {
			w.line = append(w.line[:0], line...)
			w.ch <- true
		}
	}
}

// handOn gives the reading to a call still waiting, if any.
func (f *floorMux) handOn(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.waiting, id)
	for _, w := range f.waiting {
		w.ch <- false
		return
	}
	f.reading = false
}

func (f *floorMux) roundTrip(rest string) ([]byte, error) {
	var out []byte
	_, err := f.send(func(b []byte) []byte { return append(append(b, rest...), "}\n"...) },
		func(line []byte) (int, error) { out = append(out, line...); return 0, nil })
	return out, err
}

func (f *floorMux) call(_ context.Context, tool string, args map[string]any) (int, error) {
	answer := textLen
	if f.contract {
		answer = contractTextLen
	}
	return f.send(func(b []byte) []byte { return appendCall(b, tool, args, f.contract) }, answer)
}

// argsJSON is the bench's arguments as JSON: {"text":"hi"} or {"size":N}.
func argsJSON(args map[string]any) string {
	if n, ok := args["size"].(int); ok {
		return `{"size":` + strconv.Itoa(n) + `}`
	}
	return `{"text":"hi"}`
}

func (f *floorMux) listTools(context.Context) error {
	line, err := f.roundTrip(`"tools/list"`)
	if err == nil && f.contract {
		err = contractListed(line)
	}
	return err
}

func (f *floorMux) close() {
	f.in.Close()
	f.cmd.Wait()
	f.out.Close()
}
