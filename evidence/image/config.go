package image

import (
	"bytes"
	"encoding/binary"
	"fmt"
	stdimage "image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
)

// Config is what an image's header says, after the bounds were checked.
type Config struct {
	Format        Format
	Width, Height int
	// Size is the length of the encoded source.
	Size int64
	// DecodeBytes estimates what the standard decoder allocates to decode
	// the image (0 for WebP, which is never decoded here).
	DecodeBytes int64
}

// Inspect recognises src by its bytes and reads its header: the format, the
// dimensions and the decoder's memory estimate, all checked against
// MaxSourceBytes, MaxSide, MaxPixels and MaxDecodeBytes. It decodes no pixel
// data, so a header claiming 100000 x 100000 costs nothing. Errors are
// *Error wrapping ErrSourceTooLarge, ErrUnsupported, ErrDecode or
// ErrDimensionsTooLarge.
func Inspect(src []byte) (Config, error) {
	cfg := Config{Size: int64(len(src))}
	if cfg.Size > MaxSourceBytes {
		return cfg, &Error{Size: cfg.Size, Err: ErrSourceTooLarge,
			Detail: fmt.Sprintf("%d bytes, limit %d", cfg.Size, MaxSourceBytes)}
	}
	f, ok := Sniff(src)
	if !ok {
		return cfg, &Error{Size: cfg.Size, Err: ErrUnsupported}
	}
	cfg.Format = f
	fail := func(sentinel error, detail string) (Config, error) {
		return cfg, &Error{Format: f, Width: cfg.Width, Height: cfg.Height, Size: cfg.Size, Err: sentinel, Detail: detail}
	}
	var model color.Model
	switch f {
	case WebP:
		w, h, err := webpConfig(src)
		if err != nil {
			return fail(ErrDecode, err.Error())
		}
		cfg.Width, cfg.Height = w, h
	default:
		var hc stdimage.Config
		var err error
		switch f {
		case PNG:
			hc, err = png.DecodeConfig(bytes.NewReader(src))
		case JPEG:
			hc, err = jpeg.DecodeConfig(bytes.NewReader(src))
		case GIF:
			hc, err = gif.DecodeConfig(bytes.NewReader(src))
		}
		if err != nil {
			return fail(ErrDecode, err.Error())
		}
		cfg.Width, cfg.Height, model = hc.Width, hc.Height, hc.ColorModel
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fail(ErrDecode, "zero-sized image")
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide {
		return fail(ErrDimensionsTooLarge, fmt.Sprintf("a side is over %d pixels", MaxSide))
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > MaxPixels {
		return fail(ErrDimensionsTooLarge, fmt.Sprintf("%d pixels, limit %d", px, MaxPixels))
	}
	switch f {
	case PNG:
		cfg.DecodeBytes = pngDecodeBytes(src, cfg.Width, cfg.Height, model)
	case JPEG:
		cfg.DecodeBytes = jpegDecodeBytes(src, cfg.Width, cfg.Height)
	case GIF:
		// One paletted frame no larger than the logical screen (the
		// decoder refuses larger frames), plus the LZW state.
		cfg.DecodeBytes = int64(cfg.Width)*int64(cfg.Height) + 64<<10
	}
	if cfg.DecodeBytes > MaxDecodeBytes {
		return fail(ErrDimensionsTooLarge, fmt.Sprintf("decoding would need about %d MiB, limit %d MiB",
			cfg.DecodeBytes>>20, MaxDecodeBytes>>20))
	}
	return cfg, nil
}

// pngDecodeBytes estimates image/png's allocation: the image in the
// decoder's pixel type, twice over for an interlaced image (each pass is
// decoded into its own image before it is merged), plus two row buffers.
func pngDecodeBytes(src []byte, w, h int, model color.Model) int64 {
	bpp := int64(8)
	switch model {
	case color.GrayModel:
		bpp = 1
	case color.Gray16Model:
		bpp = 2
	case color.RGBAModel, color.NRGBAModel:
		bpp = 4
	case color.RGBA64Model, color.NRGBA64Model:
		bpp = 8
	default:
		if _, ok := model.(color.Palette); ok {
			bpp = 1
		}
	}
	n := bpp * int64(w) * int64(h)
	// The interlace method is the last byte of IHDR, which the PNG
	// specification requires to be the first chunk: 8 (signature) + 8
	// (length, type) + 12.
	const interlaceOffset = 28
	if len(src) > interlaceOffset && src[interlaceOffset] != 0 {
		n *= 2
	}
	return n + 2*(8*int64(w)+1)
}

// jpegDecodeBytes estimates image/jpeg's allocation from the frame header:
// one byte per sample of every component plane (padded to whole MCUs), four
// times that again for a progressive image (each 8x8 block keeps 64 int32
// coefficients until the last scan), and an RGBA image when the samples
// must be converted (RGB or four components). A frame header it cannot
// parse gets the worst case of all of these.
func jpegDecodeBytes(src []byte, w, h int) int64 {
	px := int64(w) * int64(h)
	fr, ok := jpegFrameOf(src)
	if !ok {
		return px * (4*(1+4) + 4)
	}
	var hmax, vmax int64 = 1, 1
	for _, c := range fr.comps {
		hmax, vmax = max(hmax, c.h), max(vmax, c.v)
	}
	mxx := (int64(w) + 8*hmax - 1) / (8 * hmax)
	myy := (int64(h) + 8*vmax - 1) / (8 * vmax)
	var n int64
	for _, c := range fr.comps {
		plane := 64 * mxx * myy * c.h * c.v
		if fr.progressive {
			plane *= 1 + 4
		}
		n += plane
	}
	if len(fr.comps) == 4 || fr.rgb {
		n += 4 * px
	}
	return n
}

type jpegComponent struct {
	id   byte
	h, v int64
}

type jpegFrame struct {
	progressive bool
	rgb         bool // component ids R, G, B or Adobe transform 0
	comps       []jpegComponent
}

// jpegFrameOf walks the marker segments up to the first start-of-frame
// (ITU T.81 B.1.1) and returns its components, remembering an Adobe APP14
// transform on the way.
func jpegFrameOf(b []byte) (jpegFrame, bool) {
	var fr jpegFrame
	adobeRGB := false
	i := 2 // after SOI
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return fr, false
		}
		m := b[i+1]
		if m == 0xFF { // fill byte
			i++
			continue
		}
		if m == 0x01 || (m >= 0xD0 && m <= 0xD7) { // standalone markers
			i += 2
			continue
		}
		if m == 0xD9 || m == 0xDA { // EOI or SOS before any frame
			return fr, false
		}
		n := int(binary.BigEndian.Uint16(b[i+2 : i+4]))
		if n < 2 || i+2+n > len(b) {
			return fr, false
		}
		seg := b[i+4 : i+2+n]
		switch {
		case m == 0xEE && len(seg) >= 12 && string(seg[:5]) == "Adobe":
			adobeRGB = seg[11] == 0
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			if len(seg) < 6 {
				return fr, false
			}
			nc := int(seg[5])
			if nc == 0 || len(seg) < 6+3*nc {
				return fr, false
			}
			fr.progressive = m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE
			for k := 0; k < nc; k++ {
				c := seg[6+3*k:]
				h, v := int64(c[1]>>4), int64(c[1]&0x0f)
				if h == 0 || v == 0 {
					return fr, false
				}
				fr.comps = append(fr.comps, jpegComponent{id: c[0], h: h, v: v})
			}
			fr.rgb = adobeRGB || (nc == 3 && fr.comps[0].id == 'R' && fr.comps[1].id == 'G' && fr.comps[2].id == 'B')
			return fr, true
		}
		i += 2 + n
	}
	return fr, false
}
