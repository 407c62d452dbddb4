package vt

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkInvariants returns the first broken invariant of t, or "".
func checkInvariants(t *Terminal) string {
	if t.rows < 1 || t.rows > MaxRows || t.cols < 1 || t.cols > MaxCols {
		return fmt.Sprintf("size %dx%d outside the limits", t.rows, t.cols)
	}
	grids := map[string][]line{"main": t.main}
	if t.alt != nil {
		grids["alt"] = t.alt
	} else if t.altActive {
		return "alternate screen active but not allocated"
	}
	for name, g := range grids {
		if len(g) != t.rows {
			return fmt.Sprintf("%s has %d rows, want %d", name, len(g), t.rows)
		}
		for y, l := range g {
			if len(l) != t.cols {
				return fmt.Sprintf("%s row %d has %d cells, want %d", name, y, len(l), t.cols)
			}
			for x, c := range l {
				switch {
				case c.kind == cellWide && (x+1 >= len(l) || l[x+1].kind != cellTail):
					return fmt.Sprintf("%s row %d: wide rune at %d without its tail", name, y, x)
				case c.kind == cellTail && (x == 0 || l[x-1].kind != cellWide):
					return fmt.Sprintf("%s row %d: tail at %d without its wide rune", name, y, x)
				case c.kind == cellTail && (c.r != 0 || c.nmarks != 0):
					return fmt.Sprintf("%s row %d: tail at %d holds runes", name, y, x)
				case int(c.nmarks) > MaxCombiningMarks:
					return fmt.Sprintf("%s row %d: %d marks at %d", name, y, c.nmarks, x)
				}
			}
		}
	}
	if len(t.mainUsed) != len(t.main) {
		return fmt.Sprintf("%d row bounds for %d main rows", len(t.mainUsed), len(t.main))
	}
	for y, l := range t.main {
		used := t.mainUsed[y]
		if used < 0 || used > t.cols {
			return fmt.Sprintf("main row %d: bound %d outside 0..%d", y, used, t.cols)
		}
		for x := used; x < len(l); x++ {
			if c := l[x]; c != (cell{}) {
				return fmt.Sprintf("main row %d: cell %d is %+v, not blank, past the row's bound %d", y, x, c, used)
			}
		}
		if got, want := l.appendLogical(nil, used), l.appendLogical(nil, len(l)); !slices.Equal(got, want) {
			return fmt.Sprintf("main row %d renders %q within its bound %d, %q in full", y, got, used, want)
		}
	}
	if t.cur.row < 0 || t.cur.row >= t.rows || t.cur.col < 0 || t.cur.col >= t.cols {
		return fmt.Sprintf("cursor %+v outside %dx%d", t.cur, t.rows, t.cols)
	}
	if t.cur.wrapPending && t.cur.col != t.cols-1 {
		return fmt.Sprintf("wrap pending at column %d of %d", t.cur.col, t.cols)
	}
	if t.top < 0 || t.bottom >= t.rows || t.top > t.bottom || (t.top == t.bottom && t.rows > 1) {
		return fmt.Sprintf("scroll region %d..%d on %d rows", t.top, t.bottom, t.rows)
	}
	if len(t.tabs) != t.cols {
		return fmt.Sprintf("%d tab stops for %d columns", len(t.tabs), t.cols)
	}
	if t.scrollback.count() > t.scrollback.max {
		return fmt.Sprintf("scrollback holds %d lines, limit %d", t.scrollback.count(), t.scrollback.max)
	}
	p := &t.parser
	if p.nparams > MaxParams || p.ninter > MaxIntermediates || len(p.str) > MaxStringBytes {
		return fmt.Sprintf("parser over its limits: %d params, %d intermediates, %d string bytes", p.nparams, p.ninter, len(p.str))
	}
	if p.need > 0 && p.state != stateGround {
		return fmt.Sprintf("UTF-8 pending in state %v", p.state)
	}
	return ""
}

// displayWidth is the number of cells a rendered row takes.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

func write(t *Terminal, s string) { t.Write([]byte(s)) }

func TestNewClamps(t *testing.T) {
	tests := []struct {
		rows, cols         int
		wantRows, wantCols int
	}{
		{0, 0, 1, 1},
		{-5, -5, 1, 1},
		{24, 80, 24, 80},
		{MaxRows + 1, MaxCols + 1, MaxRows, MaxCols},
		{1 << 40, 1 << 40, MaxRows, MaxCols},
	}
	for _, tt := range tests {
		term := New(tt.rows, tt.cols, nil)
		write(term, strings.Repeat("x", 3*MaxCols))
		screen := term.Screen()
		if len(screen) != tt.wantRows {
			t.Errorf("New(%d, %d): Screen() has %d rows, want %d", tt.rows, tt.cols, len(screen), tt.wantRows)
		}
		if got := len(screen[0]); got != tt.wantCols {
			t.Errorf("New(%d, %d): first row is %d wide, want %d", tt.rows, tt.cols, got, tt.wantCols)
		}
		term.Resize(tt.rows, tt.cols)
		if got := len(term.Screen()); got != tt.wantRows {
			t.Errorf("Resize(%d, %d): Screen() has %d rows, want %d", tt.rows, tt.cols, got, tt.wantRows)
		}
	}
}

func TestScrollbackOption(t *testing.T) {
	tests := []struct {
		opts *Options
		want int // lines kept
	}{
		{nil, DefaultScrollbackLines},
		{&Options{}, DefaultScrollbackLines},
		{&Options{ScrollbackLines: 3}, 3},
		{&Options{ScrollbackLines: -1}, 0},
		{&Options{ScrollbackLines: MaxScrollbackLines + 5}, MaxScrollbackLines},
	}
	for _, tt := range tests {
		term := New(2, 10, tt.opts)
		var b strings.Builder
		for i := range tt.want + 50 {
			fmt.Fprintf(&b, "%d\r\n", i)
		}
		write(term, b.String())
		lines := strings.Split(term.Transcript(), "\n")
		// The kept history, then the last number on screen (the row
		// below it is empty and dropped).
		if got := len(lines); got != tt.want+1 {
			t.Errorf("New(2, 10, %+v): Transcript() has %d lines, want %d", tt.opts, got, tt.want+1)
		}
		if got, want := lines[len(lines)-1], fmt.Sprint(tt.want+49); got != want {
			t.Errorf("New(2, 10, %+v): last transcript line = %q, want %q", tt.opts, got, want)
		}
	}
}

func TestWriteNeverFails(t *testing.T) {
	term := New(3, 4, nil)
	for _, in := range []string{"", "x", "\x1b[", "\xff\xfe", strings.Repeat("\x1b]", 3000)} {
		n, err := term.Write([]byte(in))
		if n != len(in) || err != nil {
			t.Errorf("Write(%q) = %d, %v, want %d, nil", in, n, err, len(in))
		}
	}
}

func TestCANReturnsToGround(t *testing.T) {
	for s, in := range stateEntries {
		term := New(2, 10, nil)
		write(term, in)
		if got, want := term.InGround(), state(s) == stateGround; got != want {
			t.Errorf("InGround() after %q = %v, want %v", in, got, want)
		}
		write(term, "\x18")
		if !term.InGround() {
			t.Errorf("InGround() after %q CAN = false, want true", in)
		}
	}
}

func TestReset(t *testing.T) {
	term := New(3, 10, &Options{ScrollbackLines: 5})
	write(term, "a\r\nb\r\nc\r\nd\x1b]2;title\a\x1b[?2004h\x1b[?7l\x1b[2;3r\x1b[?1049hALT\x1b(0\x1b[")
	term.Reset()
	if got := term.Transcript(); got != "" {
		t.Errorf("Transcript() after Reset = %q, want empty", got)
	}
	if got := term.Title(); got != "" {
		t.Errorf("Title() after Reset = %q, want empty", got)
	}
	if term.AltScreenActive() {
		t.Errorf("AltScreenActive() after Reset = true")
	}
	if row, col := term.Cursor(); row != 0 || col != 0 {
		t.Errorf("Cursor() after Reset = %d, %d, want 0, 0", row, col)
	}
	if !term.InGround() {
		t.Errorf("InGround() after Reset = false")
	}
	// Modes, margins and character sets are back to their defaults, and
	// the unfinished CSI is gone: "m" prints.
	write(term, "m123456789wrapped\r\n1\r\n2\r\n3")
	// Autowrap is back on: the row wraps, and the transcript joins it.
	want := []string{"m123456789wrapped", "1", "2", "3"}
	if got := strings.Split(term.Transcript(), "\n"); !slices.Equal(got, want) {
		t.Errorf("Transcript() after Reset and writing = %q, want %q", got, want)
	}
	if term.modes.bracketedPaste {
		t.Errorf("bracketed paste still set after Reset")
	}
}

func TestDrainScrollback(t *testing.T) {
	term := New(2, 10, &Options{ScrollbackLines: 3})
	if got := term.DrainScrollback(); got != nil {
		t.Errorf("DrainScrollback() on a new terminal = %q, want nil", got)
	}
	write(term, "1\r\n2  \r\n\r\n4\r\n5\r\n6")
	// Pushed: 1, 2, "", 4; the limit keeps the last three.
	if got, want := term.DrainScrollback(), []string{"2", "", "4"}; !slices.Equal(got, want) {
		t.Errorf("DrainScrollback() = %q, want %q", got, want)
	}
	if got, want := term.Transcript(), "5\n6"; got != want {
		t.Errorf("Transcript() after DrainScrollback = %q, want %q", got, want)
	}
	write(term, "\r\n7 \r\n")
	if got, want := term.DrainScrollback(), []string{"5", "6"}; !slices.Equal(got, want) {
		t.Errorf("second DrainScrollback() = %q, want %q", got, want)
	}
	if got := term.DrainScrollback(); got != nil {
		t.Errorf("DrainScrollback() with nothing new = %q, want nil", got)
	}
}

func TestModesTracked(t *testing.T) {
	tests := []struct {
		in          string
		paste, sync bool
	}{
		{"", false, false},
		{"\x1b[?2004h", true, false},
		{"\x1b[?2026h", false, true},
		{"\x1b[?2004;2026h", true, true},
		{"\x1b[?2004;2026h\x1b[?2004l", false, true},
		{"\x1b[2004h", false, false}, // ANSI, not DEC private
	}
	for _, tt := range tests {
		term := New(2, 10, nil)
		write(term, tt.in+"x")
		if term.modes.bracketedPaste != tt.paste || term.modes.syncOutput != tt.sync {
			t.Errorf("after %q: bracketed paste %v, synchronized output %v, want %v, %v",
				tt.in, term.modes.bracketedPaste, term.modes.syncOutput, tt.paste, tt.sync)
		}
		if got := term.Screen()[0]; got != "x" {
			t.Errorf("after %q: Screen()[0] = %q, want %q", tt.in, got, "x")
		}
	}
}

// TestIgnored checks that sequences a Terminal accepts and ignores draw
// nothing and move nothing.
func TestIgnored(t *testing.T) {
	ignored := []string{
		"\x1b[c", "\x1b[>c", "\x1b[5n", "\x1b[6n", "\x1b[?25l", "\x1b[?25h",
		"\x1b[?1h\x1b=", "\x1b[?1000h\x1b[?1006h", "\x1b[?3h", "\x1b[?5h",
		"\x1b[2 q", "\x1b[>4;1m", "\x1b[22;0;0t", "\x1b[1;2;3;4;5T",
		"\x1b]10;?\a", "\x1b]52;c;aGVsbG8=\a", "\x1b]7;file://host/tmp\a",
		"\x1b]133;A\a", "\x1bP$qm\x1b\\", "\x1bP+q544e\x1b\\", "\x1b_Gi=1\x1b\\",
		"\x1b[?2026$p", "\x1b[0%m", "\x1b>", "\x1bN", "\x1b*0", "\x1b%G", "\a",
		"\x1b[?1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18;19;20;21;22;23;24;25;26;27;28;29;30;31;32;33;34u",
	}
	for _, in := range ignored {
		term := New(3, 10, nil)
		write(term, "ab\x1b[2;3H")
		write(term, in)
		write(term, "c")
		if got, want := term.Screen(), []string{"ab", "  c", ""}; !slices.Equal(got, want) {
			t.Errorf("Screen() with %q = %q, want %q", in, got, want)
		}
		if msg := checkInvariants(term); msg != "" {
			t.Errorf("after %q: %s", in, msg)
		}
	}
}

// TestResizeKeepsTranscript checks the resize policy's promise: lines that
// fit both widths are in the transcript, in order, whatever the heights.
func TestResizeKeepsTranscript(t *testing.T) {
	sizes := [][2]int{{10, 20}, {3, 20}, {1, 12}, {7, 40}, {2, 8}, {20, 8}, {1, 3}}
	for _, from := range sizes {
		for _, to := range sizes {
			term := New(from[0], from[1], nil)
			var want []string
			for i := range 12 {
				want = append(want, fmt.Sprint("l", i))
			}
			write(term, strings.Join(want, "\r\n"))
			term.Resize(to[0], to[1])
			if got := term.Transcript(); got != strings.Join(want, "\n") {
				t.Errorf("Resize(%d, %d) after New(%d, %d): Transcript() = %q, want %q", to[0], to[1], from[0], from[1], got, strings.Join(want, "\n"))
			}
			if msg := checkInvariants(term); msg != "" {
				t.Errorf("Resize(%d, %d) after New(%d, %d): %s", to[0], to[1], from[0], from[1], msg)
			}
		}
	}
}

func TestScreenRowsValidUTF8(t *testing.T) {
	term := New(2, 5, nil)
	write(term, "\xff\xc3\x28日\xe6\x97")
	for i, row := range term.Screen() {
		if !utf8.ValidString(row) {
			t.Errorf("Screen()[%d] = %q is not valid UTF-8", i, row)
		}
	}
}

func TestTranscriptTrims(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", ""},
		{"   ", ""},
		{"a   \r\n\r\n   \r\n", "a"},
		{"\r\n\r\n  x", "\n\n  x"},
		{"a\x1b[5Cb", "a     b"},
		{"x\r\n\r\n\r\n\r\n\r\n\r\n", "x"}, // into the scrollback, then blank rows
		{"x\r\n \r\n\r\n\r\n\r\n\r\ny", "x\n\n\n\n\n\ny"}, // blank scrollback lines in the middle stay
	}
	for _, tt := range tests {
		term := New(3, 10, nil)
		write(term, tt.in)
		if got := term.Transcript(); got != tt.want {
			t.Errorf("Transcript() after %q = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDECALN(t *testing.T) {
	term := New(2, 3, nil)
	write(term, "\x1b[2;2r\x1b#8")
	if got, want := term.Screen(), []string{"EEE", "EEE"}; !slices.Equal(got, want) {
		t.Errorf("Screen() after DECALN = %q, want %q", got, want)
	}
	if term.top != 0 || term.bottom != 1 {
		t.Errorf("scroll region after DECALN = %d..%d, want 0..1", term.top, term.bottom)
	}
}

func TestSoftReset(t *testing.T) {
	term := New(3, 5, nil)
	write(term, "\x1b[?7l\x1b[4h\x1b[2;3r\x1b[?6h\x1b(0\x1b[!p\x1b[3;1Hqwertyz")
	// After DECSTR: autowrap on, insert off, ASCII, margins reset (so the
	// wrap on the last row scrolls the whole screen).
	if got, want := term.Screen(), []string{"", "qwert", "yz"}; !slices.Equal(got, want) {
		t.Errorf("Screen() after DECSTR = %q, want %q", got, want)
	}
	if row, col := term.Cursor(); row != 2 || col != 2 {
		t.Errorf("Cursor() after DECSTR and a wrap = %d, %d, want 2, 2", row, col)
	}
}
