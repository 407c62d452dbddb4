package vt

// Resize changes the screen size, clamped as in New. Nothing is reflowed;
// doc.go gives the policy. In short, text that no longer fits the height
// leaves the top of the main screen into the scrollback, text beyond the
// width is cut, and growing adds blanks, so the transcript of narrow enough
// output is the same before and after.
func (t *Terminal) Resize(rows, cols int) {
	rows, cols = clampSize(rows, cols)
	if rows == t.rows && cols == t.cols {
		return
	}

	// The row each grid must keep on screen: the cursor's on the visible
	// grid, the saved cursor's on the main grid behind the alternate one.
	keepMain, keepAlt := t.cur.row, -1
	if t.altActive {
		keepMain, keepAlt = -1, t.cur.row
		if t.saved[0].valid {
			keepMain = t.saved[0].row
		}
	}
	var shift int
	t.main, shift = t.resizeGrid(t.main, rows, cols, keepMain, true)
	// Rows moved, were dropped or cut: nothing is known of them any more.
	t.mainUsed = make([]int, len(t.main))
	for i := range t.mainUsed {
		t.mainUsed[i] = cols
	}
	t.saved[0].row -= shift
	if !t.altActive {
		t.cur.row -= shift
	}
	if t.alt != nil {
		t.alt, shift = t.resizeGrid(t.alt, rows, cols, keepAlt, false)
		t.saved[1].row -= shift
		if t.altActive {
			t.cur.row -= shift
		}
	}

	oldCols := t.cols
	t.rows, t.cols = rows, cols
	if cols < oldCols {
		t.tabs = t.tabs[:cols]
	} else {
		t.tabs = append(t.tabs, defaultTabs(nil, cols)[oldCols:]...)
	}
	t.top, t.bottom = 0, rows-1
	t.moveTo(t.cur.row, t.cur.col)
	for i := range t.saved {
		s := &t.saved[i]
		s.row = min(max(s.row, 0), rows-1)
		s.col = min(s.col, cols-1)
		s.wrapPending = false
	}
}

// resizeGrid returns g at the new size and how many rows left its top.
// When rows shrink, blank rows at the bottom below row keep go first, then
// rows from the top, which go to the scrollback if toScrollback is set.
func (t *Terminal) resizeGrid(g []line, rows, cols, keep int, toScrollback bool) ([]line, int) {
	shift := 0
	if excess := len(g) - rows; excess > 0 {
		dropped := 0
		for dropped < excess {
			i := len(g) - 1 - dropped
			if i <= keep || !g[i].isBlank() {
				break
			}
			dropped++
		}
		shift = excess - dropped
		if toScrollback {
			for _, l := range g[:shift] {
				t.scrollback.push(l, len(l))
			}
		}
		g = g[shift : shift+rows]
	}
	ng := make([]line, rows)
	copy(ng, g)
	for i, l := range ng {
		if l == nil {
			ng[i] = make(line, cols)
		} else {
			ng[i] = l.fit(cols)
		}
	}
	return ng, shift
}
