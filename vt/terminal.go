package vt

import "strings"

// Options configure a Terminal; nil or the zero value means defaults.
type Options struct {
	// ScrollbackLines is how many lines that scrolled off the top of the
	// main screen are kept, oldest dropped first: 0 means
	// DefaultScrollbackLines, a negative value keeps none, and values
	// above MaxScrollbackLines are clamped to it.
	ScrollbackLines int
}

// Terminal turns the bytes a program writes to a terminal into text: a
// main screen with its scrollback, and an alternate screen whose content
// never reaches the transcript.
//
// A Terminal is not safe for concurrent use; its owner serialises every
// call, including Write.
type Terminal struct {
	parser parser

	rows, cols int

	// main and alt are the two grids, rows lines of cols cells each. alt
	// is nil until a program first switches to it, so a shell that never
	// runs a full-screen program pays for one grid.
	main, alt []line
	altActive bool
	// mainUsed[y] bounds what was written to main row y: every cell from
	// it on is a fresh blank (the zero cell), so pushing a row to the
	// scrollback does not rescan a wide row's blank tail, nor does blanking
	// the row that enters clear it. Every cell write raises it (touch);
	// rows that move carry it along; a row blanked whole lowers it to 0.
	// len(mainUsed) == len(main).
	mainUsed []int
	// scrollback holds lines that scrolled off the top of main while the
	// scroll region was the whole screen.
	scrollback scrollback

	cur cursor
	// saved is the DECSC slot of each screen (main, alt), as in xterm.
	saved [2]savedCursor
	// top and bottom are the scroll region (DECSTBM), inclusive rows.
	// Invariant: 0 <= top < bottom < rows, or top == bottom == 0 when
	// rows == 1.
	top, bottom int
	modes       modes
	// tabs[x] is a tab stop at column x; len(tabs) == cols.
	tabs     []bool
	charsets charsets

	title string
	// last is the last rune printed, for REP; 0 when there is none.
	last rune

	// scratch is a render buffer reused by Transcript and Screen.
	scratch []byte
}

// cursor is the active position. col is always < cols: after a rune lands
// in the last column the cursor stays there with wrapPending set, and the
// next rune wraps first (the DEC "last column flag"), so a line exactly
// cols wide is not followed by an empty one.
type cursor struct {
	row, col    int
	wrapPending bool
}

// savedCursor is what DECSC, CSI s and mode 1048/1049 save.
type savedCursor struct {
	cursor
	origin   bool
	charsets charsets
	valid    bool
}

// modes are the settable modes that change how bytes are drawn, plus two
// that say how the program wants its input. Modes that only affect input
// encoding, colours or the window (DECCKM, DECTCEM, mouse reporting...) are
// accepted and not kept.
type modes struct {
	autowrap bool // DECAWM (?7); on by default
	origin   bool // DECOM (?6): rows count from the scroll region's top
	insert   bool // IRM (4): printing shifts the rest of the line right
	newline  bool // LNM (20): LF, VT and FF also return the carriage
	// Tracked but drawing nothing: the screen is read whenever its owner
	// asks, so synchronized updates need no buffering. No accessor yet; one
	// belongs here when an owner needs to bracket pasted input.
	bracketedPaste bool // ?2004
	syncOutput     bool // ?2026
}

// New returns a terminal of rows x cols cells, each clamped to 1..MaxRows
// and 1..MaxCols, with the cursor at the top left.
func New(rows, cols int, opts *Options) *Terminal {
	t := &Terminal{}
	t.rows, t.cols = clampSize(rows, cols)
	n := DefaultScrollbackLines
	if opts != nil && opts.ScrollbackLines != 0 {
		n = min(max(opts.ScrollbackLines, 0), MaxScrollbackLines)
	}
	t.scrollback.max = n
	t.reset()
	return t
}

func clampSize(rows, cols int) (int, int) {
	return min(max(rows, 1), MaxRows), min(max(cols, 1), MaxCols)
}

// Write renders p. It implements io.Writer and never fails: every byte
// sequence means something, if only U+FFFD, so it always returns len(p),
// nil. A sequence may be split across writes at any byte.
func (t *Terminal) Write(p []byte) (int, error) {
	t.parser.parse(t, p)
	return len(p), nil
}

// Reset returns t to the state New gave it, at its current size: both
// screens, the scrollback, the title, the modes and the parser are cleared.
// (RIS, ESC c, in the byte stream resets less; see doc.go.)
func (t *Terminal) Reset() {
	t.parser.reset()
	t.scrollback.clear()
	t.title = ""
	t.reset()
}

// reset is the part of Reset that RIS does too: everything but the
// scrollback, the title and the parser (which RIS, arriving through it,
// leaves in ground anyway).
func (t *Terminal) reset() {
	t.main = newGrid(t.rows, t.cols, t.main)
	t.mainUsed = make([]int, t.rows) // newGrid's lines are blank
	t.alt = nil
	t.altActive = false
	t.cur = cursor{}
	t.saved = [2]savedCursor{}
	t.top, t.bottom = 0, t.rows-1
	t.modes = modes{autowrap: true}
	t.tabs = defaultTabs(t.tabs[:0], t.cols)
	t.charsets = charsets{}
	t.last = 0
}

// newGrid returns rows blank lines of cols cells, reusing old's lines where
// it can.
func newGrid(rows, cols int, old []line) []line {
	g := make([]line, rows)
	for i := range g {
		if i < len(old) && cap(old[i]) >= cols {
			g[i] = old[i][:cols]
			clear(g[i])
		} else {
			g[i] = make(line, cols)
		}
	}
	return g
}

// Transcript returns the main screen's text: the scrollback, then the main
// screen as it is now (as it was before the alternate screen was entered,
// if that is active). It is made of logical lines: rows that an autowrap
// continued are joined again and tabs written over blank cells come back
// as '\t'. Each line's trailing blanks are trimmed, trailing empty lines
// are dropped and lines are joined by "\n".
func (t *Terminal) Transcript() string {
	buf := t.scratch[:0]
	for i, l := range t.main {
		buf = l.appendLogical(buf, t.mainUsed[i])
		if !l.wrapped() {
			buf = append(buf, '\n')
		}
	}
	t.scratch = buf
	history := t.scrollback.text()

	// Trailing empty lines are trailing '\n's, in the screen part or, if
	// that is all empty, in the history.
	n := len(buf)
	for n > 0 && buf[n-1] == '\n' {
		n--
	}
	buf = buf[:n]
	if n == 0 {
		n = len(history)
		for n > 0 && history[n-1] == '\n' {
			n--
		}
		return string(history[:n])
	}
	var out strings.Builder
	out.Grow(len(history) + len(buf))
	out.Write(history)
	out.Write(buf)
	return out.String()
}

// DrainScrollback returns the lines that scrolled off the main screen since
// the last drain (oldest first, at most the configured ScrollbackLines,
// trailing blanks trimmed) and empties the scrollback, so that a later
// Transcript holds only the visible main screen. It lets an owner move
// finished lines into its own journal as they scroll away.
func (t *Terminal) DrainScrollback() []string {
	var lines []string
	t.scrollback.drain(func(l []byte, _ bool) { lines = append(lines, string(l)) })
	return lines
}

// DrainLines is DrainScrollback without a copy: it calls emit with each
// complete logical line that left the main screen since the last drain,
// oldest first. line aliases the terminal's buffer and is valid only during
// the call; cut says the line reached MaxLineBytes and goes on in the next
// one. A line still open (its rows wrapped off the screen, its end not
// written yet) stays for a later drain or Transcript. DrainLines returns
// how many lines were dropped unseen beyond the configured ScrollbackLines
// since the last drain.
func (t *Terminal) DrainLines(emit func(line []byte, cut bool)) (dropped int) {
	return t.scrollback.drain(emit)
}

// CursorLine is the index, among the logical lines of the main screen's
// part of Transcript (an open scrollback line counts as line 0), of the
// line holding the cursor: lines before it are complete, it and the lines
// after it may still change.
func (t *Terminal) CursorLine() int {
	n := 0
	for _, l := range t.main[:min(t.cur.row, len(t.main))] {
		if !l.wrapped() {
			n++
		}
	}
	return n
}

// ScreenRows is Screen plus, for each row, whether an autowrap continued
// it on the next row, so a caller can work on logical lines.
func (t *Terminal) ScreenRows() (rows []string, wrapped []bool) {
	rows = t.Screen()
	g := t.grid()
	wrapped = make([]bool, len(g))
	for i, l := range g {
		wrapped[i] = l.wrapped()
	}
	return rows, wrapped
}

// Screen returns the visible screen, the alternate one if it is active:
// exactly one string per row, each with trailing blanks trimmed.
func (t *Terminal) Screen() []string {
	g := t.grid()
	rows := make([]string, len(g))
	for i, l := range g {
		t.scratch = l.appendText(t.scratch[:0])
		rows[i] = string(t.scratch)
	}
	return rows
}

// AltScreenActive reports whether the alternate screen is shown (modes 47,
// 1047 and 1049), as it is while less, vi or top run.
func (t *Terminal) AltScreenActive() bool { return t.altActive }

// Cursor returns the 0-based cursor position on the visible screen.
func (t *Terminal) Cursor() (row, col int) { return t.cur.row, t.cur.col }

// Title returns the window title last set by OSC 0 or OSC 2.
func (t *Terminal) Title() string { return t.title }

// InGround reports whether the parser is between sequences, in the ground
// state of the state table. Writing CAN (0x18) always returns it there.
func (t *Terminal) InGround() bool { return t.parser.state == stateGround }

// touch notes that row of the visible screen may hold text before column
// end: the main row's bound rises to it. Every write of a cell calls it.
func (t *Terminal) touch(row, end int) {
	if !t.altActive && t.mainUsed[row] < end {
		t.mainUsed[row] = min(end, t.cols)
	}
}

// grid returns the lines of the visible screen.
func (t *Terminal) grid() []line {
	if t.altActive {
		return t.alt
	}
	return t.main
}
