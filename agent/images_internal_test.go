package agent

import (
	"bytes"
	"encoding/base64"
	"hash/crc32"
	"image"
	"image/png"
	"runtime"
	"testing"

	"github.com/mcplug/mcplug/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A PNG header that claims 50,000×50,000 pixels (10 GB once decoded) in
// 70 bytes is refused from its header: what refusing it allocates is
// measured, and bounded.
func TestADecoderBombAllocatesNothingOfItsSize(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 1, 1))))
	b := buf.Bytes()
	put := func(at int, v uint32) {
		b[at], b[at+1], b[at+2], b[at+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	put(16, 50_000)
	put(20, 50_000)
	put(29, crc32.ChecksumIEEE(b[12:29]))
	c := mcp.Content{Type: "image", MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(b)}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	block, note := fitImage(c, DefaultMaxImageSide, DefaultMaxImagePixels, DefaultMaxImageBytes)
	runtime.ReadMemStats(&after)
	assert.Nil(t, block)
	assert.Contains(t, note, "past the 50,000,000 pixels")
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("refusing a %d-byte PNG of 50000×50000 pixels allocated %d bytes", len(b), allocated)
	assert.Less(t, allocated, uint64(64<<10), "the header alone is read")

	allocs := testing.AllocsPerRun(10, func() { fitImage(c, DefaultMaxImageSide, DefaultMaxImagePixels, DefaultMaxImageBytes) })
	assert.Less(t, allocs, 40.0)
}
