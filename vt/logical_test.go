package vt

import (
	"strings"
	"testing"
)

// Text output gives back logical lines: rows an autowrap continued are
// joined, tabs come back as tabs, and a line without end is cut at
// MaxLineBytes with the cut said.
func TestLogicalLines(t *testing.T) {
	term := New(4, 20, &Options{ScrollbackLines: MaxScrollbackLines})
	write(term, "\tX\tY\r\n")
	long := strings.Repeat("0123456789", 7) + "abc" // 73 runes: 8 rows
	write(term, long+"\r\n")
	write(term, "a    b\r\n") // spaces stay spaces
	var got []string
	term.DrainLines(func(l []byte, cut bool) {
		if cut {
			t.Errorf("line %q reported cut", l)
		}
		got = append(got, string(l))
	})
	got = append(got, strings.Split(term.Transcript(), "\n")...)
	want := []string{"\tX\tY", long, "a    b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", got, want)
	}
	// The screen keeps one row per row, tabs as spaces.
	if rows := term.Screen(); strings.Contains(strings.Join(rows, ""), "\t") {
		t.Errorf("Screen() has a tab: %q", rows)
	}
}

func TestLogicalLineOpenAndCursor(t *testing.T) {
	term := New(3, 10, &Options{ScrollbackLines: MaxScrollbackLines})
	write(term, "done\r\n"+strings.Repeat("x", 45)) // open line, 5 rows
	var got []string
	term.DrainLines(func(l []byte, _ bool) { got = append(got, string(l)) })
	if len(got) != 1 || got[0] != "done" {
		t.Fatalf("drained %q, want only the complete line", got)
	}
	if tr := term.Transcript(); tr != strings.Repeat("x", 45) {
		t.Errorf("Transcript() = %q, want the open line whole", tr)
	}
	if n := term.CursorLine(); n != 0 {
		t.Errorf("CursorLine() = %d, want 0", n)
	}
	rows, wrapped := term.ScreenRows()
	if len(rows) != 3 || !wrapped[0] || !wrapped[1] || wrapped[2] {
		t.Errorf("ScreenRows() = %q, %v", rows, wrapped)
	}
}

func TestLogicalLineBound(t *testing.T) {
	term := New(2, 100, &Options{ScrollbackLines: MaxScrollbackLines})
	chunk := strings.Repeat("y", 64<<10)
	total, cuts, n := 0, 0, 0
	drain := func() {
		term.DrainLines(func(l []byte, cut bool) {
			if len(l) == 0 {
				return
			}
			total += len(l)
			n++
			if cut {
				cuts++
			}
			if len(l) > MaxLineBytes+100 {
				t.Fatalf("a drained line of %d bytes", len(l))
			}
		})
	}
	for range 40 { // 2.5 MiB on one line
		write(term, chunk)
		drain()
	}
	write(term, "\r\n\r\n\r\n")
	drain()
	if total != 40*len(chunk) || cuts != 2 || n != 3 {
		t.Errorf("drained %d bytes in %d lines with %d cuts, want %d in 3 with 2", total, n, cuts, 40*len(chunk))
	}
}
