package vt

// setModes is SM and RM (ANSI modes). Only IRM and LNM change drawing.
func (t *Terminal) setModes(params []int, on bool) {
	for _, p := range params {
		switch p {
		case 4:
			t.modes.insert = on
		case 20:
			t.modes.newline = on
		}
	}
}

// setPrivateModes is DECSET and DECRST. Modes that only concern input,
// colours, the mouse or the cursor's looks (1, 5, 12, 25, 1000-1006...)
// are accepted and forgotten, and so is DECCOLM (3): a Terminal's width is
// its owner's to set, as in xterm without allowColumns.
func (t *Terminal) setPrivateModes(params []int, on bool) {
	for _, p := range params {
		switch p {
		case 6: // DECOM
			t.modes.origin = on
			t.home()
		case 7: // DECAWM
			t.modes.autowrap = on
			if !on {
				t.cur.wrapPending = false
			}
		case 47: // alternate screen, kept between uses
			if on {
				t.enterAlt(false)
			} else {
				t.leaveAlt(false)
			}
		case 1047: // alternate screen, cleared when left
			if on {
				t.enterAlt(false)
			} else {
				t.leaveAlt(true)
			}
		case 1048: // save or restore the cursor
			if on {
				t.saveCursor()
			} else {
				t.restoreCursor()
			}
		case 1049: // save the cursor, then a cleared alternate screen
			if on {
				if !t.altActive {
					t.saveCursor()
				}
				t.enterAlt(true)
			} else if t.altActive {
				t.leaveAlt(false)
				t.restoreCursor()
			}
		case 2004:
			t.modes.bracketedPaste = on
		case 2026:
			t.modes.syncOutput = on
		}
	}
}

// softReset is DECSTR: modes, margins, character sets and the saved cursor
// return to their defaults; the screens, the cursor position and the
// scrollback stay. Autowrap comes back on, as the terminal starts (a VT510
// would turn it off).
func (t *Terminal) softReset() {
	t.modes.insert = false
	t.modes.origin = false
	t.modes.autowrap = true
	t.top, t.bottom = 0, t.rows-1
	t.charsets = charsets{}
	t.saved[t.screenIndex()] = savedCursor{}
	t.cur.wrapPending = false
}
