package image

import (
	"bytes"
	"encoding/binary"
	stdimage "image"
	"image/color"
	"image/jpeg"
	"testing"
)

// withOrientation inserts an APP1 Exif segment carrying orientation o right
// after the SOI of a JPEG, in the given byte order.
func withOrientation(jpg []byte, o uint16, bo binary.AppendByteOrder) []byte {
	tiff := []byte("II*\x00")
	if bo == binary.AppendByteOrder(binary.BigEndian) {
		tiff = []byte("MM\x00*")
	}
	tiff = bo.AppendUint32(tiff, 8)      // IFD0 right after the header
	tiff = bo.AppendUint16(tiff, 2)      // two entries
	tiff = bo.AppendUint16(tiff, 0x010F) // Make, ASCII, to be skipped
	tiff = bo.AppendUint16(tiff, 2)
	tiff = bo.AppendUint32(tiff, 4)
	tiff = append(tiff, 'G', 'o', 0, 0)
	tiff = bo.AppendUint16(tiff, exifOrientationTag)
	tiff = bo.AppendUint16(tiff, 3)
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, o)
	tiff = append(tiff, 0, 0)
	tiff = bo.AppendUint32(tiff, 0) // no next IFD
	seg := append([]byte("Exif\x00\x00"), tiff...)
	out := []byte{0xFF, 0xD8, 0xFF, 0xE1}
	out = binary.BigEndian.AppendUint16(out, uint16(len(seg)+2))
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func TestJPEGOrientation(t *testing.T) {
	plain := encodeJPEG(t, solid(8, 8, color.White), 80)
	if got := jpegOrientation(plain); got != 1 {
		t.Errorf("no EXIF: orientation %d, want 1", got)
	}
	for o := uint16(1); o <= 8; o++ {
		for _, bo := range []binary.AppendByteOrder{binary.LittleEndian, binary.BigEndian} {
			if got := jpegOrientation(withOrientation(plain, o, bo)); got != int(o) {
				t.Errorf("orientation %d (%v) read as %d", o, bo, got)
			}
		}
	}
	if got := jpegOrientation(withOrientation(plain, 9, binary.BigEndian)); got != 1 {
		t.Errorf("orientation 9 read as %d, want 1 (invalid values ignored)", got)
	}
}

// TestOrientAllEight places a marked pixel at the stored top-left and
// checks where each orientation puts it.
func TestOrientAllEight(t *testing.T) {
	m := stdimage.NewRGBA(stdimage.Rect(0, 0, 3, 2))
	m.Pix[0] = 200 // red at stored (0, 0)
	want := map[int][2]int{1: {0, 0}, 2: {2, 0}, 3: {2, 1}, 4: {0, 1}, 5: {0, 0}, 6: {1, 0}, 7: {1, 2}, 8: {0, 2}}
	for o := 1; o <= 8; o++ {
		got := orient(m, o)
		dx, dy := 3, 2
		if o >= 5 {
			dx, dy = 2, 3
		}
		if got.Rect.Dx() != dx || got.Rect.Dy() != dy {
			t.Errorf("orient %d: size %v", o, got.Rect)
			continue
		}
		p := want[o]
		if got.Pix[got.PixOffset(p[0], p[1])] != 200 {
			t.Errorf("orient %d: marked pixel not at %v", o, p)
		}
	}
}

// TestPrepareAppliesOrientation: a landscape JPEG stored with orientation 6
// (a phone held upright) comes back re-encoded as portrait, left side on top.
func TestPrepareAppliesOrientation(t *testing.T) {
	m := stdimage.NewRGBA(stdimage.Rect(0, 0, 300, 100))
	for y := 0; y < 100; y++ {
		for x := 0; x < 300; x++ {
			c := color.RGBA{0, 0, 255, 255}
			if x < 150 {
				c = color.RGBA{255, 0, 0, 255}
			}
			m.Set(x, y, c)
		}
	}
	src := withOrientation(encodeJPEG(t, m, 90), 6, binary.BigEndian)
	d, err := Prepare(src, &Options{MaxLongEdge: 150})
	if err != nil {
		t.Fatal(err)
	}
	if d.Width != 50 || d.Height != 150 || !d.Resized {
		t.Fatalf("delivered %dx%d resized %v, want 50x150", d.Width, d.Height, d.Resized)
	}
	out, err := jpeg.Decode(bytes.NewReader(d.Data))
	if err != nil {
		t.Fatal(err)
	}
	top, bottom := out.At(25, 10), out.At(25, 140)
	if r, _, b, _ := top.RGBA(); r>>8 < 200 || b>>8 > 60 {
		t.Errorf("top = %v, want red (the stored left side)", top)
	}
	if r, _, b, _ := bottom.RGBA(); r>>8 > 60 || b>>8 < 200 {
		t.Errorf("bottom = %v, want blue", bottom)
	}
}
