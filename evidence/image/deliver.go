package image

import (
	"bytes"
	stdimage "image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
)

// Options tune Prepare; nil or zero fields mean the package limits.
type Options struct {
	MaxDeliveredBytes int // default MaxDeliveredBytes
	MaxLongEdge       int // default MaxLongEdge
}

func (o *Options) limits() (maxBytes, longEdge int) {
	maxBytes, longEdge = MaxDeliveredBytes, MaxLongEdge
	if o != nil && o.MaxDeliveredBytes > 0 {
		maxBytes = o.MaxDeliveredBytes
	}
	if o != nil && o.MaxLongEdge > 0 {
		longEdge = o.MaxLongEdge
	}
	return maxBytes, longEdge
}

// Delivery is an image ready to hand to a client.
type Delivery struct {
	Data          []byte
	Format        Format // of Data: the source's own, or JPEG when re-encoded
	Width, Height int    // of Data
	Source        Config
	// Resized is true when Data has fewer pixels than the source.
	Resized bool
	// Reencoded is true when Data is not the source bytes.
	Reencoded bool
	// Quality is the JPEG quality of a re-encoded image, else 0.
	Quality int
}

// MIMEType is the media type of Data.
func (d *Delivery) MIMEType() string { return d.Format.MIMEType() }

// Prepare turns the bytes of an image file into what is delivered:
//
//   - Inspect checks the format and the header's bounds before anything is
//     decoded;
//   - an image already within the byte limit and the long-edge limit is
//     delivered as its own bytes, after a full decode proves it is intact
//     (a client that is handed a corrupt image may reject the whole
//     conversation); WebP, which cannot be decoded here, is checked by its
//     header only;
//   - any other image is scaled to fit the long edge and encoded as JPEG at
//     the qualities of the ladder in turn, then scaled down by a further
//     quarter and tried again, until it fits the byte limit. A JPEG's EXIF
//     orientation, which re-encoding drops, is applied to the pixels (so
//     Width and Height are then as displayed). Only the first frame of an
//     animated GIF survives this.
//
// A WebP that does not fit is refused with ErrWebPReencode: convert it first.
// Errors are *Error.
func Prepare(src []byte, opts *Options) (*Delivery, error) {
	maxBytes, longEdge := opts.limits()
	cfg, err := Inspect(src)
	if err != nil {
		return nil, err
	}
	d := &Delivery{Format: cfg.Format, Width: cfg.Width, Height: cfg.Height, Source: cfg}
	fits := cfg.Size <= int64(maxBytes) && max(cfg.Width, cfg.Height) <= longEdge
	if cfg.Format == WebP {
		if !fits {
			return nil, &Error{Format: WebP, Width: cfg.Width, Height: cfg.Height, Size: cfg.Size, Err: ErrWebPReencode,
				Detail: "convert it to PNG or JPEG (or shrink it) first"}
		}
		d.Data = src
		return d, nil
	}
	img, err := decode(src, cfg)
	if err != nil {
		return nil, &Error{Format: cfg.Format, Width: cfg.Width, Height: cfg.Height, Size: cfg.Size, Err: ErrDecode, Detail: err.Error()}
	}
	if b := img.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return nil, &Error{Format: cfg.Format, Width: cfg.Width, Height: cfg.Height, Size: cfg.Size, Err: ErrDecode,
			Detail: "decoded size differs from the header"}
	}
	if fits {
		d.Data = src
		return d, nil
	}
	orientation := 1
	if cfg.Format == JPEG {
		orientation = jpegOrientation(src)
	}
	w, h := fitLongEdge(cfg.Width, cfg.Height, longEdge)
	var buf bytes.Buffer
	for max(w, h) >= minDeliveredEdge {
		rgba := orient(Resize(img, w, h), orientation)
		ow, oh := rgba.Rect.Dx(), rgba.Rect.Dy()
		for _, q := range qualityLadder {
			buf.Reset()
			if err := jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: q}); err != nil {
				return nil, &Error{Format: cfg.Format, Width: cfg.Width, Height: cfg.Height, Size: cfg.Size, Err: ErrEncode, Detail: err.Error()}
			}
			if buf.Len() <= maxBytes {
				d.Data = bytes.Clone(buf.Bytes())
				d.Format, d.Width, d.Height, d.Quality = JPEG, ow, oh, q
				d.Resized = w != cfg.Width || h != cfg.Height
				d.Reencoded = true
				return d, nil
			}
		}
		w, h = max(int(float64(w)*minShrink), 1), max(int(float64(h)*minShrink), 1)
	}
	return nil, &Error{Format: cfg.Format, Width: cfg.Width, Height: cfg.Height, Size: cfg.Size, Err: ErrEncode}
}

// fitLongEdge scales w x h down, keeping the aspect ratio, so the longer
// side is at most edge; each side stays at least 1.
func fitLongEdge(w, h, edge int) (int, int) {
	long := max(w, h)
	if long <= edge {
		return w, h
	}
	scale := float64(edge) / float64(long)
	sw := min(max(int(float64(w)*scale+0.5), 1), edge)
	sh := min(max(int(float64(h)*scale+0.5), 1), edge)
	return sw, sh
}

// decode runs the standard decoder of cfg.Format. Inspect has bounded what
// it will allocate.
func decode(src []byte, cfg Config) (stdimage.Image, error) {
	r := bytes.NewReader(src)
	switch cfg.Format {
	case PNG:
		return png.Decode(r)
	case JPEG:
		return jpeg.Decode(r)
	case GIF:
		m, err := gif.Decode(r)
		if err != nil {
			return nil, err
		}
		// The first frame may cover only part of the logical screen (the
		// decoder has checked it lies within it).
		screen := stdimage.Rect(0, 0, cfg.Width, cfg.Height)
		if p, ok := m.(*stdimage.Paletted); ok && p.Rect != screen {
			return &gifScreen{frame: p, screen: screen}, nil
		}
		return m, nil
	}
	panic("image: decode called for " + string(cfg.Format) + ", which Inspect never lets through")
}

// gifScreen is a GIF's first frame on its logical screen; the rest of the
// screen is transparent.
type gifScreen struct {
	frame  *stdimage.Paletted
	screen stdimage.Rectangle
}

func (g *gifScreen) ColorModel() color.Model    { return g.frame.Palette }
func (g *gifScreen) Bounds() stdimage.Rectangle { return g.screen }
func (g *gifScreen) At(x, y int) color.Color {
	if !(stdimage.Point{X: x, Y: y}).In(g.frame.Rect) {
		return color.Transparent
	}
	return g.frame.At(x, y)
}
