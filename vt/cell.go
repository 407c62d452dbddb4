package vt

import (
	"slices"
	"unicode/utf8"
)

// cell is one grid position. The zero value is a blank, so erasing is
// clearing memory. A wide rune occupies its cell (cellWide) and the one to
// its right (cellTail, with no rune of its own).
//
// Invariant: in a line, every cellWide cell is followed by a cellTail cell
// and every cellTail cell follows a cellWide cell; nmarks <=
// MaxCombiningMarks.
type cell struct {
	r      rune // 0 for a blank or a tail
	marks  [MaxCombiningMarks]rune
	nmarks uint8
	kind   cellKind
	flags  cellFlags
}

// cellFlags remember what the bytes said beyond the drawn rune, so text
// output can give back the logical line: whether the row went on by an
// autowrap, and where a tab skipped over blank cells. Any write of a
// rune or an erase replaces the cell and with it the flags.
type cellFlags uint8

const (
	// flagWrapped, on a row's last cell, says that the row ended by an
	// autowrap: the next row continues the same logical line.
	flagWrapped cellFlags = 1 << iota
	// flagTab is the blank cell where a horizontal tab started.
	flagTab
	// flagTabFill is a blank cell a tab moved over after its first.
	flagTabFill
)

type cellKind uint8

const (
	cellNarrow cellKind = iota
	cellWide
	cellTail
)

// line is one row of cells; its length is the screen's column count.
type line []cell

// blank reports a cell that renders as a space: a fresh cell, or a space
// without marks.
func (c *cell) blank() bool {
	return c.kind == cellNarrow && c.nmarks == 0 && (c.r == 0 || c.r == ' ')
}

// addMark keeps a zero-width rune on c, dropping it beyond
// MaxCombiningMarks.
func (c *cell) addMark(r rune) {
	if int(c.nmarks) < MaxCombiningMarks {
		c.marks[c.nmarks] = r
		c.nmarks++
	}
}

// appendText renders l to dst: blanks as spaces, a wide rune once, marks
// after their base; trailing blanks are left out. It runs for every line
// that scrolls into the scrollback, so ASCII cells take a short path.
func (l line) appendText(dst []byte) []byte {
	end := len(l)
	// Blanks and tails both have no marks and a rune of 0 or ' '; a tail
	// at the end stops at its wide rune, which has neither.
	for end > 0 && l[end-1].nmarks == 0 && (l[end-1].r == 0 || l[end-1].r == ' ') {
		end--
	}
	dst = slices.Grow(dst, end)
	for i := range l[:end] {
		c := &l[i]
		if c.nmarks == 0 && c.r < utf8.RuneSelf {
			switch {
			case c.r != 0:
				dst = append(dst, byte(c.r))
			case c.kind != cellTail:
				dst = append(dst, ' ')
			}
			continue
		}
		if c.r == 0 {
			dst = append(dst, ' ') // a blank carrying marks
		} else {
			dst = utf8.AppendRune(dst, c.r)
		}
		for _, m := range c.marks[:c.nmarks] {
			dst = utf8.AppendRune(dst, m)
		}
	}
	return dst
}

// wrapped reports a row that an autowrap continued on the next row.
func (l line) wrapped() bool {
	return len(l) > 0 && l[len(l)-1].flags&flagWrapped != 0
}

// appendLogical renders l as part of a logical line: like appendText, but
// a tab is given back as '\t' (the blank cells it skipped render nothing)
// and a row continued by an autowrap keeps its trailing blanks, which are
// real spaces in the middle of the line. Cells from used on are known to be
// trailing blanks and are not looked at (len(l) when nothing is known).
func (l line) appendLogical(dst []byte, used int) []byte {
	end := len(l)
	if !l.wrapped() {
		end = min(max(used, 0), end)
		for end > 0 && l[end-1].nmarks == 0 && (l[end-1].r == 0 || l[end-1].r == ' ') && l[end-1].flags&flagTab == 0 {
			end--
		}
	}
	dst = slices.Grow(dst, end)
	for i := range l[:end] {
		c := &l[i]
		if c.nmarks == 0 && c.r < utf8.RuneSelf {
			switch {
			case c.r != 0:
				dst = append(dst, byte(c.r))
			case c.flags&flagTab != 0:
				dst = append(dst, '\t')
			case c.flags&flagTabFill != 0, c.kind == cellTail:
			default:
				dst = append(dst, ' ')
			}
			continue
		}
		if c.r == 0 {
			dst = append(dst, ' ')
		} else {
			dst = utf8.AppendRune(dst, c.r)
		}
		for _, m := range c.marks[:c.nmarks] {
			dst = utf8.AppendRune(dst, m)
		}
	}
	return dst
}

// isBlank reports a line with nothing to render.
func (l line) isBlank() bool {
	for i := range l {
		if !l[i].blank() && l[i].kind != cellTail {
			return false
		}
	}
	return true
}

// erase blanks cells [from, to), first blanking the other half of any wide
// rune the range cuts through, so the invariant on cell holds.
func (l line) erase(from, to int) {
	from, to = max(from, 0), min(to, len(l))
	if from >= to {
		return
	}
	l.splitAt(from)
	l.splitAt(to)
	clear(l[from:to])
}

// splitAt blanks a wide rune that straddles the boundary before column x,
// so that cells left and right of it can change independently.
func (l line) splitAt(x int) {
	if x > 0 && x < len(l) && l[x].kind == cellTail {
		l[x-1] = cell{}
		l[x] = cell{}
	}
}

// insert shifts cells from x right by n, dropping what passes the end, and
// blanks the n cells opened at x.
func (l line) insert(x, n int) {
	if x < 0 || x >= len(l) || n <= 0 {
		return
	}
	n = min(n, len(l)-x)
	l.splitAt(x)
	l.splitAt(len(l) - n) // the rune cut by the right edge
	copy(l[x+n:], l[x:len(l)-n])
	clear(l[x : x+n])
}

// delete removes n cells at x, shifting the rest left and blanking the end.
func (l line) delete(x, n int) {
	if x < 0 || x >= len(l) || n <= 0 {
		return
	}
	n = min(n, len(l)-x)
	l.splitAt(x)
	l.splitAt(x + n)
	copy(l[x:], l[x+n:])
	clear(l[len(l)-n:])
}

// fit returns l with exactly cols cells, reusing l's array when it can. A
// wide rune cut by a narrower edge is blanked.
func (l line) fit(cols int) line {
	if cols <= len(l) {
		l = l[:cols]
		if cols > 0 && l[cols-1].kind == cellWide {
			l[cols-1] = cell{}
		}
		return l
	}
	if cols <= cap(l) {
		n := len(l)
		l = l[:cols]
		clear(l[n:])
		return l
	}
	nl := make(line, cols)
	copy(nl, l)
	return nl
}
