package image

import (
	stdimage "image"
	"image/color"
	"math"
)

// Resize returns src scaled to w x h as an opaque *image.RGBA, composited
// onto white (the delivered JPEG has no alpha channel, and white is what a
// viewer shows behind a transparent image on a light page).
//
// It is a separable filter with the Catmull-Rom cubic kernel, widened by the
// scale factor when shrinking so every source pixel contributes (the kernel
// then averages areas instead of skipping pixels, which is what keeps text
// and fine lines from aliasing). Compositing onto white is linear in the
// premultiplied samples, so it is done as each source row is loaded and the
// filter works on three channels.
//
// Memory stays small whatever the source: the horizontal pass runs one
// source row at a time into a ring of as many filtered rows as the vertical
// kernel spans, and the vertical pass writes the output from that ring.
// Scaling up works too but is never needed by Prepare.
func Resize(src stdimage.Image, w, h int) *stdimage.RGBA {
	if w <= 0 || h <= 0 {
		panic("image: Resize needs positive dimensions")
	}
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := stdimage.NewRGBA(stdimage.Rect(0, 0, w, h))
	if sw == 0 || sh == 0 {
		return dst
	}
	load := rowLoader(src)
	row := make([]uint8, 3*sw)
	if sw == w && sh == h {
		for y := 0; y < h; y++ {
			load(b.Min.Y+y, row)
			out := dst.Pix[y*dst.Stride : y*dst.Stride+4*w]
			for x, i := 0, 0; x < w; x, i = x+1, i+4 {
				out[i], out[i+1], out[i+2], out[i+3] = row[3*x], row[3*x+1], row[3*x+2], 0xFF
			}
		}
		return dst
	}
	hk := newKernel(sw, w)
	vk := newKernel(sh, h)
	span := vk.maxTaps()
	ring := make([]float32, span*3*w)
	next := 0 // the next source row (relative to b.Min.Y) to filter into the ring
	acc := make([]float32, 3*w)
	for y := 0; y < h; y++ {
		lo, weights := vk.taps(y)
		for ; next < lo+len(weights); next++ {
			load(b.Min.Y+next, row)
			slot := (next % span) * 3 * w
			hk.apply(row, ring[slot:slot+3*w])
		}
		clear(acc)
		for k, wt := range weights {
			slot := ((lo + k) % span) * 3 * w
			src := ring[slot : slot+3*w]
			for i := range acc {
				acc[i] += wt * src[i]
			}
		}
		out := dst.Pix[y*dst.Stride : y*dst.Stride+4*w]
		for x, i := 0, 0; x < w; x, i = x+1, i+4 {
			out[i] = clamp8(acc[3*x])
			out[i+1] = clamp8(acc[3*x+1])
			out[i+2] = clamp8(acc[3*x+2])
			out[i+3] = 0xFF
		}
	}
	return dst
}

func clamp8(v float32) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}

// kernel holds, for every output index, the first source index it reads
// and its normalized weights. Taps past an edge are dropped and the rest
// renormalized, so edges are neither darkened nor brightened.
type kernel struct {
	first   []int
	offsets []int // weights[offsets[i]:offsets[i+1]] belong to output i
	weights []float32
}

// catmullRom is the cubic convolution kernel with a = -0.5, support 2.
func catmullRom(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x < 1:
		return (1.5*x-2.5)*x*x + 1
	case x < 2:
		return ((-0.5*x+2.5)*x-4)*x + 2
	}
	return 0
}

func newKernel(in, out int) *kernel {
	scale := float64(in) / float64(out)
	stretch := max(scale, 1) // widen the kernel when shrinking
	support := 2 * stretch
	k := &kernel{first: make([]int, out), offsets: make([]int, out+1)}
	for o := 0; o < out; o++ {
		center := (float64(o)+0.5)*scale - 0.5
		lo := max(int(math.Floor(center-support))+1, 0)
		hi := min(int(math.Ceil(center+support))-1, in-1)
		start := len(k.weights)
		var sum float64
		for i := lo; i <= hi; i++ {
			wt := catmullRom((float64(i) - center) / stretch)
			k.weights = append(k.weights, float32(wt))
			sum += wt
		}
		if sum == 0 { // cannot happen for a positive support; keep the nearest pixel
			k.weights = append(k.weights[:start], 1)
			lo = min(max(int(math.Round(center)), 0), in-1)
			sum = 1
		}
		for i := start; i < len(k.weights); i++ {
			k.weights[i] = float32(float64(k.weights[i]) / sum)
		}
		k.first[o] = lo
		k.offsets[o+1] = len(k.weights)
	}
	return k
}

func (k *kernel) taps(o int) (first int, weights []float32) {
	return k.first[o], k.weights[k.offsets[o]:k.offsets[o+1]]
}

func (k *kernel) maxTaps() int {
	n := 1
	for o := range k.first {
		n = max(n, k.offsets[o+1]-k.offsets[o])
	}
	return n
}

// apply filters one RGB row horizontally into out (3 floats per pixel).
func (k *kernel) apply(row []uint8, out []float32) {
	for o := range k.first {
		first, weights := k.taps(o)
		var r, g, b float32
		src := row[3*first : 3*(first+len(weights))]
		for _, wt := range weights {
			p := src[:3:3] // one bounds check per tap
			r += wt * float32(p[0])
			g += wt * float32(p[1])
			b += wt * float32(p[2])
			src = src[3:]
		}
		out[3*o], out[3*o+1], out[3*o+2] = r, g, b
	}
}

// rowLoader returns a function that writes row y of src as 8-bit RGB
// composited onto white. The common decoder outputs have fast paths; any
// other image goes through At, which is slower but exact.
func rowLoader(src stdimage.Image) func(y int, dst []uint8) {
	b := src.Bounds()
	w := b.Dx()
	switch m := src.(type) {
	case *stdimage.RGBA:
		return func(y int, dst []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				s := p[4*x : 4*x+4 : 4*x+4]
				bg := 255 - s[3] // premultiplied: c + (255-a)*255/255
				dst[3*x], dst[3*x+1], dst[3*x+2] = addSat(s[0], bg), addSat(s[1], bg), addSat(s[2], bg)
			}
		}
	case *stdimage.NRGBA:
		return func(y int, dst []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				s := p[4*x : 4*x+4 : 4*x+4]
				a := uint32(s[3])
				if a == 0xFF {
					dst[3*x], dst[3*x+1], dst[3*x+2] = s[0], s[1], s[2]
					continue
				}
				dst[3*x], dst[3*x+1], dst[3*x+2] = overWhite8(s[0], a), overWhite8(s[1], a), overWhite8(s[2], a)
			}
		}
	case *stdimage.RGBA64:
		return func(y int, dst []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				s := p[8*x : 8*x+8 : 8*x+8]
				bg := 0xFFFF - be16(s[6:])
				dst[3*x], dst[3*x+1], dst[3*x+2] = to8(be16(s[0:])+bg), to8(be16(s[2:])+bg), to8(be16(s[4:])+bg)
			}
		}
	case *stdimage.NRGBA64:
		return func(y int, dst []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				s := p[8*x : 8*x+8 : 8*x+8]
				a := be16(s[6:])
				bg := 0xFFFF - a
				dst[3*x] = to8(be16(s[0:])*a/0xFFFF + bg)
				dst[3*x+1] = to8(be16(s[2:])*a/0xFFFF + bg)
				dst[3*x+2] = to8(be16(s[4:])*a/0xFFFF + bg)
			}
		}
	case *stdimage.Gray:
		return func(y int, dst []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				dst[3*x], dst[3*x+1], dst[3*x+2] = p[x], p[x], p[x]
			}
		}
	case *stdimage.Paletted:
		var lut [256][3]uint8
		for i := range lut {
			c := color.Color(color.Black) // out-of-range indices, as At renders them
			if i < len(m.Palette) {
				c = m.Palette[i]
			}
			r, g, bl, a := c.RGBA()
			bg := 0xFFFF - a
			lut[i] = [3]uint8{to8(r + bg), to8(g + bg), to8(bl + bg)}
		}
		return func(y int, dst []uint8) {
			p := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				c := &lut[p[x]]
				dst[3*x], dst[3*x+1], dst[3*x+2] = c[0], c[1], c[2]
			}
		}
	case *gifScreen:
		inner := rowLoader(m.frame)
		fr := m.frame.Rect
		span := make([]uint8, 3*fr.Dx())
		return func(y int, dst []uint8) {
			for i := range dst[:3*w] {
				dst[i] = 0xFF
			}
			if y < fr.Min.Y || y >= fr.Max.Y {
				return
			}
			inner(y, span)
			copy(dst[3*(fr.Min.X-b.Min.X):], span)
		}
	case *stdimage.YCbCr:
		hs, vs := chromaShift(m.SubsampleRatio)
		return func(y int, dst []uint8) {
			yp := m.Y[m.YOffset(b.Min.X, y):]
			// Chroma rows and columns are counted from the image origin,
			// as YCbCr.COffset does.
			cy := (y >> vs) - (m.Rect.Min.Y >> vs)
			cbase := cy * m.CStride
			for x := 0; x < w; x++ {
				ax := b.Min.X + x
				ci := cbase + (ax >> hs) - (m.Rect.Min.X >> hs)
				dst[3*x], dst[3*x+1], dst[3*x+2] = ycbcrToRGB(yp[x], m.Cb[ci], m.Cr[ci])
			}
		}
	}
	return func(y int, dst []uint8) {
		for x := 0; x < w; x++ {
			r, g, bl, a := src.At(b.Min.X+x, y).RGBA()
			bg := 0xFFFF - a
			dst[3*x], dst[3*x+1], dst[3*x+2] = to8(r+bg), to8(g+bg), to8(bl+bg)
		}
	}
}

// addSat adds without wrapping, for samples that break the premultiplied
// invariant c <= a.
func addSat(c, bg uint8) uint8 { return uint8(min(uint16(c)+uint16(bg), 0xFF)) }

func be16(b []uint8) uint32 { return uint32(b[0])<<8 | uint32(b[1]) }

// to8 rounds a 16-bit sample to 8 bits.
func to8(v uint32) uint8 { return uint8((min(v, 0xFFFF)*0xFF + 0x7FFF) / 0xFFFF) }

// overWhite8 composites a non-premultiplied 8-bit sample with alpha a onto
// white, rounding to nearest.
func overWhite8(c uint8, a uint32) uint8 {
	return uint8((uint32(c)*a + 255*(255-a) + 127) / 255)
}

// chromaShift gives the horizontal and vertical chroma subsampling of a
// YCbCr image as shifts.
func chromaShift(r stdimage.YCbCrSubsampleRatio) (h, v uint) {
	switch r {
	case stdimage.YCbCrSubsampleRatio422:
		return 1, 0
	case stdimage.YCbCrSubsampleRatio420:
		return 1, 1
	case stdimage.YCbCrSubsampleRatio440:
		return 0, 1
	case stdimage.YCbCrSubsampleRatio411:
		return 2, 0
	case stdimage.YCbCrSubsampleRatio410:
		return 2, 1
	}
	return 0, 0
}

// ycbcrToRGB converts full-range (JFIF) Y'CbCr to RGB in 16.16 fixed point:
// R = Y + 1.402 Cr', G = Y - 0.344136 Cb' - 0.714136 Cr', B = Y + 1.772 Cb'.
func ycbcrToRGB(y, cb, cr uint8) (uint8, uint8, uint8) {
	yy := int32(y)<<16 + 1<<15
	cb1, cr1 := int32(cb)-128, int32(cr)-128
	r := yy + 91881*cr1
	g := yy - 22554*cb1 - 46802*cr1
	b := yy + 116130*cb1
	return sat8(r), sat8(g), sat8(b)
}

func sat8(v int32) uint8 {
	v >>= 16
	switch {
	case v < 0:
		return 0
	case v > 255:
		return 255
	}
	return uint8(v)
}
