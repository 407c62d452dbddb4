package vt

import "unicode/utf8"

// printASCII draws a run of printable ASCII bytes. It is the hot path for
// plain output: whole runs are copied into the line, with no width lookup,
// no decoding and no per-byte call, until the run reaches the last column.
func (t *Terminal) printASCII(run []byte) {
	if t.modes.insert || t.charsets.active() != charsetASCII {
		for _, b := range run {
			t.print(t.charsets.translate(b))
		}
		return
	}
	g := t.grid()
	for len(run) > 0 {
		if t.cur.wrapPending {
			t.wrap()
		}
		l := g[t.cur.row]
		x := t.cur.col
		n := min(len(run), t.cols-x)
		l.splitAt(x)
		for i, b := range run[:n] {
			l[x+i] = cell{r: rune(b)}
		}
		t.touch(t.cur.row, x+n)
		// A wide rune whose first half was just overwritten loses its tail.
		if x+n < t.cols && l[x+n].kind == cellTail {
			l[x+n] = cell{}
		}
		t.last = rune(run[n-1])
		run = run[n:]
		if x+n < t.cols {
			t.cur.col = x + n
			continue
		}
		t.cur.col = t.cols - 1
		if t.modes.autowrap {
			t.cur.wrapPending = true
			continue
		}
		// Without autowrap the rest of the run overwrites the last column
		// in turn; only its last byte stays.
		if len(run) > 0 {
			t.last = rune(run[len(run)-1])
			l[t.cols-1] = cell{r: t.last}
			t.touch(t.cur.row, t.cols)
			run = nil
		}
	}
}

// print draws one rune of any width at the cursor.
func (t *Terminal) print(r rune) {
	w := runeWidth(r)
	if w == 0 {
		t.combine(r)
		return
	}
	if w == 2 && t.cols < 2 {
		// A wide rune cannot fit a one-column screen; show that something
		// was there rather than overflow the grid.
		r, w = utf8.RuneError, 1
	}
	if t.cur.wrapPending {
		t.wrap()
	}
	if w == 2 && t.cur.col == t.cols-1 {
		// A wide rune never straddles the edge: it wraps whole, leaving the
		// last column as it was, or, without autowrap, lands one column
		// earlier.
		if t.modes.autowrap {
			t.wrap()
		} else {
			t.cur.col = t.cols - 2
		}
	}
	l := t.grid()[t.cur.row]
	x := t.cur.col
	if t.modes.insert {
		l.insert(x, w)
		t.touch(t.cur.row, t.cols)
	}
	l.splitAt(x)
	l.splitAt(x + w)
	if w == 1 {
		l[x] = cell{r: r}
	} else {
		l[x] = cell{r: r, kind: cellWide}
		l[x+1] = cell{kind: cellTail}
	}
	t.touch(t.cur.row, x+w)
	t.last = r
	if x+w < t.cols {
		t.cur.col = x + w
	} else {
		t.cur.col = t.cols - 1
		t.cur.wrapPending = t.modes.autowrap
	}
}

// combine attaches a zero-width rune to the cell before the cursor, or to
// the cell just written when a wrap is pending. With no cell before the
// cursor it is dropped.
func (t *Terminal) combine(r rune) {
	l := t.grid()[t.cur.row]
	x := t.cur.col
	if !t.cur.wrapPending {
		x--
	}
	if x < 0 {
		return
	}
	if l[x].kind == cellTail {
		x-- // the tail's own wide rune; x >= 1 by the cell invariant
	}
	l[x].addMark(r)
	t.touch(t.cur.row, x+1)
}

// wrap moves to the start of the next line before a rune that would not fit
// (with autowrap on; otherwise it only drops the pending state).
func (t *Terminal) wrap() {
	t.cur.wrapPending = false
	if !t.modes.autowrap {
		return
	}
	// The row goes on below: text output joins the two rows again.
	l := t.grid()[t.cur.row]
	l[len(l)-1].flags |= flagWrapped
	t.touch(t.cur.row, t.cols)
	t.cur.col = 0
	t.index()
}

// repeat is REP: the last printed rune n more times. n is capped at the
// screen's area so that one eight-byte sequence cannot cost a million cell
// writes; beyond the cap a real terminal would only push more lines of the
// same rune into the scrollback.
func (t *Terminal) repeat(n int) {
	if t.last == 0 {
		return
	}
	for range min(n, t.rows*t.cols) {
		t.print(t.last)
	}
}
