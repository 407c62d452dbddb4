package vt

import (
	"testing"
	"unicode"
)

func TestRuneWidth(t *testing.T) {
	tests := []struct {
		r    rune
		want int
	}{
		{'a', 1},
		{'é', 1},
		{0x00ad, 1}, // soft hyphen, shown by glibc and xterm
		{0x0301, 0}, // combining acute
		{0x200d, 0}, // zero width joiner
		{0xfe0f, 0}, // variation selector 16
		{0x1160, 0}, // Hangul medial jamo
		{'日', 2},
		{'한', 2},
		{'！', 2},    // fullwidth exclamation mark
		{0x3099, 0}, // combining kana voiced mark, inside a wide block
		{'🙂', 2},
		{'❤', 1}, // text presentation by default
		{0x1f1fa, 1},
		{0x1fa75, 2},  // Unicode 15 emoji
		{0x2a6d6, 2},  // CJK extension B
		{0x3fffd, 2},  // plane 3, unassigned but wide
		{'─', 1},      // box drawing, ambiguous
		{0xfffd, 1},   // replacement character
		{0x10ffff, 1}, // unassigned
	}
	for _, tt := range tests {
		if got := runeWidth(tt.r); got != tt.want {
			t.Errorf("runeWidth(%U) = %d, want %d", tt.r, got, tt.want)
		}
	}

	// runeWidth takes shortcuts; it must still agree with the definition
	// (zero-width runes first, then the wide ranges) on every rune.
	for r := rune(0x20); r <= unicode.MaxRune; r++ {
		if r >= 0x7f && r < 0xa0 {
			continue // controls never reach runeWidth
		}
		want := 1
		switch {
		case r >= 0x300 && isZeroWidth(r):
			want = 0
		case inRanges(r, wideRanges[:]):
			want = 2
		}
		if got := runeWidth(r); got != want {
			t.Errorf("runeWidth(%U) = %d, want %d by the definition", r, got, want)
		}
	}
}

func TestWideRangesSorted(t *testing.T) {
	for i, rg := range wideRanges {
		if rg.lo > rg.hi {
			t.Errorf("wideRanges[%d] = %U..%U is empty", i, rg.lo, rg.hi)
		}
		if i > 0 && rg.lo <= wideRanges[i-1].hi+1 {
			t.Errorf("wideRanges[%d] = %U..%U overlaps or touches the one before", i, rg.lo, rg.hi)
		}
	}
}
