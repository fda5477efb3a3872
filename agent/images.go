package agent

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // a decoder; PNG's and JPEG's come with their encoders
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/mcplug/mcplug/mcp"
)

// Image bounds of a tool result (see Agent): an image is scaled down to
// fit DefaultMaxImageSide on each side and MaxImageBytes of base64, as
// Claude Code scales one; an image of more than DefaultMaxImagePixels
// pixels is not decoded at all (its size is read from its header first),
// so that a small file that claims huge dimensions costs nothing.
const (
	DefaultMaxImageSide   = 2000
	DefaultMaxImagePixels = 50_000_000 // a 48-megapixel photo; 4 bytes a pixel once decoded
)

// minImageSide is the smallest side an image is scaled down to to fit
// the byte budget; one that would need less is not shown.
const minImageSide = 16

// jpegQualities are tried in turn when an image is still past the byte
// budget.
var jpegQualities = []int{85, 70, 50}

// imageFormats are the formats the Messages API takes, by the name the
// image package gives them.
var imageFormats = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

// fitImage is the image c as the model gets it: as it came when it is
// within the bounds, else decoded, scaled to fit maxSide×maxSide and
// maxBytes of base64, and encoded again (PNG, or JPEG when PNG is too
// large or the image came as JPEG or WebP); the note says what was done,
// or why the image is not shown (block nil).
func fitImage(c mcp.Content, maxSide, maxPixels, maxBytes int) (*Block, string) {
	label := fmt.Sprintf("[image: %s, %s bytes base64", short(c.MimeType), commas(len(c.Data)))
	refuse := func(format string, args ...any) (*Block, string) {
		return nil, label + ": not shown, " + fmt.Sprintf(format, args...) + "]"
	}
	raw, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return refuse("its data is not base64")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return refuse("it is not a PNG, JPEG, GIF or WebP image the agent can read (%s)", short(err.Error()))
	}
	mediaType, ok := imageFormats[format]
	if !ok {
		return refuse("its format %s is not one the model takes", short(format))
	}
	w, h := cfg.Width, cfg.Height
	label = fmt.Sprintf("[image: %s, %d×%d pixels, %s bytes base64", mediaType, w, h, commas(len(c.Data)))
	if w <= 0 || h <= 0 || int64(w)*int64(h) > int64(maxPixels) {
		return refuse("%s pixels are past the %s pixels an image may have to be decoded", commas64(int64(w)*int64(h)), commas(maxPixels))
	}
	if w <= maxSide && h <= maxSide && len(c.Data) <= maxBytes {
		return &Block{Type: BlockImage, MediaType: mediaType, Data: c.Data}, ""
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return refuse("it could not be decoded (%s)", short(err.Error()))
	}
	lossless := format == "png" || format == "gif"
	tw, th := fitSides(w, h, maxSide)
	for tw >= minImageSide || th >= minImageSide {
		scaled := img
		if tw != w || th != h {
			scaled = scale(img, tw, th)
		}
		if data, mt, ok := encodeWithin(scaled, lossless, maxBytes); ok {
			return &Block{Type: BlockImage, MediaType: mt, Data: data},
				fmt.Sprintf("%s: scaled to %d×%d (%s, %s bytes base64) to fit %d×%d pixels and %s bytes]", label, tw, th, mt, commas(len(data)), maxSide, maxSide, commas(maxBytes))
		}
		tw, th = tw*3/4, th*3/4
	}
	return refuse("it does not fit %s bytes of base64 even at %d×%d pixels", commas(maxBytes), minImageSide, minImageSide)
}

// scale is img scaled down to tw×th: halved (each pixel the mean of four,
// draw.ApproxBiLinear at exactly half) while it is twice as large or
// more, then interpolated (draw.CatmullRom) the rest of the way.
func scale(img image.Image, tw, th int) image.Image {
	for b := img.Bounds(); b.Dx() >= 2*tw && b.Dy() >= 2*th; b = img.Bounds() {
		half := image.NewRGBA(image.Rect(0, 0, b.Dx()/2, b.Dy()/2))
		draw.ApproxBiLinear.Scale(half, half.Bounds(), img, b, draw.Src, nil)
		img = half
	}
	if b := img.Bounds(); b.Dx() == tw && b.Dy() == th {
		return img
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	return dst
}

// fitSides are w and h scaled down to fit side×side, the ratio kept
// (rounded down, at least 1); or w and h when they fit.
func fitSides(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(int(int64(h)*int64(side)/int64(w)), 1)
	}
	return max(int(int64(w)*int64(side)/int64(h)), 1), side
}

// encodeWithin encodes img as base64 within maxBytes: PNG first for a
// lossless source, then JPEG at falling qualities (on white, where the
// image is not opaque).
func encodeWithin(img image.Image, lossless bool, maxBytes int) (string, string, bool) {
	var buf bytes.Buffer
	fits := func() (string, bool) {
		if base64.StdEncoding.EncodedLen(buf.Len()) > maxBytes {
			return "", false
		}
		return base64.StdEncoding.EncodeToString(buf.Bytes()), true
	}
	if lossless {
		if err := png.Encode(&buf, img); err == nil {
			if data, ok := fits(); ok {
				return data, "image/png", true
			}
		}
	}
	if o, ok := img.(interface{ Opaque() bool }); !ok || !o.Opaque() {
		flat := image.NewRGBA(img.Bounds())
		draw.Draw(flat, flat.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		draw.Draw(flat, flat.Bounds(), img, img.Bounds().Min, draw.Over)
		img = flat
	}
	for _, q := range jpegQualities {
		buf.Reset()
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
			return "", "", false
		}
		if data, ok := fits(); ok {
			return data, "image/jpeg", true
		}
	}
	return "", "", false
}
