package httpstream

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadBody(t *testing.T) {
	const max = 3*exactRead + 100
	data := bytes.Repeat([]byte("0123456789abcdef"), (3*exactRead+256)/16)
	tests := []struct {
		name     string
		sent     int
		declared int64
		want     int   // bytes returned
		err      error // or this error
	}{
		{"an empty body", 0, 0, 0, nil},
		{"a small body of its declared length", 10, 10, 10, nil},
		{"a body of exactly the length read at once", exactRead, exactRead, exactRead, nil},
		{"a body one byte longer, read in a growing buffer", exactRead + 1, exactRead + 1, exactRead + 1, nil},
		{"a body three times as long", 3*exactRead + 5, 3*exactRead + 5, 3*exactRead + 5, nil},
		{"a body shorter than declared", 100, 200, 0, io.ErrUnexpectedEOF},
		{"a long body shorter than declared", exactRead + 10, 3 * exactRead, 0, io.ErrUnexpectedEOF},
		{"a body of unknown length", 5000, -1, 5000, nil},
		{"a body of unknown length past the bound stops one byte past it", len(data), -1, max + 1, nil},
		{"a declared length past the bound stops one byte past it", len(data), int64(len(data)), max + 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{ContentLength: tt.declared, Body: io.NopCloser(iotest.HalfReader(bytes.NewReader(data[:tt.sent])))}
			b, err := readBody(resp, max)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, len(b))
			assert.True(t, bytes.Equal(data[:tt.want], b), "the bytes read are the bytes sent")
		})
	}
}
