package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"unicode/utf8"
)

// floorClient is the least a client can do: one goroutine writes a request
// built by hand and reads lines until the answer, and finds the text's
// length without decoding anything else. It serves nothing, checks nothing
// and cannot be used from two goroutines: it is the floor the others are
// measured against, not a client.
type floorClient struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	id   int
	req  []byte
	line []byte
}

// startServer starts the bench server process with pipes to it.
func startServer(ctx context.Context, exe string) (*exec.Cmd, io.WriteCloser, *bufio.Reader, error) {
	cmd := exec.CommandContext(ctx, exe, "serve")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, bufio.NewReaderSize(out, 64<<10), nil
}

// The floors' handshake: the initialize request after "method":, and the
// notification that follows its answer.
const (
	floorInitialize  = `"initialize","params":{"protocolVersion":"` + protocol + `","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}`
	floorInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
)

func connectFloor(ctx context.Context, exe string) (client, error) {
	cmd, in, out, err := startServer(ctx, exe)
	if err != nil {
		return nil, err
	}
	f := &floorClient{cmd: cmd, in: in, out: out}
	if _, err := f.roundTrip(floorInitialize); err != nil {
		f.close()
		return nil, err
	}
	if _, err := io.WriteString(in, floorInitialized); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// begin starts the next request in f.req, up to "method":.
func (f *floorClient) begin() {
	f.id++
	f.req = append(f.req[:0], `{"jsonrpc":"2.0","id":`...)
	f.req = strconv.AppendInt(f.req, int64(f.id), 10)
	f.req = append(f.req, `,"method":`...)
}

// roundTrip sends a request whose text after "method": is rest and returns
// the response line.
func (f *floorClient) roundTrip(rest string) ([]byte, error) {
	f.begin()
	f.req = append(f.req, rest...)
	f.req = append(f.req, "}\n"...)
	return f.send()
}

func (f *floorClient) send() ([]byte, error) {
	if _, err := f.in.Write(f.req); err != nil {
		return nil, err
	}
	f.line = f.line[:0]
	for {
		frag, err := f.out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			f.line = append(f.line, frag...)
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(f.line) == 0 {
			return frag, nil
		}
		f.line = append(f.line, frag...)
		return f.line, nil
	}
}

func (f *floorClient) call(_ context.Context, tool string, args map[string]any) (int, error) {
	f.begin()
	f.req = append(f.req, `"tools/call","params":{"name":`...)
	f.req = strconv.AppendQuote(f.req, tool)
	f.req = append(f.req, `,"arguments":{`...)
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			f.req = append(f.req, ',')
		}
		f.req = strconv.AppendQuote(f.req, k)
		f.req = append(f.req, ':')
		switch v := args[k].(type) {
		case string:
			f.req = strconv.AppendQuote(f.req, v)
		case int:
			f.req = strconv.AppendInt(f.req, int64(v), 10)
		default:
			return 0, fmt.Errorf("floor client: argument of type %T", v)
		}
	}
	f.req = append(f.req, "}}}\n"...)
	line, err := f.send()
	if err != nil {
		return 0, err
	}
	return textLen(line)
}

// textLen returns the unescaped length of the first "text" string in line.
func textLen(line []byte) (int, error) {
	i := bytes.Index(line, []byte(`"text":"`))
	if i < 0 {
		return 0, errors.New("floor client: no text in the answer")
	}
	n := 0
	for i += len(`"text":"`); i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			return n, nil
		case '\\':
			i++
			if i < len(line) && line[i] == 'u' && i+4 < len(line) {
				r, _ := strconv.ParseUint(string(line[i+1:i+5]), 16, 32)
				i += 4
				if r >= 0xD800 && r < 0xDC00 {
					n += 4 // a surrogate pair: one 4-byte rune, the low half follows
					i += 6
					continue
				}
				n += utf8.RuneLen(rune(r))
				continue
			}
			n++
		default:
			n++
		}
	}
	return 0, errors.New("floor client: unterminated text")
}

func (f *floorClient) listTools(context.Context) error {
	_, err := f.roundTrip(`"tools/list"`)
	return err
}

func (f *floorClient) close() {
	f.in.Close()
	f.cmd.Wait()
}
