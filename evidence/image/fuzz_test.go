package image

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// TestWebPManyChunksBoundedAllocation: a VP8X file padded with a million
// empty chunks before its image must be walked, not collected; listing
// every chunk would allocate tens of bytes per 8 bytes of input.
func TestWebPManyChunksBoundedAllocation(t *testing.T) {
	const n = 1 << 20
	junk := bytes.Repeat(webpChunkBytes("JUNK", nil), n)
	src := webpFile(webpChunkBytes("VP8X", vp8xPayload(0, 3, 2)), junk,
		webpChunkBytes("VP8L", vp8lPayload(3, 2, 0, 0, 0, 255)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cfg, err := Inspect(src)
	runtime.ReadMemStats(&after)
	if err != nil || cfg.Width != 3 || cfg.Height != 2 {
		t.Fatalf("Inspect(%d junk chunks) = %+v, %v; want 3x2", n, cfg, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("Inspect of a %d-byte WebP allocated %d bytes, want < 1 MiB", len(src), grew)
	}
}

// FuzzInspect feeds arbitrary bytes to Sniff, Inspect and the WebP and JPEG
// header walkers: none may panic, a success must respect every bound, and
// refusing must not cost more than a small multiple of the input.
func FuzzInspect(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("hello, world\n"))
	f.Add(pngHeaderOnly(100000, 100000))
	f.Add(pngHeaderOnly(3, 2))
	f.Add(encodePNG(f, noisy(4, 3, 8)))
	f.Add(encodeJPEG(f, noisy(9, 7, 8), 80))
	f.Add(encodeGIF(f, noisy(5, 5, 8)))
	f.Add(webpFile(webpChunkBytes("VP8L", vp8lPayload(30, 20, 1, 2, 3, 255))))
	f.Add(webpFile(webpChunkBytes("VP8 ", vp8Payload(16, 9))))
	f.Add(webpFile(webpChunkBytes("VP8X", vp8xPayload(vp8xFlagAnim, 8, 8)), webpChunkBytes("ANMF", make([]byte, 16))))
	f.Add(webpFile(webpChunkBytes("VP8X", vp8xPayload(0, 3, 2)), webpChunkBytes("VP8L", vp8lPayload(3, 2, 0, 0, 0, 255))))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xC2, 0x00, 17, 8, 0x0F, 0xA0, 0x17, 0x70, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1})
	f.Add(withOrientationSeed())
	f.Fuzz(func(t *testing.T, b []byte) {
		format, sniffed := Sniff(b)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cfg, err := Inspect(b)
		runtime.ReadMemStats(&after)
		// The standard header decoders keep small fixed buffers (a few
		// KiB); nothing may grow with what a header claims.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20+8*uint64(len(b)) {
			t.Errorf("Inspect of %d bytes allocated %d bytes", len(b), grew)
		}
		if err != nil {
			var ie *Error
			if !errors.As(err, &ie) {
				t.Fatalf("Inspect error %v is not an *Error", err)
			}
			if !sniffed && !errors.Is(err, ErrUnsupported) {
				t.Errorf("unsniffable input: Inspect = %v, want ErrUnsupported", err)
			}
			return
		}
		if !sniffed || cfg.Format != format {
			t.Errorf("Inspect = %+v for input Sniff called %q, %v", cfg, format, sniffed)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxSide || cfg.Height > MaxSide ||
			int64(cfg.Width)*int64(cfg.Height) > MaxPixels || cfg.DecodeBytes > MaxDecodeBytes || cfg.DecodeBytes < 0 {
			t.Errorf("Inspect accepted %+v, outside the bounds", cfg)
		}
		// The other header walkers see the same bytes.
		_ = jpegOrientation(b)
		_, _ = jpegFrameOf(b)
	})
}

// withOrientationSeed is a small JPEG carrying an EXIF orientation, so the
// fuzzer starts with an APP1 segment to mutate.
func withOrientationSeed() []byte {
	var buf bytes.Buffer
	// SOI, APP1 "Exif\0\0" with a little-endian TIFF header whose IFD0 has
	// one orientation entry (6), then EOI.
	buf.Write([]byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x22})
	buf.WriteString("Exif\x00\x00")
	buf.Write([]byte{'I', 'I', 0x2A, 0x00, 0x08, 0, 0, 0, 0x01, 0x00,
		0x12, 0x01, 0x03, 0x00, 0x01, 0, 0, 0, 0x06, 0x00, 0, 0, 0, 0, 0, 0})
	buf.Write([]byte{0xFF, 0xD9})
	return buf.Bytes()
}
