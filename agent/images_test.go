package agent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// picture is a w×h image: noise when noisy (which no encoder can make
// much smaller), else a gradient with stripes.
func picture(w, h int, noisy bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := img.Pix[img.PixOffset(x, y):]
			if noisy {
				p[0], p[1], p[2], p[3] = uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), 255
			} else {
				p[0], p[1], p[2], p[3] = uint8(x*255/w), uint8(y*255/h), uint8(x/40%2*200), 255
			}
		}
	}
	return img
}

// pngData is img as base64 PNG; stored skips compression, else the
// fastest is used.
func pngData(t testing.TB, img image.Image, stored bool) string {
	t.Helper()
	var buf bytes.Buffer
	enc := &png.Encoder{CompressionLevel: png.BestSpeed}
	if stored {
		enc.CompressionLevel = png.NoCompression
	}
	require.NoError(t, enc.Encode(&buf, img))
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// decoded decodes an image block, failing the test if it does not.
func decoded(t *testing.T, b agent.Block) (image.Config, string) {
	t.Helper()
	require.Equal(t, agent.BlockImage, b.Type)
	raw, err := base64.StdEncoding.DecodeString(b.Data)
	require.NoError(t, err)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, "image/"+format, b.MediaType, "the media type is the image's own")
	return cfg, format
}

// imagesOf is the image blocks of a tool result, and its text.
func imagesOf(r agent.Block) (images []agent.Block, text string) {
	for _, c := range r.Content {
		if c.Type == agent.BlockImage {
			images = append(images, c)
		} else {
			text += c.Text
		}
	}
	return images, text
}

func TestALargeScreenshotReachesTheModelScaledDown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// A grey page, so that making it costs the test little: decoding and
	// scaling 24 million pixels is the agent's work.
	page := image.NewGray(image.Rect(0, 0, 6000, 4000))
	for y := range 4000 {
		for x := range 6000 {
			page.Pix[y*page.Stride+x] = uint8(x/40%2*200 + y*55/4000)
		}
	}
	data := pngData(t, page, false)
	srv := &mcptest.Server{}
	srv.AddTool(mcp.Tool{Name: "screenshot"}, func(context.Context, *mcptest.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "the page"}, {Type: "image", MimeType: "image/png", Data: data}}}, nil
	})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Logger: quietLog})
	defer m.Close()
	require.NoError(t, m.Add("browser", srv.Transport()))
	s := &script{replies: []*agent.Response{call("mcp__browser__screenshot", `{}`), answer("I see it.")}}
	a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{m}}
	_, err := a.Chat(context.Background(), "look")
	require.NoError(t, err)
	images, text := imagesOf(lastResult(t, s))
	require.Len(t, images, 1)
	cfg, _ := decoded(t, images[0])
	assert.Equal(t, 2000, cfg.Width)
	assert.Equal(t, 1333, cfg.Height)
	assert.LessOrEqual(t, len(images[0].Data), 5<<20)
	t.Logf("the model got: %q", text)
	assert.Contains(t, text, "the page")
	assert.Contains(t, text, "[image: image/png, 6000×4000 pixels, ")
	assert.NotEqual(t, data, images[0].Data, "encoded again")
	assert.Contains(t, text, "scaled to 2000×1333 (image/png, ")
	assert.Contains(t, text, "to fit 2000×2000 pixels and 5,242,880 bytes]")
}

func TestImagesTheModelGets(t *testing.T) {
	small := pngData(t, picture(40, 30, false), false)
	noise := pngData(t, picture(400, 300, true), true) // 480 KB, base64 640 KB
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, picture(3000, 1000, true), &jpeg.Options{Quality: 95}))
	var gf bytes.Buffer
	require.NoError(t, gif.Encode(&gf, picture(30, 30, false), nil))
	webp := "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==" // 1×1, lossless
	tests := []struct {
		name      string
		content   mcp.Content
		maxBytes  int
		w, h      int    // of the image sent; 0 when none is
		format    string // of the image sent
		sameData  bool   // sent as it came
		textHas   string
		textLacks string
	}{
		{"a small PNG as it came", mcp.Content{Type: "image", MimeType: "image/png", Data: small}, 0, 40, 30, "png", true, "", "[image"},
		{"a GIF as it came", mcp.Content{Type: "image", MimeType: "image/gif", Data: base64.StdEncoding.EncodeToString(gf.Bytes())}, 0, 30, 30, "gif", true, "", "[image"},
		{"a WebP as it came", mcp.Content{Type: "image", MimeType: "image/webp", Data: webp}, 0, 1, 1, "webp", true, "", "[image"},
		{"a PNG named image/jpeg goes as the PNG it is", mcp.Content{Type: "image", MimeType: "image/jpeg", Data: small}, 0, 40, 30, "png", true, "", "[image"},
		{"a wide JPEG is scaled, and stays JPEG", mcp.Content{Type: "image", MimeType: "image/jpeg", Data: base64.StdEncoding.EncodeToString(jpg.Bytes())}, 0, 2000, 666, "jpeg", false,
			"[image: image/jpeg, 3000×1000 pixels", ""},
		{"a PNG past the byte budget is made JPEG", mcp.Content{Type: "image", MimeType: "image/png", Data: noise}, 200_000, 400, 300, "jpeg", false,
			"scaled to 400×300 (image/jpeg", ""},
		{"a PNG far past the byte budget is scaled down too", mcp.Content{Type: "image", MimeType: "image/png", Data: noise}, 20_000, 0, 0, "jpeg", false,
			"(image/jpeg", ""},
		{"data that is not base64", mcp.Content{Type: "image", MimeType: "image/png", Data: "not base64!"}, 0, 0, 0, "", false,
			"not shown, its data is not base64", ""},
		{"bytes that are no image", mcp.Content{Type: "image", MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("hello, world"))}, 0, 0, 0, "", false,
			"not shown, it is not a PNG, JPEG, GIF or WebP image", ""},
		{"a budget no image fits", mcp.Content{Type: "image", MimeType: "image/png", Data: noise}, 100, 0, 0, "", false,
			"does not fit 100 bytes of base64 even at 16×16 pixels", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := agent.Funcs{{Tool: mcp.Tool{Name: "img"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{tt.content}}, nil
			}}}
			s := &script{replies: []*agent.Response{call("img", `{}`), answer("ok")}}
			a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{tools}, MaxImageBytes: tt.maxBytes}
			_, err := a.Chat(context.Background(), "go")
			require.NoError(t, err)
			images, text := imagesOf(lastResult(t, s))
			if tt.format == "" {
				assert.Empty(t, images)
			} else {
				require.Len(t, images, 1)
				cfg, format := decoded(t, images[0])
				assert.Equal(t, tt.format, format)
				if tt.w > 0 {
					assert.Equal(t, tt.w, cfg.Width)
					assert.Equal(t, tt.h, cfg.Height)
				} else {
					assert.Less(t, cfg.Width, 400, "scaled down")
				}
				if tt.maxBytes > 0 {
					assert.LessOrEqual(t, len(images[0].Data), tt.maxBytes)
				}
				assert.Equal(t, tt.sameData, images[0].Data == tt.content.Data)
			}
			if tt.textHas != "" {
				assert.Contains(t, text, tt.textHas)
			}
			if tt.textLacks != "" {
				assert.NotContains(t, text, tt.textLacks)
			}
		})
	}
}

// bombPNG is a valid PNG header that claims w×h pixels, with a tiny
// body: decoding it would allocate w×h×4 bytes.
func bombPNG(t testing.TB, w, h uint32) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 1, 1))))
	b := buf.Bytes()
	require.Equal(t, "IHDR", string(b[12:16]))
	put := func(at int, v uint32) {
		b[at], b[at+1], b[at+2], b[at+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	put(16, w)
	put(20, h)
	put(29, crc32IEEE(b[12:29]))
	return base64.StdEncoding.EncodeToString(b)
}

func TestADecoderBombIsRefusedBeforeItIsDecoded(t *testing.T) {
	bomb := bombPNG(t, 50_000, 50_000)
	tools := agent.Funcs{{Tool: mcp.Tool{Name: "img"}, Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{{Type: "image", MimeType: "image/png", Data: bomb}}}, nil
	}}}
	s := &script{replies: []*agent.Response{call("img", `{}`), answer("ok")}}
	a := &agent.Agent{Model: imageScript{s}, Tools: []agent.ToolProvider{tools}}
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	images, text := imagesOf(lastResult(t, s))
	assert.Empty(t, images)
	assert.Contains(t, text, "[image: image/png, 50000×50000 pixels, ")
	assert.Contains(t, text, "not shown, 2,500,000,000 pixels are past the 50,000,000 pixels an image may have to be decoded]")
	assert.True(t, strings.HasPrefix(text, "[image"))
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

var quietLog = slog.New(slog.DiscardHandler)

// tinyPNG is a 2×2 PNG, as base64.
var tinyPNG = func() string {
	var buf bytes.Buffer
	png.Encode(&buf, picture(2, 2, false))
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}()
