package vt

import "slices"

// The screen operations below act on the visible grid, the main or the
// alternate one. They keep the cursor inside the screen and never touch
// the scrollback except where a line leaves the top of the whole main
// screen.

// moveTo sets the cursor to an absolute screen position, clamped to the
// screen. Every explicit move cancels a pending wrap.
func (t *Terminal) moveTo(row, col int) {
	t.cur = cursor{
		row: min(max(row, 0), t.rows-1),
		col: min(max(col, 0), t.cols-1),
	}
}

// home is where CUP with no parameters goes: the top left of the screen,
// or of the scroll region in origin mode.
func (t *Terminal) home() {
	if t.modes.origin {
		t.moveTo(t.top, 0)
	} else {
		t.moveTo(0, 0)
	}
}

// index moves the cursor down one row, scrolling the region up when it is
// on the region's bottom row (IND, LF, VT, FF). Below the region it stops
// at the screen's last row.
func (t *Terminal) index() {
	t.cur.wrapPending = false
	switch {
	case t.cur.row == t.bottom:
		t.scrollUp(t.top, t.bottom, 1)
	case t.cur.row < t.rows-1:
		t.cur.row++
	}
}

// reverseIndex moves the cursor up one row, scrolling the region down when
// it is on the region's top row (RI).
func (t *Terminal) reverseIndex() {
	t.cur.wrapPending = false
	switch {
	case t.cur.row == t.top:
		t.scrollDown(t.top, t.bottom, 1)
	case t.cur.row > 0:
		t.cur.row--
	}
}

// scrollUp scrolls rows top..bottom up by n (LF at the bottom, IND, SU).
// When those rows are the whole main screen the lines that leave go to the
// scrollback; inside a narrower region, or on the alternate screen, they
// are gone, as on a real terminal.
func (t *Terminal) scrollUp(top, bottom, n int) {
	if !t.altActive && top == 0 && bottom == t.rows-1 {
		for i, l := range t.main[:min(n, t.rows)] {
			t.scrollback.push(l, t.mainUsed[i])
		}
	}
	t.shiftUp(top, bottom, n)
}

// shiftUp moves rows top..bottom up by n, discarding the n rows that leave
// and blanking the n that enter at the bottom (DL, and scrollUp).
func (t *Terminal) shiftUp(top, bottom, n int) {
	region := t.grid()[top : bottom+1]
	n = min(n, len(region))
	if n <= 0 {
		return
	}
	rotateLeft(region, n)
	if t.altActive {
		for _, l := range region[len(region)-n:] {
			clear(l)
		}
		return
	}
	used := t.mainUsed[top : bottom+1]
	rotateLeft(used, n)
	t.clearMain(region, used, len(region)-n, len(region))
}

// clearMain blanks region[from:to] of the main grid, whose bounds are
// used: the cells past a row's bound are blank already.
func (t *Terminal) clearMain(region []line, used []int, from, to int) {
	for k := from; k < to; k++ {
		clear(region[k][:used[k]])
		used[k] = 0
	}
}

// rotateLeft moves the first n elements of s to its end.
func rotateLeft[E any](s []E, n int) {
	if n == 1 {
		// The common case, one LF at the bottom of the screen.
		first := s[0]
		copy(s, s[1:])
		s[len(s)-1] = first
		return
	}
	slices.Reverse(s[:n])
	slices.Reverse(s[n:])
	slices.Reverse(s)
}

// scrollDown moves rows top..bottom down by n, discarding the n rows that
// leave at the bottom and blanking the n that enter at the top (RI, SD,
// IL). Nothing comes back from the scrollback.
func (t *Terminal) scrollDown(top, bottom, n int) {
	region := t.grid()[top : bottom+1]
	n = min(n, len(region))
	if n <= 0 {
		return
	}
	rotateLeft(region, len(region)-n)
	if t.altActive {
		for _, l := range region[:n] {
			clear(l)
		}
		return
	}
	used := t.mainUsed[top : bottom+1]
	rotateLeft(used, len(used)-n)
	t.clearMain(region, used, 0, n)
}

// eraseDisplay is ED (and DECSED, since cells carry no protection).
func (t *Terminal) eraseDisplay(mode int) {
	g := t.grid()
	row, col := t.cur.row, t.cur.col
	switch mode {
	case 0: // cursor to end of screen
		g[row].erase(col, t.cols)
		for _, l := range g[row+1:] {
			clear(l)
		}
	case 1: // start of screen to cursor, inclusive
		for _, l := range g[:row] {
			clear(l)
		}
		g[row].erase(0, col+1)
	case 2:
		for _, l := range g {
			clear(l)
		}
	case 3: // xterm: the scrollback only
		t.scrollback.clear()
		return
	default:
		return
	}
	t.cur.wrapPending = false
}

// eraseLine is EL (and DECSEL).
func (t *Terminal) eraseLine(mode int) {
	l := t.grid()[t.cur.row]
	switch mode {
	case 0:
		l.erase(t.cur.col, t.cols)
	case 1:
		l.erase(0, t.cur.col+1)
	case 2:
		clear(l)
	default:
		return
	}
	t.cur.wrapPending = false
}

// insertLines is IL: n blank lines at the cursor row, pushing the rows
// below it down inside the scroll region. Outside the region it does
// nothing, as on a VT100.
func (t *Terminal) insertLines(n int) {
	if t.cur.row < t.top || t.cur.row > t.bottom {
		return
	}
	t.scrollDown(t.cur.row, t.bottom, n)
	t.cur.col, t.cur.wrapPending = 0, false
}

// deleteLines is DL: n lines at the cursor row go, the rows below move up
// and blank lines enter at the region's bottom. Deleted lines never reach
// the scrollback.
func (t *Terminal) deleteLines(n int) {
	if t.cur.row < t.top || t.cur.row > t.bottom {
		return
	}
	t.shiftUp(t.cur.row, t.bottom, n)
	t.cur.col, t.cur.wrapPending = 0, false
}

// setScrollRegion is DECSTBM with 1-based rows (0 meaning the default).
// A region must span at least two rows; otherwise the request is ignored,
// as xterm does. The cursor goes home.
func (t *Terminal) setScrollRegion(top, bottom int) {
	if top == 0 {
		top = 1
	}
	if bottom == 0 || bottom > t.rows {
		bottom = t.rows
	}
	if top >= bottom {
		return
	}
	t.top, t.bottom = top-1, bottom-1
	t.home()
}

// screenIndex selects the DECSC slot of the visible screen.
func (t *Terminal) screenIndex() int {
	if t.altActive {
		return 1
	}
	return 0
}

// saveCursor is DECSC (and CSI s, mode 1048).
func (t *Terminal) saveCursor() {
	t.saved[t.screenIndex()] = savedCursor{cursor: t.cur, origin: t.modes.origin, charsets: t.charsets, valid: true}
}

// restoreCursor is DECRC. With nothing saved it homes the cursor and
// resets origin mode and the character sets, as xterm does.
func (t *Terminal) restoreCursor() {
	s := t.saved[t.screenIndex()]
	t.moveTo(s.row, s.col)
	t.cur.wrapPending = s.wrapPending && t.cur.col == t.cols-1
	t.modes.origin = s.origin
	t.charsets = s.charsets
}

// enterAlt shows the alternate screen, allocating it on first use and
// blanking it if clearAlt is set.
func (t *Terminal) enterAlt(clearAlt bool) {
	if t.alt == nil {
		t.alt = newGrid(t.rows, t.cols, nil)
	} else if clearAlt {
		for _, l := range t.alt {
			clear(l)
		}
	}
	t.altActive = true
	t.cur.wrapPending = false
}

// leaveAlt shows the main screen again, blanking the alternate one first
// if clearAlt is set.
func (t *Terminal) leaveAlt(clearAlt bool) {
	if !t.altActive {
		return
	}
	if clearAlt {
		for _, l := range t.alt {
			clear(l)
		}
	}
	t.altActive = false
	t.cur.wrapPending = false
}
