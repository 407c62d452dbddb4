package image

import (
	"encoding/binary"
	stdimage "image"
)

// exifOrientationTag is the TIFF tag of the orientation (EXIF 2.3, 4.6.4).
const exifOrientationTag = 0x0112

// jpegOrientation returns the EXIF orientation (1 to 8) of a JPEG, 1 when
// there is none or it cannot be read. Passing a JPEG through keeps its EXIF
// for the client to honour; re-encoding drops it, so Prepare applies the
// orientation to the pixels instead and a phone photograph stays upright.
func jpegOrientation(b []byte) int {
	i := 2 // after SOI
	for i+4 <= len(b) && b[i] == 0xFF {
		m := b[i+1]
		if m == 0xD9 || m == 0xDA { // EOI, SOS: no metadata after this
			return 1
		}
		n := int(binary.BigEndian.Uint16(b[i+2 : i+4]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		if seg := b[i+4 : i+2+n]; m == 0xE1 && len(seg) > 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads the orientation entry of IFD0 of a TIFF structure.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int64(bo.Uint32(t[4:8]))
	if ifd < 8 || ifd+2 > int64(len(t)) {
		return 1
	}
	count := int64(bo.Uint16(t[ifd:]))
	for k := int64(0); k < count; k++ {
		e := ifd + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 1
		}
		const typeShort = 3
		if bo.Uint16(t[e:]) == exifOrientationTag && bo.Uint16(t[e+2:]) == typeShort {
			if o := int(bo.Uint16(t[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

// orient returns m transformed by EXIF orientation o, so that it displays
// upright without metadata. Orientations 5 to 8 swap width and height.
func orient(m *stdimage.RGBA, o int) *stdimage.RGBA {
	if o <= 1 || o > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := stdimage.NewRGBA(stdimage.Rect(0, 0, dw, dh))
	for y := 0; y < dh; y++ {
		for x := 0; x < dw; x++ {
			var sx, sy int
			switch o {
			case 2: // mirrored
				sx, sy = w-1-x, y
			case 3: // upside down
				sx, sy = w-1-x, h-1-y
			case 4: // mirrored upside down
				sx, sy = x, h-1-y
			case 5: // transposed
				sx, sy = y, x
			case 6: // stored rotated 90 degrees counter-clockwise: turn clockwise
				sx, sy = y, h-1-x
			case 7: // transversed
				sx, sy = w-1-y, h-1-x
			case 8: // stored rotated 90 degrees clockwise: turn counter-clockwise
				sx, sy = w-1-y, x
			}
			s := m.PixOffset(m.Rect.Min.X+sx, m.Rect.Min.Y+sy)
			copy(dst.Pix[dst.PixOffset(x, y):dst.PixOffset(x, y)+4], m.Pix[s:s+4])
		}
	}
	return dst
}
