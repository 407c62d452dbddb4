package image

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	stdimage "image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// bitWriter packs bits least significant first, as VP8L reads them.
type bitWriter struct {
	buf  []byte
	nbit uint
}

func (w *bitWriter) bits(v uint32, n uint) {
	for i := uint(0); i < n; i++ {
		if w.nbit%8 == 0 {
			w.buf = append(w.buf, 0)
		}
		if v>>i&1 != 0 {
			w.buf[len(w.buf)-1] |= 1 << (w.nbit % 8)
		}
		w.nbit++
	}
}

// vp8lPayload is a complete lossless bitstream of a w x h image of one
// colour: the header, no transforms, no colour cache, no meta prefix codes,
// and five "simple" prefix codes of one 8-bit symbol each (green, red,
// blue, alpha, distance), so every pixel takes zero bits. dwebp decodes it.
func vp8lPayload(w, h int, r, g, b, a uint8) []byte {
	var bw bitWriter
	bw.bits(vp8lSignature, 8)
	bw.bits(uint32(w-1), 14)
	bw.bits(uint32(h-1), 14)
	bw.bits(0, 1) // alpha hint
	bw.bits(0, 3) // version
	bw.bits(0, 1) // no transform
	bw.bits(0, 1) // no colour cache
	bw.bits(0, 1) // no meta prefix codes
	for _, sym := range []uint8{g, r, b, a, 0} {
		bw.bits(1, 1) // simple code
		bw.bits(0, 1) // one symbol
		bw.bits(1, 1) // 8-bit symbol
		bw.bits(uint32(sym), 8)
	}
	return bw.buf
}

func webpChunkBytes(fourCC string, p []byte) []byte {
	out := binary.LittleEndian.AppendUint32([]byte(fourCC), uint32(len(p)))
	out = append(out, p...)
	if len(p)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

func webpFile(chunks ...[]byte) []byte {
	body := []byte("WEBP")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(len(body))), body...)
}

// vp8xPayload is an extended header for a w x h canvas with the given flags.
func vp8xPayload(flags byte, w, h int) []byte {
	p := make([]byte, 10)
	p[0] = flags
	w, h = w-1, h-1
	p[4], p[5], p[6] = byte(w), byte(w>>8), byte(w>>16)
	p[7], p[8], p[9] = byte(h), byte(h>>8), byte(h>>16)
	return p
}

// vp8Payload is the start of a lossy key frame: frame tag, start code and
// the 14-bit sizes. Only the header is real; there is no frame data.
func vp8Payload(w, h int) []byte {
	p := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a}
	p = binary.LittleEndian.AppendUint16(p, uint16(w))
	p = binary.LittleEndian.AppendUint16(p, uint16(h))
	return append(p, make([]byte, 8)...)
}

// pngHeaderOnly is a PNG signature and an IHDR (8-bit truecolor) with a
// valid CRC claiming w x h, followed by an empty IDAT and IEND: a
// decompression bomb's header without the bomb.
func pngHeaderOnly(w, h uint32) []byte {
	var b bytes.Buffer
	b.Write(pngMagic)
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	writePNGChunk(&b, "IHDR", ihdr)
	writePNGChunk(&b, "IDAT", nil)
	writePNGChunk(&b, "IEND", nil)
	return b.Bytes()
}

func writePNGChunk(b *bytes.Buffer, typ string, data []byte) {
	binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.Write(b, binary.BigEndian, crc.Sum32())
}

// noisy is a w x h opaque image: gradients plus a cheap pseudo-random
// texture, so it neither compresses to nothing nor is pure noise.
func noisy(w, h int, amplitude uint32) *stdimage.NRGBA {
	m := stdimage.NewNRGBA(stdimage.Rect(0, 0, w, h))
	s := uint32(2463534242)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			s ^= s << 13
			s ^= s >> 17
			s ^= s << 5
			n := uint8(s % amplitude)
			i := m.PixOffset(x, y)
			m.Pix[i] = uint8(x*255/w) + n
			m.Pix[i+1] = uint8(y*255/h) ^ n
			m.Pix[i+2] = uint8((x+y)/4) + n/2
			m.Pix[i+3] = 0xFF
		}
	}
	return m
}

func encodePNG(t testing.TB, m stdimage.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, m stdimage.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, m stdimage.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, m, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func solid(w, h int, c color.Color) *stdimage.NRGBA {
	m := stdimage.NewNRGBA(stdimage.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Set(x, y, c)
		}
	}
	return m
}
