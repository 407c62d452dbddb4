package image

import (
	"encoding/binary"
	"fmt"
)

// WebP container constants (RFC 9649, "WebP Image Format").
const (
	webpHeaderLen   = 12 // "RIFF", size, "WEBP"
	webpChunkHeader = 8  // FourCC, size
	vp8xFlagAnim    = 0x02
	vp8lSignature   = 0x2f
)

// webpConfig parses the RIFF container of a WebP file far enough to know its
// canvas size and that it holds an image, without decoding anything: the
// standard library has no WebP decoder, so this is all the validation WebP
// gets before it is passed through. It accepts the three layouts of RFC
// 9649: simple lossy ("VP8 "), simple lossless ("VP8L") and extended
// ("VP8X", whose canvas must be backed by a VP8/VP8L chunk of the same size
// or, for an animation, by ANMF frames). Trailing bytes after the RIFF
// payload are ignored, as the RFC allows.
func webpConfig(b []byte) (w, h int, err error) {
	bad := func(format string, args ...any) (int, int, error) {
		return 0, 0, fmt.Errorf("webp: "+format, args...)
	}
	if len(b) < webpHeaderLen {
		return bad("shorter than its header")
	}
	riff := int64(binary.LittleEndian.Uint32(b[4:8]))
	if riff < 4 || riff+8 > int64(len(b)) {
		return bad("RIFF size %d does not fit the %d-byte file", riff, len(b))
	}
	// Chunks are walked one at a time, never collected: a file of tiny
	// chunks would otherwise cost far more memory than its own size.
	it := webpChunkIter{b: b[webpHeaderLen : 8+riff]}
	first, ok := it.next()
	if !ok {
		if it.err != nil {
			return 0, 0, it.err
		}
		return bad("no chunks")
	}
	switch first.fourCC {
	case fccVP8, fccVP8L:
		if w, h, err = webpBitstreamSize(first); err != nil {
			return 0, 0, err
		}
		return w, h, it.rest()
	case fccVP8X:
	default:
		return bad("first chunk %q is not VP8, VP8L or VP8X", first.fourCC[:])
	}
	p := first.payload
	if len(p) < 10 {
		return bad("VP8X chunk too short")
	}
	w = int(uint32(p[4])|uint32(p[5])<<8|uint32(p[6])<<16) + 1
	h = int(uint32(p[7])|uint32(p[8])<<8|uint32(p[9])<<16) + 1
	animated := p[0]&vp8xFlagAnim != 0
	found := false
	for c, ok := it.next(); ok && !found; c, ok = it.next() {
		switch {
		case animated && c.fourCC == fccANMF:
			found = true
		case !animated && (c.fourCC == fccVP8 || c.fourCC == fccVP8L):
			iw, ih, err := webpBitstreamSize(c)
			if err != nil {
				return 0, 0, err
			}
			if iw != w || ih != h {
				return bad("image %dx%d does not match the %dx%d canvas", iw, ih, w, h)
			}
			found = true
		}
	}
	if err := it.rest(); err != nil {
		return 0, 0, err
	}
	if !found {
		return bad("VP8X without image data")
	}
	return w, h, nil
}

// fourCC is a chunk type. An array, not a string, so that walking a
// million chunks allocates nothing.
type fourCC [4]byte

var (
	fccVP8  = fourCC{'V', 'P', '8', ' '}
	fccVP8L = fourCC{'V', 'P', '8', 'L'}
	fccVP8X = fourCC{'V', 'P', '8', 'X'}
	fccANMF = fourCC{'A', 'N', 'M', 'F'}
)

type webpChunk struct {
	fourCC  fourCC
	payload []byte
}

// webpChunkIter walks the chunks of a RIFF payload; each chunk's payload
// is padded to an even length, and the padding of the last one may be
// missing. After next returns false, err says why if the payload was
// malformed.
type webpChunkIter struct {
	b   []byte // the chunks not walked yet
	err error
}

// rest walks the remaining chunks and returns the error of the first
// malformed one: a WebP is passed through whole, so all of it is checked.
func (it *webpChunkIter) rest() error {
	for _, ok := it.next(); ok; _, ok = it.next() {
	}
	return it.err
}

func (it *webpChunkIter) next() (webpChunk, bool) {
	b := it.b
	if len(b) == 0 || it.err != nil {
		return webpChunk{}, false
	}
	if len(b) < webpChunkHeader {
		it.err = fmt.Errorf("webp: truncated chunk header")
		return webpChunk{}, false
	}
	size := int64(binary.LittleEndian.Uint32(b[4:8]))
	if size > int64(len(b)-webpChunkHeader) {
		it.err = fmt.Errorf("webp: chunk %q of %d bytes overruns the file", b[0:4], size)
		return webpChunk{}, false
	}
	c := webpChunk{fourCC: fourCC(b[0:4]), payload: b[webpChunkHeader : webpChunkHeader+size]}
	next := webpChunkHeader + size + size&1
	it.b = b[min(next, int64(len(b))):]
	return c, true
}

// webpBitstreamSize reads the size from a "VP8 " key frame header or a
// "VP8L" header.
func webpBitstreamSize(c webpChunk) (w, h int, err error) {
	p := c.payload
	switch c.fourCC {
	case fccVP8:
		// 3-byte frame tag (bit 0 clear on a key frame), start code
		// 9d 01 2a, then 14-bit width and height with 2-bit scales.
		if len(p) < 10 || p[0]&1 != 0 || p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a {
			return 0, 0, fmt.Errorf("webp: VP8 chunk is not a key frame")
		}
		w = int(binary.LittleEndian.Uint16(p[6:8]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(p[8:10]) & 0x3fff)
	case fccVP8L:
		// Signature byte, then 14 bits width-1, 14 bits height-1, one
		// alpha hint bit and a 3-bit version that must be 0.
		if len(p) < 5 || p[0] != vp8lSignature {
			return 0, 0, fmt.Errorf("webp: VP8L chunk without its signature")
		}
		bits := binary.LittleEndian.Uint32(p[1:5])
		if bits>>29 != 0 {
			return 0, 0, fmt.Errorf("webp: VP8L version %d", bits>>29)
		}
		w = int(bits&0x3fff) + 1
		h = int(bits>>14&0x3fff) + 1
	}
	if w == 0 || h == 0 {
		return 0, 0, fmt.Errorf("webp: zero-sized image")
	}
	return w, h, nil
}
