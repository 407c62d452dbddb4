package vt

// CSI sequences (ECMA-48 and xterm's ctlseqs). What is not handled here is
// consumed and ignored: SGR, since cells carry no attributes; every query
// (DA, DSR, DECRQM, XTVERSION...), since a Terminal never answers; and
// window, cursor-style and keyboard settings, since they draw nothing.

// arg returns parameter i, or def when it is missing or 0 (ECMA-48: a
// zero parameter means the default for these controls).
func arg(params []int, i, def int) int {
	if i < len(params) && params[i] != 0 {
		return params[i]
	}
	return def
}

// csiDispatch runs CSI [private marker] params [intermediates] final.
func (t *Terminal) csiDispatch(params []int, inter []byte, final byte) {
	switch {
	case len(inter) == 0:
		t.csi(params, final)
	case len(inter) == 1 && inter[0] == '?':
		t.csiPrivate(params, final)
	case len(inter) == 1 && inter[0] == '!' && final == 'p':
		t.softReset() // DECSTR
	}
}

// csi handles sequences with neither a private marker nor intermediates.
func (t *Terminal) csi(params []int, final byte) {
	n := arg(params, 0, 1)
	switch final {
	case '@': // ICH
		t.grid()[t.cur.row].insert(t.cur.col, n)
		t.touch(t.cur.row, t.cols)
		t.cur.wrapPending = false
	case 'A': // CUU
		t.cursorUp(n)
	case 'B', 'e': // CUD, VPR
		t.cursorDown(n)
	case 'C', 'a': // CUF, HPR
		t.moveTo(t.cur.row, t.cur.col+n)
	case 'D': // CUB
		t.moveTo(t.cur.row, t.cur.col-n)
	case 'E': // CNL
		t.cursorDown(n)
		t.cur.col = 0
	case 'F': // CPL
		t.cursorUp(n)
		t.cur.col = 0
	case 'G', '`': // CHA, HPA
		t.moveTo(t.cur.row, n-1)
	case 'H', 'f': // CUP, HVP
		t.cursorPosition(n, arg(params, 1, 1))
	case 'I': // CHT
		t.tabForward(n)
	case 'J': // ED
		t.eraseDisplay(arg(params, 0, 0))
	case 'K': // EL
		t.eraseLine(arg(params, 0, 0))
	case 'L': // IL
		t.insertLines(n)
	case 'M': // DL
		t.deleteLines(n)
	case 'P': // DCH
		t.grid()[t.cur.row].delete(t.cur.col, n)
		t.cur.wrapPending = false
	case 'S': // SU
		t.scrollUp(t.top, t.bottom, n)
	case 'T': // SD; with more parameters it is xterm's mouse highlight
		if len(params) <= 1 {
			t.scrollDown(t.top, t.bottom, n)
		}
	case 'X': // ECH
		t.grid()[t.cur.row].erase(t.cur.col, t.cur.col+n)
		t.cur.wrapPending = false
	case 'Z': // CBT
		t.tabBackward(n)
	case 'b': // REP
		t.repeat(n)
	case 'd': // VPA
		t.cursorPosition(n, t.cur.col+1)
	case 'g': // TBC
		t.clearTabs(arg(params, 0, 0))
	case 'h': // SM
		t.setModes(params, true)
	case 'l': // RM
		t.setModes(params, false)
	case 'r': // DECSTBM
		t.setScrollRegion(arg(params, 0, 0), arg(params, 1, 0))
	case 's': // SCOSC (there are no left and right margins to set)
		t.saveCursor()
	case 'u': // SCORC
		t.restoreCursor()
	}
}

// csiPrivate handles CSI ? ... sequences.
func (t *Terminal) csiPrivate(params []int, final byte) {
	switch final {
	case 'h': // DECSET
		t.setPrivateModes(params, true)
	case 'l': // DECRST
		t.setPrivateModes(params, false)
	case 'J': // DECSED
		t.eraseDisplay(arg(params, 0, 0))
	case 'K': // DECSEL
		t.eraseLine(arg(params, 0, 0))
	}
}

// cursorPosition is CUP with 1-based row and column; in origin mode the row
// counts from the scroll region's top and stays inside the region.
func (t *Terminal) cursorPosition(row, col int) {
	row--
	if t.modes.origin {
		row = min(row+t.top, t.bottom)
	}
	t.moveTo(row, col-1)
}

// cursorUp is CUU: it stops at the region's top if it starts inside the
// region, at the screen's top otherwise.
func (t *Terminal) cursorUp(n int) {
	limit := 0
	if t.cur.row >= t.top {
		limit = t.top
	}
	t.moveTo(max(t.cur.row-n, limit), t.cur.col)
}

// cursorDown is CUD: it stops at the region's bottom if it starts inside
// the region, at the screen's bottom otherwise.
func (t *Terminal) cursorDown(n int) {
	limit := t.rows - 1
	if t.cur.row <= t.bottom {
		limit = t.bottom
	}
	t.moveTo(min(t.cur.row+n, limit), t.cur.col)
}
