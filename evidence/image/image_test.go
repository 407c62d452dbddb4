package image

import (
	"bytes"
	"errors"
	stdimage "image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"runtime"
	"testing"
)

func TestSniff(t *testing.T) {
	small := solid(2, 2, color.White)
	tests := []struct {
		name string
		b    []byte
		want Format
		ok   bool
	}{
		{"png", encodePNG(t, small), PNG, true},
		{"jpeg", encodeJPEG(t, small, 90), JPEG, true},
		{"gif", encodeGIF(t, small), GIF, true},
		{"webp", webpFile(webpChunkBytes("VP8L", vp8lPayload(1, 1, 1, 2, 3, 255))), WebP, true},
		{"text", []byte("just some text that is not an image\n"), "", false},
		{"empty", nil, "", false},
		{"riff but not webp", []byte("RIFF\x04\x00\x00\x00WAVE"), "", false},
		{"png signature cut", pngMagic[:7], "", false},
	}
	for _, tt := range tests {
		got, ok := Sniff(tt.b)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Sniff(%s) = %q, %v, want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestInspect(t *testing.T) {
	m := noisy(64, 48, 16)
	tests := []struct {
		name        string
		b           []byte
		want        Format
		w, h        int
		minDecode   int64
		wantDecodes bool
	}{
		{"png", encodePNG(t, m), PNG, 64, 48, 64 * 48 * 4, true},
		{"jpeg", encodeJPEG(t, m, 80), JPEG, 64, 48, 64 * 48, true},
		{"gif", encodeGIF(t, m), GIF, 64, 48, 64 * 48, true},
		{"webp lossless", webpFile(webpChunkBytes("VP8L", vp8lPayload(300, 200, 9, 9, 9, 255))), WebP, 300, 200, 0, false},
		{"webp lossy", webpFile(webpChunkBytes("VP8 ", vp8Payload(640, 480))), WebP, 640, 480, 0, false},
		{"webp extended", webpFile(webpChunkBytes("VP8X", vp8xPayload(0, 5, 7)),
			webpChunkBytes("VP8L", vp8lPayload(5, 7, 1, 2, 3, 255))), WebP, 5, 7, 0, false},
		{"webp animated", webpFile(webpChunkBytes("VP8X", vp8xPayload(vp8xFlagAnim, 4000, 3000)),
			webpChunkBytes("ANIM", make([]byte, 6)), webpChunkBytes("ANMF", make([]byte, 16))), WebP, 4000, 3000, 0, false},
	}
	for _, tt := range tests {
		cfg, err := Inspect(tt.b)
		if err != nil {
			t.Errorf("Inspect(%s): %v", tt.name, err)
			continue
		}
		if cfg.Format != tt.want || cfg.Width != tt.w || cfg.Height != tt.h || cfg.Size != int64(len(tt.b)) {
			t.Errorf("Inspect(%s) = %+v, want %s %dx%d", tt.name, cfg, tt.want, tt.w, tt.h)
		}
		if tt.wantDecodes && cfg.DecodeBytes < tt.minDecode || !tt.wantDecodes && cfg.DecodeBytes != 0 {
			t.Errorf("Inspect(%s).DecodeBytes = %d, want >= %d", tt.name, cfg.DecodeBytes, tt.minDecode)
		}
	}
}

func TestInspectRefuses(t *testing.T) {
	png := encodePNG(t, noisy(32, 32, 8))
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"text named anything", []byte("hello, world\n"), ErrUnsupported},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), ErrUnsupported},
		{"too big a source", append(bytes.Clone(png), make([]byte, MaxSourceBytes)...), ErrSourceTooLarge},
		{"png bomb", pngHeaderOnly(100000, 100000), ErrDimensionsTooLarge},
		{"png one side too long", pngHeaderOnly(MaxSide+1, 10), ErrDimensionsTooLarge},
		{"png too many pixels", pngHeaderOnly(10000, 10000), ErrDimensionsTooLarge},
		{"png truncated header", png[:20], ErrDecode},
		{"png zero width", pngHeaderOnly(0, 10), ErrDecode},
		{"webp bomb", webpFile(webpChunkBytes("VP8X", vp8xPayload(0, 1<<24, 1<<24)),
			webpChunkBytes("VP8L", vp8lPayload(16384, 16384, 0, 0, 0, 255))), ErrDecode},
		{"webp canvas too large", webpFile(webpChunkBytes("VP8L", vp8lPayload(16384, 16384, 0, 0, 0, 255))), ErrDimensionsTooLarge},
		{"webp riff size past end", append([]byte("RIFF\xff\x00\x00\x00WEBP"), webpChunkBytes("VP8L", vp8lPayload(1, 1, 0, 0, 0, 0))...), ErrDecode},
		{"webp no chunks", webpFile(), ErrDecode},
		{"webp unknown first chunk", webpFile(webpChunkBytes("JUNK", []byte{1, 2})), ErrDecode},
		{"webp chunk overruns", webpFile([]byte("VP8L\xff\x00\x00\x00\x2f")), ErrDecode},
		{"webp bad VP8L signature", webpFile(webpChunkBytes("VP8L", []byte{0x2e, 0, 0, 0, 0})), ErrDecode},
		{"webp VP8 not key frame", webpFile(webpChunkBytes("VP8 ", append([]byte{0x01}, vp8Payload(2, 2)[1:]...))), ErrDecode},
		{"webp VP8X without image", webpFile(webpChunkBytes("VP8X", vp8xPayload(0, 2, 2))), ErrDecode},
		{"webp VP8X size mismatch", webpFile(webpChunkBytes("VP8X", vp8xPayload(0, 2, 2)),
			webpChunkBytes("VP8L", vp8lPayload(3, 2, 0, 0, 0, 255))), ErrDecode},
	}
	for _, tt := range tests {
		_, err := Inspect(tt.b)
		var ie *Error
		if !errors.Is(err, tt.want) || !errors.As(err, &ie) {
			t.Errorf("Inspect(%s) = %v, want %v in an *Error", tt.name, err, tt.want)
		}
	}
}

// TestBombRefusedWithoutAllocating checks the bound is applied before the
// decoder allocates: the header claims 100000 x 100000 (30 GB as RGB).
func TestBombRefusedWithoutAllocating(t *testing.T) {
	bomb := pngHeaderOnly(100000, 100000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Prepare(bomb, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrDimensionsTooLarge) {
		t.Fatalf("Prepare(bomb) = %v, want ErrDimensionsTooLarge", err)
	}
	var ie *Error
	if !errors.As(err, &ie) || ie.Width != 100000 || ie.Height != 100000 || ie.Format != PNG {
		t.Errorf("error = %#v, want the claimed size and format", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the bomb allocated %d bytes, want < 1 MiB", grew)
	}
}

func TestJPEGDecodeEstimate(t *testing.T) {
	// A baseline 4:2:0 JPEG from the standard encoder: one full-size luma
	// plane and two quarter-size chroma planes, padded to 16x16 MCUs.
	b := encodeJPEG(t, noisy(100, 50, 8), 80)
	cfg, err := Inspect(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(112*64 + 2*56*32); cfg.DecodeBytes != want {
		t.Errorf("baseline DecodeBytes = %d, want %d", cfg.DecodeBytes, want)
	}
	// A hand-written progressive frame header (SOF2), 4:2:0, 6000 x 4000:
	// the coefficients make it five times the planes.
	sof := []byte{0xFF, 0xD8, 0xFF, 0xC2, 0x00, 17, 8, 0x0F, 0xA0, 0x17, 0x70, 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1}
	fr, ok := jpegFrameOf(sof)
	if !ok || !fr.progressive || len(fr.comps) != 3 || fr.comps[0].h != 2 || fr.rgb {
		t.Fatalf("jpegFrameOf(SOF2) = %+v, %v", fr, ok)
	}
	planes := int64(6000*4000 + 2*3000*2000)
	if got := jpegDecodeBytes(sof, 6000, 4000); got != 5*planes {
		t.Errorf("progressive estimate = %d, want %d", got, 5*planes)
	}
	if got := jpegDecodeBytes([]byte{0xFF, 0xD8, 0xFF, 0xDA}, 10, 10); got != 100*24 {
		t.Errorf("unparsable frame estimate = %d, want the worst case %d", got, 100*24)
	}
}

func TestPreparePassesSmallImagesThrough(t *testing.T) {
	m := noisy(120, 80, 32)
	tests := []struct {
		name string
		b    []byte
		want Format
	}{
		{"png", encodePNG(t, m), PNG},
		{"jpeg", encodeJPEG(t, m, 85), JPEG},
		{"gif", encodeGIF(t, m), GIF},
		{"webp", webpFile(webpChunkBytes("VP8L", vp8lPayload(120, 80, 200, 100, 50, 255))), WebP},
	}
	for _, tt := range tests {
		d, err := Prepare(tt.b, nil)
		if err != nil {
			t.Errorf("Prepare(%s): %v", tt.name, err)
			continue
		}
		if !bytes.Equal(d.Data, tt.b) || d.Format != tt.want || d.MIMEType() != "image/"+string(tt.want) ||
			d.Resized || d.Reencoded || d.Width != 120 || d.Height != 80 || d.Quality != 0 {
			t.Errorf("Prepare(%s) = %s %dx%d resized %v reencoded %v q%d, want the source unchanged",
				tt.name, d.Format, d.Width, d.Height, d.Resized, d.Reencoded, d.Quality)
		}
	}
}

func TestPrepareRefusesCorruptData(t *testing.T) {
	b := encodePNG(t, noisy(64, 64, 64))
	b[len(b)/2] ^= 0xFF // inside IDAT: the header still reads
	if _, err := Inspect(b); err != nil {
		t.Fatalf("Inspect: %v (the header should still read)", err)
	}
	if _, err := Prepare(b, nil); !errors.Is(err, ErrDecode) {
		t.Errorf("Prepare(corrupt PNG) = %v, want ErrDecode", err)
	}
}

func TestPrepareReencodes(t *testing.T) {
	big := noisy(900, 300, 64)
	tests := []struct {
		name       string
		b          []byte
		opts       *Options
		wantW      int
		wantH      int
		wantShrunk bool // scaled below the long edge to fit the bytes
	}{
		{"long edge", encodePNG(t, big), &Options{MaxLongEdge: 450}, 450, 150, false},
		{"bytes only", encodePNG(t, big), &Options{MaxDeliveredBytes: 200 << 10}, 900, 300, false},
		{"ladder then shrink", encodePNG(t, big), &Options{MaxLongEdge: 600, MaxDeliveredBytes: 12 << 10}, 0, 0, true},
		{"gif", encodeGIF(t, big), &Options{MaxLongEdge: 300}, 300, 100, false},
		{"jpeg", encodeJPEG(t, big, 95), &Options{MaxLongEdge: 90}, 90, 30, false},
	}
	for _, tt := range tests {
		maxBytes, longEdge := tt.opts.limits()
		d, err := Prepare(tt.b, tt.opts)
		if err != nil {
			t.Errorf("Prepare(%s): %v", tt.name, err)
			continue
		}
		if d.Format != JPEG || !d.Reencoded || len(d.Data) > maxBytes || max(d.Width, d.Height) > longEdge {
			t.Errorf("Prepare(%s) = %s %dx%d %d bytes, want JPEG within %d px and %d bytes",
				tt.name, d.Format, d.Width, d.Height, len(d.Data), longEdge, maxBytes)
		}
		if !tt.wantShrunk && (d.Width != tt.wantW || d.Height != tt.wantH) {
			t.Errorf("Prepare(%s) size = %dx%d, want %dx%d", tt.name, d.Width, d.Height, tt.wantW, tt.wantH)
		}
		if tt.wantShrunk && (max(d.Width, d.Height) >= longEdge || d.Quality != qualityLadder[len(qualityLadder)-1] && max(d.Width, d.Height) == longEdge) {
			t.Errorf("Prepare(%s) = %dx%d q%d, want shrunk below %d px", tt.name, d.Width, d.Height, d.Quality, longEdge)
		}
		m, err := jpeg.Decode(bytes.NewReader(d.Data))
		if err != nil || m.Bounds().Dx() != d.Width || m.Bounds().Dy() != d.Height {
			t.Errorf("Prepare(%s) data does not decode as a %dx%d JPEG: %v", tt.name, d.Width, d.Height, err)
		}
		if d.Resized != (d.Width != 900) {
			t.Errorf("Prepare(%s).Resized = %v at %dx%d", tt.name, d.Resized, d.Width, d.Height)
		}
	}
}

func TestPrepareRefusesLargeWebP(t *testing.T) {
	for _, b := range [][]byte{
		webpFile(webpChunkBytes("VP8L", vp8lPayload(3000, 20, 1, 1, 1, 255))),
		append(webpFile(webpChunkBytes("VP8L", vp8lPayload(30, 20, 1, 1, 1, 255))), make([]byte, MaxDeliveredBytes)...),
	} {
		_, err := Prepare(b, nil)
		var ie *Error
		if !errors.Is(err, ErrWebPReencode) || !errors.As(err, &ie) || ie.Format != WebP {
			t.Errorf("Prepare(large WebP) = %v, want ErrWebPReencode", err)
		}
	}
}

// TestGIFFrameSmallerThanScreen re-encodes a GIF whose first frame covers
// only the middle of its logical screen; the rest is transparent, so white.
func TestGIFFrameSmallerThanScreen(t *testing.T) {
	pal := color.Palette{color.RGBA{0, 0, 255, 255}, color.RGBA{255, 0, 0, 255}}
	frame := stdimage.NewPaletted(stdimage.Rect(10, 10, 30, 30), pal)
	var buf bytes.Buffer
	g := &gif.GIF{Image: []*stdimage.Paletted{frame}, Delay: []int{0},
		Config: stdimage.Config{ColorModel: pal, Width: 40, Height: 40}}
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	d, err := Prepare(buf.Bytes(), &Options{MaxLongEdge: 20})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	m, err := jpeg.Decode(bytes.NewReader(d.Data))
	if err != nil || d.Width != 20 || d.Height != 20 {
		t.Fatalf("delivered %dx%d: %v", d.Width, d.Height, err)
	}
	near := func(c color.Color, r, g, b int) bool {
		cr, cg, cb, _ := c.RGBA()
		return abs(int(cr>>8)-r) < 40 && abs(int(cg>>8)-g) < 40 && abs(int(cb>>8)-b) < 40
	}
	if !near(m.At(1, 1), 255, 255, 255) || !near(m.At(10, 10), 0, 0, 255) {
		t.Errorf("corner %v, centre %v; want white outside the frame and blue inside", m.At(1, 1), m.At(10, 10))
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
