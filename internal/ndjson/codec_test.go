package ndjson

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// message is a stand-in for jsonrpc2's message type: it accepts only objects
// with "jsonrpc":"2.0" and a method, a result or an error.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m *message) UnmarshalJSON(b []byte) error {
	type plain message
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.JSONRPC != "2.0" || (p.Method == "" && p.Result == nil && p.Error == nil) {
		return errors.New("not a message")
	}
	*m = message(p)
	return nil
}

func readAll(t testing.TB, c *Codec, input string) []message {
	t.Helper()
	r := bufio.NewReaderSize(strings.NewReader(input), 16)
	var out []message
	for {
		var m message
		err := c.ReadObject(r, &m)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, m)
	}
}

func TestReadObject(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		methods []string
		skipped int
	}{
		{"plain lines are read in order", `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", []string{"a", "b"}, 0},
		{"banners and log lines before and between messages are skipped", "Server v1 starting\n" + `{"jsonrpc":"2.0","method":"a"}` + "\nINFO ready\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", []string{"a", "b"}, 2},
		{"JSON that is not a message is skipped", `{"hello":"world"}` + "\n42\n\"str\"\nnull\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", []string{"a"}, 4},
		{"a batch is unpacked into its messages, in order", `[{"jsonrpc":"2.0","method":"x"}, {"jsonrpc":"2.0","method":"y"}]` + "\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", []string{"x", "y", "a"}, 0},
		{"a batch of something else than objects is skipped", `[1, 2]` + "\n" + `[{"jsonrpc":"2.0","method":"x"}, "no"]` + "\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", []string{"a"}, 2},
		{"an empty batch is nothing", "[]\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", []string{"a"}, 0},
		{"a pretty-printed message is one message", "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"a\",\n  \"params\": {\n    \"s\": \"} { ] [ \\\" \"\n  }\n}\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", []string{"a", "b"}, 0},
		{"a pretty-printed batch is unpacked", "[\n  {\"jsonrpc\": \"2.0\", \"method\": \"a\"},\n  {\n    \"jsonrpc\": \"2.0\",\n    \"method\": \"b\"\n  }\n]\n", []string{"a", "b"}, 0},
		{"a log line that opens a brace does not swallow the messages after it", "{starting up\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", []string{"a", "b"}, 1},
		{"an unclosed value at the end of the stream is dropped", `{"jsonrpc":"2.0","method":"a"}` + "\n{\n  \"jsonrpc\": \"2.0\",\n", []string{"a"}, 0},
		{"a pretty-printed value that goes wrong is skipped", "{\n  \"a\": 1\n}}\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", []string{"a"}, 1},
		{"CRLF line endings are accepted", `{"jsonrpc":"2.0","method":"a"}` + "\r\n" + `{"jsonrpc":"2.0","method":"b"}` + "\r\n", []string{"a", "b"}, 0},
		{"a final line without a newline is read", `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}`, []string{"a", "b"}, 0},
		{"blank lines are ignored silently", "\n\n  \n" + `{"jsonrpc":"2.0","method":"a"}` + "\n\n", []string{"a"}, 0},
		{"a line of broken JSON is skipped", `{"jsonrpc":"2.0","method":` + "\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", []string{"a"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logRecorder{}
			c := &Codec{Logger: slog.New(logs)}
			got := readAll(t, c, tt.input)
			var methods []string
			for _, m := range got {
				methods = append(methods, m.Method)
			}
			assert.Equal(t, tt.methods, methods)
			assert.Equal(t, tt.skipped, logs.count())
		})
	}
}

func TestReadObjectLongLines(t *testing.T) {
	t.Run("a line far longer than the read buffer is read whole", func(t *testing.T) {
		text := strings.Repeat("x", 1<<20)
		in := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + text + `"}}` + "\n"
		got := readAll(t, &Codec{}, in)
		require.Len(t, got, 1)
		assert.Len(t, got[0].Result, len(text)+len(`{"text":""}`))
	})
	t.Run("an oversized response with its id first becomes an error response for that id", func(t *testing.T) {
		in := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + strings.Repeat("y", 5000) + `"}}` + "\n" + `{"jsonrpc":"2.0","method":"after"}` + "\n"
		got := readAll(t, &Codec{MaxMessageSize: 1000}, in)
		require.Len(t, got, 2)
		assert.JSONEq(t, "7", string(got[0].ID))
		var e struct {
			Code int64           `json:"code"`
			Data json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(got[0].Error, &e))
		tl, ok := TooLarge(e.Code, e.Data)
		require.True(t, ok)
		assert.Equal(t, int64(len(in)-len(`{"jsonrpc":"2.0","method":"after"}`)-2), tl.Size)
		assert.Equal(t, 1000, tl.Max)
		assert.Equal(t, "after", got[1].Method, "the stream goes on after an oversized message")
	})
	t.Run("an oversized response with its id last is matched too", func(t *testing.T) {
		in := `{"result":{"text":"` + strings.Repeat("z", 5000) + `"},"jsonrpc":"2.0","id":"abc"}` + "\n"
		got := readAll(t, &Codec{MaxMessageSize: 100}, in)
		require.Len(t, got, 1)
		assert.JSONEq(t, `"abc"`, string(got[0].ID))
	})
	t.Run("an oversized request is skipped", func(t *testing.T) {
		in := `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":"` + strings.Repeat("z", 5000) + `"}}` + "\n"
		logs := &logRecorder{}
		got := readAll(t, &Codec{MaxMessageSize: 100, Logger: slog.New(logs)}, in)
		assert.Empty(t, got)
		assert.Equal(t, 1, logs.count())
	})
	t.Run("an oversized line without an id is skipped", func(t *testing.T) {
		in := strings.Repeat("banner ", 1000) + "\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n"
		got := readAll(t, &Codec{MaxMessageSize: 100}, in)
		require.Len(t, got, 1)
		assert.Equal(t, "a", got[0].Method)
	})
}

func TestFindID(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a number id first", `{"jsonrpc":"2.0","id":12,"result":{"a":"`, "12"},
		{"a string id with an escaped quote", `{"id":"a\"b","result":`, `"a\"b"`},
		{"a nested id is not the message id", `{"result":{"id":5,"x":"` + " " + `"},"id":9}`, "9"},
		{"an id before jsonrpc at the end", `{"result":{"x":"` + " " + `"},"id":4,"jsonrpc":"2.0"}`, "4"},
		{"an id inside a string is not an id", `{"result":"\"id\":3 ` + " " + `more"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := findID([]byte(tt.in))
			if tt.want == "" {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, string(id))
		})
	}
}

func TestCodecWithJSONRPC2(t *testing.T) {
	// The whole point of the codec: noise on the wire never closes a
	// jsonrpc2.Conn, and only EOF does.
	client, server := pipe()
	var mu sync.Mutex
	var got []string
	conn := jsonrpc2.NewConn(context.Background(),
		jsonrpc2.NewBufferedStream(client, &Codec{}),
		jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
			mu.Lock()
			got = append(got, r.Method)
			mu.Unlock()
			return nil, nil
		}),
		jsonrpc2.SetLogger(discard{}))
	input := "banner\n" +
		`[{"jsonrpc":"2.0","method":"batched"}]` + "\n" + // unpacked: jsonrpc2 never sees the array

		`{"jsonrpc":"2.0","method":"one"}` + "\r\n" +
		`{"jsonrpc":"2.0","id":-1,"result":{}}` + "\n" + // an id jsonrpc2 cannot parse
		`{"jsonrpc":"2.0","method":"two","result":1}` + "\n" + // both request and response
		`{"jsonrpc":"2.0","method":"three"}`
	_, err := io.WriteString(server, input)
	require.NoError(t, err)
	require.NoError(t, server.Close())
	<-conn.DisconnectNotify()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"batched", "one", "three"}, got)
}

type pipeEnd struct {
	io.Reader
	io.WriteCloser
}

func pipe() (client io.ReadWriteCloser, serverWriter io.WriteCloser) {
	r, w := io.Pipe()
	return pipeEnd{Reader: r, WriteCloser: nopWriteCloser{io.Discard, r}}, w
}

type nopWriteCloser struct {
	io.Writer
	r *io.PipeReader
}

func (n nopWriteCloser) Close() error { return n.r.Close() }

type discard struct{}

func (discard) Printf(string, ...any) {}

func TestWriteObject(t *testing.T) {
	var buf bytes.Buffer
	c := &Codec{}
	require.NoError(t, c.WriteObject(&buf, map[string]any{"text": "a\nb"}))
	require.NoError(t, c.WriteObject(&buf, json.RawMessage("{\n\"x\": 1\n}")))
	assert.Equal(t, `{"text":"a\nb"}`+"\n"+`{"x":1}`+"\n", buf.String())
}

// logRecorder counts the records logged.
type logRecorder struct {
	mu sync.Mutex
	n  int
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(context.Context, slog.Record) error {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }
func (l *logRecorder) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func FuzzReadObject(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		"banner line\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n",
		`{"jsonrpc":"2.0","method":"a"}` + "\r\n",
		`{"jsonrpc":"2.0","method":"no newline"}`,
		`[{"jsonrpc":"2.0","method":"batch"}]` + "\n",
		`{"not":"a message"}` + "\n",
		`{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("x", 300) + `"}}` + "\n",
		`{"result":{"t":"` + strings.Repeat("y", 300) + `"},"jsonrpc":"2.0","id":"s"}` + "\n",
		"\n\n\r\n",
		`{"jsonrpc":"2.0","method":`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Codec{MaxMessageSize: 256}
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for n := 0; ; n++ {
			var m message
			err := c.ReadObject(r, &m)
			if err != nil {
				require.ErrorIs(t, err, io.EOF)
				return
			}
			require.Less(t, n, lines, "more messages than lines")
			require.Equal(t, "2.0", m.JSONRPC)
		}
	})
}

func TestScanTop(t *testing.T) {
	tests := []struct {
		name, in                string
		ok                      bool
		id, method, result, err string
	}{
		{"a response", `{"jsonrpc":"2.0","id":12,"result":{"a":[1,{"b":"}\"]"}]}}`, true, "12", "", `{"a":[1,{"b":"}\"]"}]}`, ""},
		{"a response with the result first", `{"result":"x\\","jsonrpc":"2.0","id":"s"}`, true, `"s"`, "", `"x\\"`, ""},
		{"an error", `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, true, "1", "", "", `{"code":-1,"message":"m"}`},
		{"a request", ` { "id" : 3 , "method" : "ping" } `, true, "3", `"ping"`, "", ""},
		{"a null result", `{"id":4,"result":null}`, true, "4", "", "null", ""},
		{"a cut-off object", `{"id":4,"result":{"a":1}`, false, "", "", "", ""},
		{"not an object", `[1]`, false, "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, ok := ScanTop([]byte(tt.in))
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tt.id, string(top.ID))
			assert.Equal(t, tt.method, string(top.Method))
			assert.Equal(t, tt.result, string(top.Result))
			assert.Equal(t, tt.err, string(top.Error))
		})
	}
}

func FuzzScanTop(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"b\\"}]}}`))
	f.Add([]byte(`{"id":"x","method":"m","params":[1,2,{"a":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, ok := ScanTop(data)
		if !ok || !json.Valid(data) {
			return
		}
		// On valid JSON the spans agree with encoding/json.
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			return
		}
		for key, span := range map[string][]byte{"id": top.ID, "method": top.Method, "result": top.Result, "error": top.Error} {
			want, present := m[key]
			if !present {
				continue // a duplicate key may make the last one win; absent means nil
			}
			var a, b any
			require.NoError(t, json.Unmarshal(want, &a))
			require.NoError(t, json.Unmarshal(span, &b), "span of %s: %q", key, span)
			require.Equal(t, a, b, key)
		}
	})
}

// stuttering returns the input a few bytes at a time and fails every other
// read with a timeout, as a read deadline does.
type stuttering struct {
	data  []byte
	chunk int
	calls int
}

var errTimeout = errors.New("i/o timeout")

func (s *stuttering) Read(p []byte) (int, error) {
	s.calls++
	if s.calls%2 == 1 {
		return 0, errTimeout
	}
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), s.chunk)], s.data)
	s.data = s.data[n:]
	return n, nil
}

func TestReadLineGoesOnAfterAnInterruptedRead(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"long","params":{"text":"` + strings.Repeat("x", 100) + `"}}`
	tooBig := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + strings.Repeat("y", 300) + `"}}`
	input := `{"jsonrpc":"2.0","method":"a"}` + "\n" + long + "\n" + tooBig + "\n" + `{"jsonrpc":"2.0","method":"b"}`
	for _, chunk := range []int{1, 5, 64} {
		t.Run(fmt.Sprintf("in chunks of %d bytes", chunk), func(t *testing.T) {
			c := &Codec{MaxMessageSize: 200}
			r := bufio.NewReaderSize(&stuttering{data: []byte(input), chunk: chunk}, 16)
			var lines []string
			timeouts := 0
			for {
				line, err := c.ReadLine(r)
				if errors.Is(err, errTimeout) {
					timeouts++
					continue
				}
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				lines = append(lines, string(line))
			}
			require.Len(t, lines, 4)
			assert.Equal(t, `{"jsonrpc":"2.0","method":"a"}`, lines[0])
			assert.Equal(t, long, lines[1])
			assert.Contains(t, lines[2], `"id":7`)
			assert.Contains(t, lines[2], `"messageTooLarge"`)
			assert.Equal(t, `{"jsonrpc":"2.0","method":"b"}`, lines[3])
			assert.Greater(t, timeouts, len(input)/max(chunk, 16)/2, "the reads were interrupted")
		})
	}
}

func TestDetach(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("z", keepBuf+10) + `"}}`
	big2 := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("y", keepBuf+20) + `"}}`
	small := `{"jsonrpc":"2.0","id":3,"result":{}}`
	c := &Codec{}
	r := bufio.NewReaderSize(strings.NewReader(big+"\n"+big2+"\n"+small+"\n"), 4096)

	first, err := c.ReadLine(r)
	require.NoError(t, err)
	require.True(t, c.Detach(), "a line larger than the kept buffer is handed over")
	assert.False(t, c.Detach(), "only once")

	second, err := c.ReadLine(r)
	require.NoError(t, err)
	assert.Equal(t, big, string(first), "the detached line is not overwritten by the next read")
	assert.Equal(t, big2, string(second))

	last, err := c.ReadLine(r)
	require.NoError(t, err)
	assert.False(t, c.Detach(), "a small line stays the codec's")
	assert.Equal(t, small, string(last))
}

// The top level a Codec hands on with a line is the one ScanTop finds in
// that line: scanned for each whole object (gathered ones too), and never
// one left from an earlier line (a batch's elements the caller scans).
func TestLastTopIsTheScanOfTheLineReturned(t *testing.T) {
	long := strings.Repeat(`x\n`, 40000) // past the reader's buffer: the line is gathered from pieces
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`  {"jsonrpc":"2.0","method":"notifications/message","params":{"a":"}"}}  `,
		`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}]`,
		`{"jsonrpc":"2.0",`,
		`  "id":4,"result":{"x":[1,2]}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"text":"` + long + `"}}`,
		`{"jsonrpc":"2.0","id":6,"result":{}} {"trailing":1}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
	}, "\n") + "\n"
	var c Codec
	r := bufio.NewReader(strings.NewReader(input))
	type seen struct {
		id      string
		scanned bool
	}
	var got []seen
	for {
		line, err := c.ReadLine(r)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		want, ok := ScanTop(line)
		require.True(t, ok, "%s", line)
		top, scanned := c.LastTop()
		if scanned {
			assert.Equal(t, want, top, "the top level of %s", line)
		}
		got = append(got, seen{string(want.ID), scanned})
	}
	assert.Equal(t, []seen{{"1", true}, {"", true}, {"2", false}, {"3", false}, {"4", true}, {"5", true}, {"7", true}}, got)
}

// A line handed over by Detach is the caller's alone: the Codec keeps no
// top level pointing into it, which would keep it from the GC for as long
// as the server says nothing more.
func TestDetachLetsGoOfTheLinesTopLevel(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 2*keepBuf) + `"}}` + "\n"
	var c Codec
	r := bufio.NewReader(strings.NewReader(line))
	_, err := c.ReadLine(r)
	require.NoError(t, err)
	top, ok := c.LastTop()
	require.True(t, ok)
	require.NotNil(t, top.Result)
	require.True(t, c.Detach(), "a line past keepBuf is handed over")
	top, ok = c.LastTop()
	assert.False(t, ok)
	assert.Equal(t, Top{}, top)
}
