// Package image prepares image files for delivery to a model: it recognises
// JPEG, PNG, GIF and WebP by their bytes (never by their names), checks the
// dimensions a header claims against named bounds before any pixel is
// decoded, and delivers either the original bytes or a downscaled JPEG that
// fits the delivery limits. It does not read files or decide which paths may
// be read (the tools layer does, through evidence.ReadSnapshot and auth), and
// it cannot decode or encode WebP: the standard library has no WebP codec, so
// WebP is only ever passed through unchanged.
package image

import (
	"bytes"
	"errors"
	"fmt"
)

// Limits on what is read, decoded and delivered. Every bound is checked
// before the work it bounds.
const (
	// MaxSourceBytes bounds the encoded source file.
	MaxSourceBytes = 50 << 20
	// MaxSide bounds each side a header may claim.
	MaxSide = 16384
	// MaxPixels bounds width*height a header may claim (a 6000 x 4000
	// photograph is 24 Mpx).
	MaxPixels = 50_000_000
	// MaxDecodeBytes bounds the memory the standard decoders would allocate
	// for the pixels (and, for progressive JPEG, the coefficients),
	// estimated from the header before decoding.
	MaxDecodeBytes = 256 << 20
	// MaxDeliveredBytes bounds the encoded image handed to the client.
	MaxDeliveredBytes = 2 << 20
	// MaxLongEdge bounds the longer side of the delivered image.
	MaxLongEdge = 2560
)

// JPEG qualities tried in turn when re-encoding; after the last one the
// image is scaled down further (by minShrink) and the ladder starts again.
var qualityLadder = [...]int{85, 75, 65, 55}

const (
	// minShrink is the factor applied to both sides when no quality on
	// the ladder fits the byte limit.
	minShrink = 0.75
	// minDeliveredEdge is the smallest long edge tried before giving up;
	// a JPEG this small is far below any byte limit in practice.
	minDeliveredEdge = 16
)

// Sentinel errors, always carried inside an *Error. Callers decide with
// errors.Is.
var (
	// ErrUnsupported: the bytes are not a JPEG, PNG, GIF or WebP image.
	ErrUnsupported = errors.New("image: not a JPEG, PNG, GIF or WebP image")
	// ErrSourceTooLarge: the encoded source is over MaxSourceBytes.
	ErrSourceTooLarge = errors.New("image: source file too large")
	// ErrDimensionsTooLarge: the header claims more pixels than the bounds
	// allow (a decompression bomb, or simply too big to decode safely).
	ErrDimensionsTooLarge = errors.New("image: dimensions too large")
	// ErrWebPReencode: a WebP image is over the delivery limits, and this
	// server cannot re-encode WebP.
	ErrWebPReencode = errors.New("image: WebP over the delivery limits cannot be re-encoded by this server")
	// ErrDecode: the header was acceptable but the image data is corrupt
	// or uses a variant the standard decoders do not support.
	ErrDecode = errors.New("image: cannot decode")
	// ErrEncode: no JPEG down to the smallest size fits the byte limit.
	ErrEncode = errors.New("image: cannot encode within the delivery limit")
)

// Error is the error of Inspect and Prepare. Err is one of the sentinels;
// the other fields are what was known when it failed (zero if not yet).
type Error struct {
	Format        Format
	Width, Height int   // as the header claims
	Size          int64 // encoded source bytes
	Detail        string
	Err           error
}

func (e *Error) Error() string {
	var b bytes.Buffer
	b.WriteString(e.Err.Error())
	if e.Format != "" {
		fmt.Fprintf(&b, " (%s", e.Format)
		if e.Width > 0 || e.Height > 0 {
			fmt.Fprintf(&b, " %dx%d", e.Width, e.Height)
		}
		b.WriteString(")")
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Format is an image format recognised by its magic bytes.
type Format string

// The supported formats.
const (
	PNG  Format = "png"
	JPEG Format = "jpeg"
	GIF  Format = "gif"
	WebP Format = "webp"
)

// MIMEType is the format's media type.
func (f Format) MIMEType() string {
	return "image/" + string(f)
}

var (
	pngMagic  = []byte("\x89PNG\r\n\x1a\n")
	jpegMagic = []byte{0xFF, 0xD8, 0xFF}
	gif87     = []byte("GIF87a")
	gif89     = []byte("GIF89a")
)

// Sniff names the format of b from its first bytes, or returns false.
func Sniff(b []byte) (Format, bool) {
	switch {
	case bytes.HasPrefix(b, pngMagic):
		return PNG, true
	case bytes.HasPrefix(b, jpegMagic):
		return JPEG, true
	case bytes.HasPrefix(b, gif87), bytes.HasPrefix(b, gif89):
		return GIF, true
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return WebP, true
	}
	return "", false
}
