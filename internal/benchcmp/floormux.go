package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
)

// floorMux is the floor for concurrent calls over stdio: the least a
// client shared by goroutines must do. Each call builds its request by
// hand and writes it under a lock; one goroutine reads the answer lines and
// hands each to the call waiting for its id. Like floorClient, it serves
// nothing and decodes nothing but the text's length.
type floorMux struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	id   atomic.Int64
	wmu  sync.Mutex
	mu   sync.Mutex
	wait map[int64]chan []byte
	done chan struct{}
	err  error // why reading ended; set before done is closed
}

func connectFloorMux(ctx context.Context, exe string) (client, error) {
	cmd, in, out, err := startServer(ctx, exe)
	if err != nil {
		return nil, err
	}
	f := &floorMux{cmd: cmd, in: in, out: out, wait: map[int64]chan []byte{}, done: make(chan struct{})}
	go f.read()
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

func (f *floorMux) read() {
	defer close(f.done)
	var long []byte
	for {
		frag, err := f.out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, frag...)
			continue
		}
		if err != nil {
			f.err = err
			return
		}
		line := append(long, frag...) // a copy: the call keeps it
		long = nil
		id, ok := answerID(line)
		if !ok {
			continue
		}
		f.mu.Lock()
		ch := f.wait[id]
		delete(f.wait, id)
		f.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
}

// answerID finds the id of an answer line, which the bench server writes
// first: {"jsonrpc":"2.0","id":N,...
func answerID(line []byte) (int64, bool) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return id, err == nil
}

func (f *floorMux) write(b []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, err := f.in.Write(b)
	return err
}

// send writes a request whose text after "method": is built by rest, and
// waits for its answer.
func (f *floorMux) send(rest func([]byte) []byte) ([]byte, error) {
	id := f.id.Add(1)
	req := append(make([]byte, 0, 256), `{"jsonrpc":"2.0","id":`...)
	req = strconv.AppendInt(req, id, 10)
	req = append(req, `,"method":`...)
	req = rest(req)
	ch := make(chan []byte, 1)
	f.mu.Lock()
	f.wait[id] = ch
	f.mu.Unlock()
	if err := f.write(req); err != nil {
		return nil, err
	}
	select {
	case line := <-ch:
		return line, nil
	case <-f.done:
		if f.err == nil {
			return nil, errors.New("floor client: closed")
		}
		return nil, f.err
	}
}

func (f *floorMux) roundTrip(rest string) ([]byte, error) {
	return f.send(func(b []byte) []byte { return append(append(b, rest...), "}\n"...) })
}

func (f *floorMux) call(_ context.Context, tool string, args map[string]any) (int, error) {
	line, err := f.send(func(b []byte) []byte {
		b = append(b, `"tools/call","params":{"name":`...)
		b = strconv.AppendQuote(b, tool)
		b = append(b, `,"arguments":`...)
		return append(append(b, argsJSON(args)...), "}}\n"...)
	})
	if err != nil {
		return 0, err
	}
	return textLen(line)
}

// argsJSON is the bench's arguments as JSON: {"text":"hi"} or {"size":N}.
func argsJSON(args map[string]any) string {
	if n, ok := args["size"].(int); ok {
		return `{"size":` + strconv.Itoa(n) + `}`
	}
	return `{"text":"hi"}`
}

func (f *floorMux) listTools(context.Context) error {
	_, err := f.roundTrip(`"tools/list"`)
	return err
}

func (f *floorMux) close() {
	f.in.Close()
	f.cmd.Wait()
	<-f.done
}
