package image

import (
	stdimage "image"
	"testing"
)

// BenchmarkResize6000x4000 shrinks a 24 Mpx photograph-sized image to the
// delivery long edge, from the two pixel types the decoders return most:
// *image.YCbCr (JPEG) and *image.RGBA (8-bit truecolor PNG).
func BenchmarkResize6000x4000(b *testing.B) {
	src := noisy(6000, 4000, 32)
	rgba := stdimage.NewRGBA(src.Rect)
	copy(rgba.Pix, src.Pix) // opaque, so the same bytes
	ycc := stdimage.NewYCbCr(src.Rect, stdimage.YCbCrSubsampleRatio420)
	for i := range ycc.Y {
		ycc.Y[i] = uint8(i)
	}
	w, h := fitLongEdge(6000, 4000, MaxLongEdge)
	for _, bc := range []struct {
		name string
		img  stdimage.Image
	}{{"YCbCr420", ycc}, {"RGBA", rgba}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Resize(bc.img, w, h)
			}
		})
	}
}

// BenchmarkPrepare6000x4000PNG is the whole path for a large PNG: inspect,
// decode, resize and JPEG encoding.
func BenchmarkPrepare6000x4000PNG(b *testing.B) {
	src := encodePNG(b, noisy(6000, 4000, 16))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Prepare(src, nil); err != nil {
			b.Fatal(err)
		}
	}
}
