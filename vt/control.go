package vt

// C0 controls and escape sequences (ECMA-48, VT100 User Guide, xterm's
// ctlseqs). Controls not listed are ignored, BEL included: there is nobody
// to ring for.

// execute runs a C0 control.
func (t *Terminal) execute(b byte) {
	switch b {
	case '\b': // BS
		if t.cur.col > 0 {
			t.cur.col--
		}
		t.cur.wrapPending = false
	case '\t': // HT
		from := t.cur.col
		t.tabForward(1)
		t.markTab(from, t.cur.col)
	case '\n', '\v', '\f': // LF, VT, FF
		t.index()
		if t.modes.newline {
			t.cur.col = 0
		}
	case '\r': // CR
		t.cur.col, t.cur.wrapPending = 0, false
	case 0x0e: // SO: G1 into GL
		t.charsets.gl = 1
	case 0x0f: // SI: G0 into GL
		t.charsets.gl = 0
	}
}

// escDispatch runs ESC [intermediates] final.
func (t *Terminal) escDispatch(inter []byte, final byte) {
	if len(inter) == 1 {
		switch inter[0] {
		case '(':
			t.charsets.designate(0, final)
		case ')':
			t.charsets.designate(1, final)
		case '#':
			if final == '8' {
				t.alignmentTest()
			}
		}
		return
	}
	if len(inter) > 0 {
		return
	}
	switch final {
	case '7': // DECSC
		t.saveCursor()
	case '8': // DECRC
		t.restoreCursor()
	case 'D': // IND
		t.index()
	case 'E': // NEL
		t.index()
		t.cur.col = 0
	case 'H': // HTS
		t.tabs[t.cur.col] = true
	case 'M': // RI
		t.reverseIndex()
	case 'c': // RIS
		t.reset()
	}
	// ESC \ (ST) ends a string the parser has already closed; ESC = and
	// ESC > select keypad modes, which only affect input.
}

// alignmentTest is DECALN: the screen full of 'E', margins reset, cursor
// home.
func (t *Terminal) alignmentTest() {
	for y, l := range t.grid() {
		for i := range l {
			l[i] = cell{r: 'E'}
		}
		t.touch(y, t.cols)
	}
	t.top, t.bottom = 0, t.rows-1
	t.modes.origin = false
	t.moveTo(0, 0)
}

// defaultTabs returns stops every eighth column, reusing tabs' array.
func defaultTabs(tabs []bool, cols int) []bool {
	tabs = append(tabs[:0], make([]bool, cols)...)
	for x := 8; x < cols; x += 8 {
		tabs[x] = true
	}
	return tabs
}

// tabForward is HT and CHT: to the n-th next stop, or the last column.
func (t *Terminal) tabForward(n int) {
	x := t.cur.col
	for ; n > 0 && x < t.cols-1; n-- {
		x++
		for x < t.cols-1 && !t.tabs[x] {
			x++
		}
	}
	t.cur.col, t.cur.wrapPending = x, false
}

// markTab remembers that a tab moved the cursor from column from to to
// over blank cells, so that text output gives the tab back. A tab over
// drawn cells only moved the cursor and leaves no trace.
func (t *Terminal) markTab(from, to int) {
	if to <= from {
		return
	}
	l := t.grid()[t.cur.row]
	for x := from; x < to; x++ {
		if !l[x].blank() || l[x].kind != cellNarrow {
			return
		}
	}
	l[from].flags |= flagTab
	for x := from + 1; x < to; x++ {
		l[x].flags |= flagTabFill
	}
	t.touch(t.cur.row, to)
}

// tabBackward is CBT: to the n-th previous stop, or the first column.
func (t *Terminal) tabBackward(n int) {
	x := t.cur.col
	for ; n > 0 && x > 0; n-- {
		x--
		for x > 0 && !t.tabs[x] {
			x--
		}
	}
	t.cur.col, t.cur.wrapPending = x, false
}

// clearTabs is TBC: 0 clears the stop at the cursor, 3 every stop.
func (t *Terminal) clearTabs(mode int) {
	switch mode {
	case 0:
		t.tabs[t.cur.col] = false
	case 3:
		clear(t.tabs)
	}
}
