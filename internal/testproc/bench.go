package testproc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// BenchServe is a cheap MCP server for benchmarks: it answers from
// precomputed bytes, so that a benchmark measures the client. tools/call
// "echo" answers a short text; "big" answers text of arguments.size bytes
// made of 64-byte lines (so the JSON carries \n escapes). It serves until r
// ends.
func BenchServe(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	var out []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			var long []byte
			long = append(long, line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 1 {
			var ok bool
			if out, ok = BenchAnswer(out[:0], line); ok {
				if _, werr := bw.Write(out); werr != nil {
					return werr
				}
				if br.Buffered() == 0 {
					if werr := bw.Flush(); werr != nil {
						return werr
					}
				}
			}
		}
		if err != nil {
			bw.Flush()
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// BenchAnswer appends to dst the answer of the bench server to the
// request line, with a newline; ok is false for anything but a request.
func BenchAnswer(dst, line []byte) (out []byte, ok bool) {
	id, method, name, size, version, ok := scanRequest(line)
	if !ok {
		return dst, false
	}
	out = append(dst, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	if method == "initialize" && version != "" {
		out = append(out, `{"protocolVersion":`...)
		out = strconv.AppendQuote(out, version)
		out = append(out, benchInit[len(`{"protocolVersion":"2025-11-25"`):]...)
	} else {
		out = append(out, benchResult(method, name, size)...)
	}
	return append(out, "}\n"...), true
}

// BenchHTTP is the bench server over Streamable HTTP: each POST's answer
// as JSON, or with sse as a one-event SSE stream; 202 for notifications.
// It keeps no session.
func BenchHTTP(sse bool) http.Handler {
	pool := sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		bp := pool.Get().(*[]byte)
		defer pool.Put(bp)
		body := bytes.NewBuffer((*bp)[:0])
		body.ReadFrom(r.Body)
		answer, ok := BenchAnswer(body.Bytes()[body.Len():], body.Bytes())
		*bp = body.Bytes()[:0]
		if !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if !sse {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
			w.Write(answer)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: "))
		w.Write(answer[:len(answer)-1])
		w.Write([]byte("\n\n"))
	})
}

const (
	benchInit  = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1.0.0"}}`
	benchTools = `{"tools":[{"name":"echo","description":"Answer a short text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},{"name":"big","description":"Answer size bytes of text.","inputSchema":{"type":"object","properties":{"size":{"type":"integer"}}}}]}`
	benchEcho  = `{"content":[{"type":"text","text":"hello from the bench server"}]}`
	// It is dual-era: server/discover makes a client that probes speak
	// 2026-07-28 with it.
	benchDiscover = `{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1.0.0"}},"ttlMs":0,"cacheScope":"public"}`
)

// scanRequest finds what BenchServe needs of a request without decoding
// the rest (the _meta of a modern request, say): its id, method, the
// tool's name and arguments.size, and initialize's protocolVersion. It
// reports false for anything but a request.
func scanRequest(line []byte) (id []byte, method, name string, size int, version string, ok bool) {
	top, ok := ndjson.ScanTop(line)
	if !ok || top.ID == nil || len(top.Method) < 2 {
		return nil, "", "", 0, "", false
	}
	method = string(top.Method[1 : len(top.Method)-1])
	if method != "tools/call" && method != "initialize" {
		return top.ID, method, "", 0, "", true
	}
	ndjson.Members(top.Params, func(key, v []byte) bool {
		switch string(key) {
		case "name":
			json.Unmarshal(v, &name)
		case "protocolVersion":
			json.Unmarshal(v, &version)
		case "arguments":
			ndjson.Members(v, func(k, a []byte) bool {
				if string(k) == "size" {
					size, _ = strconv.Atoi(string(a))
				}
				return true
			})
		}
		return true
	})
	return top.ID, method, name, size, version, true
}

var bigResults sync.Map // size → []byte: "big" (a newline every 64 bytes, escaped in JSON), and -size: "plain" (no escapes)

func benchResult(method, tool string, size int) []byte {
	switch method {
	case "initialize":
		return []byte(benchInit)
	case "server/discover":
		return []byte(benchDiscover)
	case "tools/list":
		return []byte(benchTools)
	case "tools/call":
		if tool == "big" || tool == "plain" {
			key := size
			if tool == "plain" {
				key = -size
			}
			if b, ok := bigResults.Load(key); ok {
				return b.([]byte)
			}
			text, _ := json.Marshal(BigText(size))
			if tool == "plain" {
				text, _ = json.Marshal(strings.Repeat("x", size))
			}
			b := []byte(`{"content":[{"type":"text","text":` + string(text) + `}]}`)
			bigResults.Store(key, b)
			return b
		}
		return []byte(benchEcho)
	}
	return []byte(`{}`)
}

func init() {
	scenarios["bench"] = func() { BenchServe(os.Stdin, os.Stdout) }
}
