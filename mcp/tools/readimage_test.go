package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"winx/auth/policy"
	"winx/evidence"
	"winx/mcp"
	"winx/mcp/session"
	"winx/mcp/session/sessiontest"
)

// imageResult is a decoded ReadImage answer, image blocks included.
type imageResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
	} `json:"content"`
	Structured struct {
		Status    string    `json:"status"`
		ErrorCode string    `json:"errorCode"`
		Message   string    `json:"message"`
		Output    string    `json:"output"`
		Data      imageData `json:"data"`
	} `json:"structuredContent"`
}

// image returns the only image block's bytes and MIME type, or fails.
func (r *imageResult) image(t *testing.T) ([]byte, string) {
	t.Helper()
	var found []byte
	var mime string
	n := 0
	for _, c := range r.Content {
		if c.Type != "image" {
			continue
		}
		n++
		b, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			t.Fatalf("image block data is not base64: %v", err)
		}
		found, mime = b, c.MIMEType
	}
	if n != 1 {
		t.Fatalf("%d image blocks in %+v, want 1", n, r.Structured)
	}
	return found, mime
}

func (r *imageResult) imageBlocks() int {
	n := 0
	for _, c := range r.Content {
		if c.Type == "image" {
			n++
		}
	}
	return n
}

func (e *bashEnv) readImage(path string, force bool, thread string) *imageResult {
	e.t.Helper()
	args := map[string]any{"file_path": path, "thread_id": thread, "workspace_root": e.root}
	if force {
		args["force"] = true
	}
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": ReadImageTool, "arguments": args})
	if err != nil {
		e.t.Fatalf("ReadImage: %v", err)
	}
	var r imageResult
	if err := resp.Decode(&r); err != nil {
		e.t.Fatalf("ReadImage: decode: %v", err)
	}
	return &r
}

// noisyImage is an opaque w x h image: gradients plus a cheap xorshift
// texture that changes every 16 pixels, so a 6000 x 4000 PNG of it is
// about 8 MB: well over the delivery limit, yet quick to encode.
func noisyImage(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	s := uint32(88172645)
	var n uint8
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if x%16 == 0 {
				s ^= s << 13
				s ^= s >> 17
				s ^= s << 5
				n = uint8(s & 7)
			}
			i := m.PixOffset(x, y)
			m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = uint8(x*255/w)+n, uint8(y*255/h)^n, uint8((x+y)/8)+n, 0xFF
		}
	}
	return m
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func pngBytes(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpLossless is a complete lossless WebP (RIFF, one VP8L chunk) of a w x h
// image of one colour, written by hand because the standard library has no
// WebP encoder: the 5-byte VP8L header, then no transform, no colour cache,
// no meta prefix codes, and five one-symbol "simple" prefix codes (green,
// red, blue, alpha, distance), so each pixel takes zero bits. libwebp's
// dwebp decodes it; the server only parses its header and passes it through.
func webpLossless(w, h int, r, g, b uint8) []byte {
	var bits []byte
	var n uint
	put := func(v uint32, width uint) {
		for i := uint(0); i < width; i++ {
			if n%8 == 0 {
				bits = append(bits, 0)
			}
			bits[len(bits)-1] |= byte(v>>i&1) << (n % 8)
			n++
		}
	}
	put(0x2f, 8)
	put(uint32(w-1), 14)
	put(uint32(h-1), 14)
	put(0, 1+3+1+1+1) // alpha hint, version, transform, colour cache, meta codes
	for _, sym := range []uint8{g, r, b, 0xFF, 0} {
		put(1, 1) // simple code
		put(0, 1) // one symbol
		put(1, 1) // of 8 bits
		put(uint32(sym), 8)
	}
	chunk := binary.LittleEndian.AppendUint32([]byte("VP8L"), uint32(len(bits)))
	chunk = append(chunk, bits...)
	if len(bits)%2 == 1 {
		chunk = append(chunk, 0)
	}
	body := append([]byte("WEBP"), chunk...)
	return append(binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(len(body))), body...)
}

// pngBombHeader is a PNG whose IHDR (valid CRC) claims w x h 8-bit RGB,
// with an empty IDAT and IEND: the header of a decompression bomb.
func pngBombHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0))
	chunk("IDAT", nil)
	chunk("IEND", nil)
	return b.Bytes()
}

func TestReadImageFormats(t *testing.T) {
	e := newBashEnv(t, "")
	m := noisyImage(64, 40)
	var jb, gb bytes.Buffer
	if err := jpeg.Encode(&jb, m, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gb, m, nil); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name, mime string
		b          []byte
		w, h       int
	}{
		{"a.png", "image/png", pngBytes(t, m), 64, 40},
		{"b.jpg", "image/jpeg", jb.Bytes(), 64, 40},
		{"c.gif", "image/gif", gb.Bytes(), 64, 40},
		{"d.webp", "image/webp", webpLossless(30, 20, 200, 100, 50), 30, 20},
		{"misnamed.txt", "image/png", pngBytes(t, noisyImage(5, 3)), 5, 3}, // bytes decide, not names
	}
	for _, f := range files {
		writeBytes(t, filepath.Join(e.root, f.name), f.b)
		r := e.readImage(f.name, false, e.thread)
		if r.IsError || r.Structured.Status != "completed" {
			t.Errorf("%s: %s %s %s", f.name, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output)
			continue
		}
		got, mime := r.image(t)
		d := r.Structured.Data
		if !bytes.Equal(got, f.b) || mime != f.mime {
			t.Errorf("%s: delivered %d bytes %s, want the file's %d bytes as %s", f.name, len(got), mime, len(f.b), f.mime)
		}
		want := imageData{Path: filepath.Join(e.root, f.name), MIMEType: f.mime, Width: f.w, Height: f.h,
			SourceWidth: f.w, SourceHeight: f.h, SourceBytes: int64(len(f.b)), DeliveredBytes: len(f.b),
			Revision: string(evidence.RevisionOf(f.b))}
		if d != want {
			t.Errorf("%s: data = %+v, want %+v", f.name, d, want)
		}
	}
}

// TestReadImageLargePNG is the acceptance case: a 6000 x 4000 PNG of more
// than 2 MiB comes back as a JPEG within 2560 px and 2 MiB.
func TestReadImageLargePNG(t *testing.T) {
	e := newBashEnv(t, "")
	src := pngBytes(t, noisyImage(6000, 4000))
	if len(src) <= 2<<20 {
		t.Fatalf("fixture is %d bytes; it must be over 2 MiB", len(src))
	}
	writeBytes(t, filepath.Join(e.root, "big.png"), src)
	r := e.readImage(filepath.Join(e.root, "big.png"), false, e.thread)
	if r.IsError {
		t.Fatalf("ReadImage = %+v", r.Structured)
	}
	got, mime := r.image(t)
	if mime != "image/jpeg" || len(got) > 2<<20 {
		t.Errorf("delivered %s of %d bytes, want image/jpeg of at most 2 MiB", mime, len(got))
	}
	m, err := jpeg.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatalf("delivered data is not a JPEG: %v", err)
	}
	b := m.Bounds()
	if max(b.Dx(), b.Dy()) > 2560 || b.Dx() != 2560 || b.Dy() != 1707 {
		t.Errorf("delivered %dx%d, want 2560x1707", b.Dx(), b.Dy())
	}
	d := r.Structured.Data
	if !d.Resized || d.Width != b.Dx() || d.Height != b.Dy() || d.SourceWidth != 6000 || d.SourceHeight != 4000 ||
		d.SourceBytes != int64(len(src)) || d.DeliveredBytes != len(got) || d.MIMEType != "image/jpeg" {
		t.Errorf("data = %+v", d)
	}
	t.Logf("source %d bytes; delivered %dx%d, %d bytes: %s", len(src), b.Dx(), b.Dy(), len(got), r.Structured.Output)
	if !strings.Contains(r.Structured.Output, "Scaled down from 6000x4000") {
		t.Errorf("output = %q, want it to say the image was scaled down", r.Structured.Output)
	}
}

// TestReadImageBombRefused: a header claiming 100000 x 100000 (30 GB of
// RGB) is refused before the decoder allocates anything for it.
func TestReadImageBombRefused(t *testing.T) {
	e := newBashEnv(t, "")
	writeBytes(t, filepath.Join(e.root, "bomb.png"), pngBombHeader(100000, 100000))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := e.readImage("bomb.png", false, e.thread)
	runtime.ReadMemStats(&after)
	if !r.IsError || r.Structured.Status != "invalid_input" || r.Structured.ErrorCode != "image_too_large" || r.imageBlocks() != 0 {
		t.Errorf("ReadImage(bomb) = %s %s %q, want invalid_input image_too_large", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output)
	}
	if !strings.Contains(r.Structured.Output, "100000x100000") {
		t.Errorf("message = %q, want the claimed size", r.Structured.Output)
	}
	grew := after.TotalAlloc - before.TotalAlloc
	if grew > 16<<20 {
		t.Errorf("the call allocated %d bytes, want < 16 MiB", grew)
	}
	t.Logf("refusing the bomb allocated %d bytes in the whole process", grew)
}

func TestReadImageRefusals(t *testing.T) {
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "x.png"), "this is text, whatever the name says\n")
	corrupt := pngBytes(t, noisyImage(64, 64))
	corrupt[len(corrupt)/2] ^= 0xFF
	writeBytes(t, filepath.Join(e.root, "corrupt.png"), corrupt)
	writeBytes(t, filepath.Join(e.root, "wide.webp"), webpLossless(3000, 10, 1, 2, 3))
	os.Mkdir(filepath.Join(e.root, "dir.png"), 0o755)
	outside := t.TempDir()
	writeBytes(t, filepath.Join(outside, "o.png"), pngBytes(t, noisyImage(4, 4)))
	os.Symlink(filepath.Join(outside, "o.png"), filepath.Join(e.root, "link.png"))
	tests := []struct {
		path, status, code, mention string
	}{
		{"x.png", "invalid_input", "unsupported_image", "not a JPEG, PNG, GIF or WebP"},
		{"corrupt.png", "invalid_input", "image_decode_failed", "could not be decoded"},
		{"wide.webp", "invalid_input", "image_needs_conversion", "convert it"},
		{"dir.png", "invalid_input", "invalid_tool_input", "not a regular file"},
		{"missing.png", "not_found", "file_not_found", "no such file"},
		{filepath.Join(outside, "o.png"), "denied", "file_operation_denied", "outside the workspace"},
		{"link.png", "denied", "file_operation_denied", "outside the workspace"},
		{"../o.png", "denied", "file_operation_denied", "outside the workspace"},
	}
	for _, tt := range tests {
		r := e.readImage(tt.path, false, e.thread)
		if !r.IsError || r.Structured.Status != tt.status || r.Structured.ErrorCode != tt.code ||
			!strings.Contains(r.Structured.Output, tt.mention) || r.imageBlocks() != 0 {
			t.Errorf("ReadImage(%s) = %s %s %q (%d images), want %s %s mentioning %q",
				tt.path, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, r.imageBlocks(), tt.status, tt.code, tt.mention)
		}
	}
}

func TestReadImageRepeatForceAndChange(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "shot.png")
	first := pngBytes(t, noisyImage(40, 30))
	writeBytes(t, path, first)
	if r := e.readImage("shot.png", false, e.thread); r.imageBlocks() != 1 {
		t.Fatalf("first read: %+v", r.Structured)
	}
	r := e.readImage(path, false, e.thread)
	d := r.Structured.Data
	rev := string(evidence.RevisionOf(first))
	if r.IsError || r.Structured.Status != "completed" || r.imageBlocks() != 0 || !d.Unchanged || d.DeliveredBytes != 0 ||
		d.Revision != rev || d.Width != 40 || d.Height != 30 {
		t.Fatalf("repeat = %+v (%d images), want a compact reference", r.Structured, r.imageBlocks())
	}
	for _, want := range []string{"unchanged since it was last shown", rev, "40x30", "force=true"} {
		if !strings.Contains(r.Structured.Output, want) {
			t.Errorf("repeat output = %q, want %q in it", r.Structured.Output, want)
		}
	}
	if len(r.Structured.Output) > 400 {
		t.Errorf("repeat output is %d bytes; a reference should be compact", len(r.Structured.Output))
	}
	if r := e.readImage(path, true, e.thread); r.imageBlocks() != 1 || r.Structured.Data.Unchanged {
		t.Errorf("force = %+v, want the image sent again", r.Structured)
	}
	second := pngBytes(t, noisyImage(41, 30))
	writeBytes(t, path, second)
	r = e.readImage(path, false, e.thread)
	if got, _ := r.image(t); !bytes.Equal(got, second) || r.Structured.Data.Revision == rev {
		t.Errorf("changed file = %+v, want the new image", r.Structured)
	}
}

// TestReadImageCachePerThread: a second thread on the same workspace
// session was never shown the image, so it gets the bytes, not a reference.
func TestReadImageCachePerThread(t *testing.T) {
	e := newBashEnv(t, "")
	writeBytes(t, filepath.Join(e.root, "a.png"), pngBytes(t, noisyImage(8, 8)))
	init := e.call(InitializeTool, map[string]any{"any_workspace_path": e.root, "thread_id": "other_thread"})
	if init.IsError {
		t.Fatalf("Initialize other thread: %+v", init.Structured)
	}
	e.readImage("a.png", false, e.thread)
	if r := e.readImage("a.png", false, "other_thread"); r.imageBlocks() != 1 {
		t.Errorf("other thread got %+v, want the image", r.Structured)
	}
	if r := e.readImage("a.png", false, "other_thread"); r.imageBlocks() != 0 || !r.Structured.Data.Unchanged {
		t.Errorf("other thread's repeat = %+v, want a reference", r.Structured)
	}
}

func TestReadImageCacheEvictsLeastRecentlyUsed(t *testing.T) {
	e := newBashEnv(t, "")
	name := func(i int) string { return fmt.Sprintf("img%02d.png", i) }
	for i := 0; i <= session.MaxImagesPerThread; i++ {
		writeBytes(t, filepath.Join(e.root, name(i)), pngBytes(t, image.NewGray(image.Rect(0, 0, i+1, 1))))
	}
	for i := 0; i < session.MaxImagesPerThread; i++ {
		e.readImage(name(i), false, e.thread)
	}
	e.readImage(name(0), false, e.thread)                          // now most recently used
	e.readImage(name(session.MaxImagesPerThread), false, e.thread) // evicts name(1)
	if r := e.readImage(name(0), false, e.thread); r.imageBlocks() != 0 {
		t.Errorf("%s was used recently but was evicted", name(0))
	}
	if r := e.readImage(name(1), false, e.thread); r.imageBlocks() != 1 {
		t.Errorf("%s should have been evicted and sent again", name(1))
	}
}

func TestReadImageListedReadOnly(t *testing.T) {
	e := newBashEnv(t, "")
	tools := listedTools(t, e.client)
	for _, tool := range tools {
		if tool.Name != ReadImageTool {
			continue
		}
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
			t.Errorf("ReadImage annotations = %+v, want read-only", a)
		}
		var schema struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil ||
			strings.Join(schema.Required, ",") != "file_path,thread_id,workspace_root" {
			t.Errorf("ReadImage required = %v (%v)", schema.Required, err)
		}
		checkStrictSchema(t, "ReadImage inputSchema", tool.InputSchema)
		if !bytes.Equal(compact(t, tool.OutputSchema), compact(t, mcp.EnvelopeOutputSchema)) {
			t.Errorf("ReadImage outputSchema is not the envelope schema")
		}
		for _, code := range []string{codeUnsupportedImage, codeImageTooLarge, codeImageNeedsConvert, codeImageDecodeFailed} {
			if !strings.Contains(tool.Description, code) {
				t.Errorf("description does not name the error code %s", code)
			}
		}
		return
	}
	t.Errorf("ReadImage is not listed")
}

// TestReadImageWaitsForASlotBeforeReading: while every slot is busy, a call
// reads nothing (each queued call would otherwise hold a source of up to
// 50 MiB); here it waits until its context ends, and a missing file is not
// even looked at.
func TestReadImageWaitsForASlotBeforeReading(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	root := canon(t, t.TempDir())
	sess, _, err := s.Attach(context.Background(), "alice", root, policy.Mode{}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	tool := &readImageTool{decodes: make(chan struct{}, maxImageDecodes)}
	for range maxImageDecodes {
		tool.decodes <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := tool.show(ctx, mcp.Caller{}, sess, &readImageInput{FilePath: "missing.png"})
	env, ok := res.StructuredContent.(mcp.Envelope)
	if !ok || env.ErrorCode == codeFileNotFound || !strings.Contains(env.Output, "cancel") {
		t.Errorf("ReadImage with every slot busy = %+v, want a cancellation before the file is looked at", res.StructuredContent)
	}
	// A free slot lets it through, and the slot is given back.
	<-tool.decodes
	res = tool.show(context.Background(), mcp.Caller{}, sess, &readImageInput{FilePath: "missing.png"})
	if env, ok := res.StructuredContent.(mcp.Envelope); !ok || env.ErrorCode != codeFileNotFound {
		t.Errorf("ReadImage with a free slot = %+v, want file_not_found", res.StructuredContent)
	}
	if n := len(tool.decodes); n != maxImageDecodes-1 {
		t.Errorf("%d slots busy after the call, want %d", n, maxImageDecodes-1)
	}
}
