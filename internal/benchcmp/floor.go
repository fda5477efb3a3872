package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"unicode/utf8"
)

// floorClient is the least a client can do: one goroutine writes a
// request built by hand with one write and reads lines until the answer,
// straight from a buffer as large as the longest line, and finds the
// text's length without decoding anything else. Its pipes are made as
// large as the OS allows. It serves nothing, checks nothing and cannot be
// used from two goroutines: it is the floor the others are measured
// against, not a client.
type floorClient struct {
	contract bool // the contract floor (contract.go)
	cmd      *exec.Cmd
	in       *os.File
	out      *os.File
	r        *lineReader
	id       int
	req      []byte
}

// The floors' handshake: the initialize request after "method":, and the
// notification that follows its answer.
const (
	floorInitialize  = `"initialize","params":{"protocolVersion":"` + protocol + `","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}`
	floorInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
)

func connectFloor(_ context.Context, exe string) (client, error) {
	return startFloor(exe, false)
}

// connectContract is the contract floor over stdio: the floor, with the
// arguments encoded and the answers decoded as mcplug's contract says.
func connectContract(_ context.Context, exe string) (client, error) {
	return startFloor(exe, true)
}

func startFloor(exe string, contract bool) (client, error) {
	cmd, in, out, err := startFloorServer(exe)
	if err != nil {
		return nil, err
	}
	f := &floorClient{contract: contract, cmd: cmd, in: in, out: out, r: newLineReader(out)}
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

// send writes f.req and reads lines up to the answer (the bench server
// writes nothing else).
func (f *floorClient) send() ([]byte, error) {
	if _, err := f.in.Write(f.req); err != nil {
		return nil, err
	}
	return f.r.next()
}

func (f *floorClient) call(_ context.Context, tool string, args map[string]any) (int, error) {
	f.begin()
	f.req = appendCall(f.req, tool, args, f.contract)
	line, err := f.send()
	if err != nil {
		return 0, err
	}
	if f.contract {
		return contractTextLen(line)
	}
	return textLen(line)
}

// appendCall appends the rest of a tools/call request after "method":,
// with its newline; with contract, the arguments are encoded from the map
// as encoding/json does.
func appendCall(b []byte, tool string, args map[string]any, contract bool) []byte {
	b = append(b, `"tools/call","params":{"name":`...)
	if contract {
		b = appendJSONString(b, tool)
		b = append(b, `,"arguments":`...)
		b = appendContractArgs(b, args)
		return append(b, "}}\n"...)
	}
	b = strconv.AppendQuote(b, tool)
	b = append(b, `,"arguments":`...)
	return append(append(b, argsJSON(args)...), "}}\n"...)
}

// contractTextLen decodes an answer as the contract floor does (the whole
// response checked, the result decoded into owned strings) and returns
// the length of its first block's text.
func contractTextLen(line []byte) (int, error) {
	res, err := contractResponse(line)
	if err != nil {
		return 0, err
	}
	if len(res.Content) == 0 {
		return 0, errors.New("contract floor: no content in the result")
	}
	return len(res.Content[0].Text), nil
}

// contractResponse decodes the result of a tools/call answer as the
// contract floor does.
func contractResponse(line []byte) (*contractResult, error) {
	res := &contractResult{}
	if err := decodeResponse(line, res); err != nil {
		return nil, err
	}
	return res, nil
}

// contractListed decodes a tools/list answer as the contract floor does.
func contractListed(line []byte) error {
	return decodeResponse(line, &contractTools{})
}

// textLen returns the unescaped length of the first "text" string in line:
// it steps from one backslash to the next (a run without one is measured
// at once) and stops at the first quote that no backslash escapes.
func textLen(line []byte) (int, error) {
	i := bytes.Index(line, []byte(`"text":"`))
	if i < 0 {
		return 0, errors.New("floor client: no text in the answer")
	}
	rest := line[i+len(`"text":"`):]
	n := 0
	for {
		j := bytes.IndexByte(rest, '\\')
		upTo := rest
		if j >= 0 {
			upTo = rest[:j]
		}
		if q := bytes.IndexByte(upTo, '"'); q >= 0 {
			return n + q, nil
		}
		if j < 0 {
			return 0, errors.New("floor client: unterminated text")
		}
		n += j
		rest = rest[j+1:]
		if len(rest) == 0 {
			return 0, errors.New("floor client: unterminated text")
		}
		if rest[0] != 'u' {
			n++
			rest = rest[1:]
			continue
		}
		if len(rest) < 5 {
			return 0, errors.New("floor client: short \\u escape")
		}
		r, _ := strconv.ParseUint(string(rest[1:5]), 16, 32)
		rest = rest[5:]
		if r >= 0xD800 && r < 0xDC00 && len(rest) >= 6 {
			n += 4 // a surrogate pair: one 4-byte rune, the low half follows
			rest = rest[6:]
			continue
		}
		n += utf8.RuneLen(rune(r))
	}
}

func (f *floorClient) listTools(context.Context) error {
	line, err := f.roundTrip(`"tools/list"`)
	if err == nil && f.contract {
		err = contractListed(line)
	}
	return err
}

func (f *floorClient) close() {
	f.in.Close()
	f.cmd.Wait()
	f.out.Close()
}
