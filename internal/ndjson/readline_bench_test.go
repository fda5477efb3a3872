package ndjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// BenchmarkReadLine reads responses and finds their top level, as the
// Connection's reader does: a small one, and one of 1 MiB of text with a
// newline every 64 bytes.
func BenchmarkReadLine(b *testing.B) {
	text, err := json.Marshal(strings.Repeat(strings.Repeat("x", 63)+"\n", 1<<14))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		line string
		n    int
	}{
		{"small", `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hello from the bench server"}]}}`, 1000},
		{"1MiB", `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}`, 4},
	} {
		b.Run(tc.name, func(b *testing.B) {
			input := []byte(strings.Repeat(tc.line+"\n", tc.n))
			src := bytes.NewReader(input)
			r := bufio.NewReaderSize(src, 64<<10)
			var c Codec
			b.SetBytes(int64(len(tc.line)))
			b.ReportAllocs()
			for b.Loop() {
				line, err := c.ReadLine(r)
				if err == io.EOF { // read the input again
					src.Reset(input)
					r.Reset(src)
					line, err = c.ReadLine(r)
				}
				if err != nil {
					b.Fatal(err)
				}
				top, ok := c.LastTop()
				if !ok {
					top, ok = ScanTop(line)
				}
				if !ok || top.Result == nil {
					b.Fatal("no result")
				}
			}
		})
	}
}
