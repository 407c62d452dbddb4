package image

import (
	stdimage "image"
	"image/color"
	"image/draw"
	"testing"
)

func TestResizeSolidStaysExact(t *testing.T) {
	c := color.NRGBA{R: 12, G: 200, B: 99, A: 255}
	for _, size := range [][4]int{{100, 60, 37, 23}, {7, 5, 7, 5}, {640, 480, 1, 1}, {50, 50, 80, 80}} {
		got := Resize(solid(size[0], size[1], c), size[2], size[3])
		if got.Bounds().Dx() != size[2] || got.Bounds().Dy() != size[3] {
			t.Fatalf("Resize to %dx%d = %v", size[2], size[3], got.Bounds())
		}
		for i := 0; i < len(got.Pix); i += 4 {
			if got.Pix[i] != 12 || got.Pix[i+1] != 200 || got.Pix[i+2] != 99 || got.Pix[i+3] != 255 {
				t.Fatalf("Resize %v: pixel %d = %v, want the solid colour", size, i/4, got.Pix[i:i+4])
			}
		}
	}
}

// TestResizeAveragesFineDetail: a one-pixel checkerboard shrunk by three
// must become flat grey, not a moiré of black and white (which a filter
// that skips source pixels would produce).
func TestResizeAveragesFineDetail(t *testing.T) {
	m := stdimage.NewGray(stdimage.Rect(0, 0, 300, 300))
	for y := 0; y < 300; y++ {
		for x := 0; x < 300; x++ {
			if (x+y)%2 == 0 {
				m.Pix[y*m.Stride+x] = 255
			}
		}
	}
	got := Resize(m, 100, 100)
	for y := 2; y < 98; y++ {
		for x := 2; x < 98; x++ {
			if v := int(got.Pix[got.PixOffset(x, y)]); v < 117 || v > 138 {
				t.Fatalf("pixel (%d,%d) = %d, want about 127", x, y, v)
			}
		}
	}
}

func TestResizeKeepsEdgesAndGradients(t *testing.T) {
	m := stdimage.NewGray(stdimage.Rect(0, 0, 400, 10))
	for x := 0; x < 400; x++ {
		for y := 0; y < 10; y++ {
			m.Pix[y*m.Stride+x] = uint8(x * 255 / 399)
		}
	}
	got := Resize(m, 100, 5)
	prev := -1
	for x := 0; x < 100; x++ {
		v := int(got.Pix[got.PixOffset(x, 2)])
		if v < prev {
			t.Fatalf("gradient not monotonic at %d: %d after %d", x, v, prev)
		}
		prev = v
	}
	if first, last := got.Pix[0], got.Pix[got.PixOffset(99, 0)]; first > 4 || last < 251 {
		t.Errorf("ends = %d, %d; want the source's black and white kept", first, last)
	}
}

func TestResizeCompositesOntoWhite(t *testing.T) {
	half := color.NRGBA{R: 255, A: 128}
	tests := []struct {
		name string
		img  stdimage.Image
	}{
		{"nrgba", solid(20, 20, half)},
		{"rgba", convert(solid(20, 20, half), func(r stdimage.Rectangle) draw.Image { return stdimage.NewRGBA(r) })},
		{"nrgba64", convert(solid(20, 20, half), func(r stdimage.Rectangle) draw.Image { return stdimage.NewNRGBA64(r) })},
		{"rgba64", convert(solid(20, 20, half), func(r stdimage.Rectangle) draw.Image { return stdimage.NewRGBA64(r) })},
		{"paletted", convert(solid(20, 20, half), func(r stdimage.Rectangle) draw.Image {
			return stdimage.NewPaletted(r, color.Palette{color.Transparent, half})
		})},
		{"generic", struct{ stdimage.Image }{solid(20, 20, half)}}, // hides the type: the At path
	}
	for _, tt := range tests {
		got := Resize(tt.img, 10, 10)
		p := got.Pix[got.PixOffset(5, 5):]
		want := [3]int{255, 127, 127}
		for c := range 3 {
			if abs(int(p[c])-want[c]) > 1 {
				t.Errorf("%s: pixel = %v, want %v over white", tt.name, p[:4], want)
				break
			}
		}
	}
}

func convert(src stdimage.Image, make func(stdimage.Rectangle) draw.Image) stdimage.Image {
	dst := make(src.Bounds())
	draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
	return dst
}

// TestRowLoadersMatchAt compares every fast path with the exact generic
// path through At, on sub-images with odd offsets.
func TestRowLoadersMatchAt(t *testing.T) {
	base := noisy(61, 47, 255)
	for i := 3; i < len(base.Pix); i += 16 {
		base.Pix[i] = uint8(i) // some translucency
	}
	rect := stdimage.Rect(3, 5, 58, 44)
	images := map[string]stdimage.Image{
		"nrgba":   base.SubImage(rect),
		"rgba":    convert(base, func(r stdimage.Rectangle) draw.Image { return stdimage.NewRGBA(r) }).(*stdimage.RGBA).SubImage(rect),
		"gray":    convert(base, func(r stdimage.Rectangle) draw.Image { return stdimage.NewGray(r) }).(*stdimage.Gray).SubImage(rect),
		"nrgba64": convert(base, func(r stdimage.Rectangle) draw.Image { return stdimage.NewNRGBA64(r) }).(*stdimage.NRGBA64).SubImage(rect),
	}
	for _, ratio := range []stdimage.YCbCrSubsampleRatio{stdimage.YCbCrSubsampleRatio444, stdimage.YCbCrSubsampleRatio422,
		stdimage.YCbCrSubsampleRatio420, stdimage.YCbCrSubsampleRatio440, stdimage.YCbCrSubsampleRatio411, stdimage.YCbCrSubsampleRatio410} {
		y := stdimage.NewYCbCr(base.Bounds(), ratio)
		for i := range y.Y {
			y.Y[i] = uint8(i * 7)
		}
		for i := range y.Cb {
			y.Cb[i], y.Cr[i] = uint8(i*13), uint8(255-i*5)
		}
		images["ycbcr"+ratio.String()] = y.SubImage(rect)
	}
	for name, img := range images {
		fast := rowLoader(img)
		slow := rowLoader(struct{ stdimage.Image }{img}) // hides the concrete type
		a, b := make([]uint8, 3*rect.Dx()), make([]uint8, 3*rect.Dx())
		for y := rect.Min.Y; y < rect.Max.Y; y++ {
			fast(y, a)
			slow(y, b)
			for i := range a {
				if abs(int(a[i])-int(b[i])) > 1 {
					t.Fatalf("%s: row %d sample %d = %d, At gives %d", name, y, i, a[i], b[i])
				}
			}
		}
	}
}

func TestFitLongEdge(t *testing.T) {
	tests := []struct{ w, h, edge, ww, wh int }{
		{6000, 4000, 2560, 2560, 1707},
		{4000, 6000, 2560, 1707, 2560},
		{2560, 100, 2560, 2560, 100},
		{100000, 1, 2560, 2560, 1},
		{300, 300, 100, 100, 100},
	}
	for _, tt := range tests {
		if w, h := fitLongEdge(tt.w, tt.h, tt.edge); w != tt.ww || h != tt.wh {
			t.Errorf("fitLongEdge(%d, %d, %d) = %d, %d, want %d, %d", tt.w, tt.h, tt.edge, w, h, tt.ww, tt.wh)
		}
	}
}
